// The fetch the openai client uses: it watches the body of every answer. The client's own
// timeout covers the wait for the answer's headers; after them, no byte for `idleMs` ends the
// attempt (a stalled stream or a body that stops mid-way), and a non-streamed answer must be
// whole within `idleMs` of the request. A body larger than the cap is cut off. Both fail the
// body with an error the provider classifies (stalled: retried; too large: refused).
import { ReplyFaultError, ReplyTooLargeError, seconds } from './reply-errors.js';

export interface WatchOptions {
  /** The --timeout of one attempt. */
  idleMs: number;
  /** Cap on the text of one reply; the raw body may be a few times larger (JSON escapes, SSE framing). */
  maxReplyBytes: number;
  /** The server, for messages. */
  endpoint: string;
  fetch?: typeof fetch;
}

/** Raw bytes allowed for a reply of `maxReplyBytes` of text: JSON escapes at most 6 bytes per byte. */
export function rawBodyCap(maxReplyBytes: number, stream: boolean): number {
  // A stream frames every few characters in an SSE event of ~200 bytes: the cap there is only
  // a guard against a server that never stops; the text itself is counted by the provider.
  return stream ? 64 * maxReplyBytes + (1 << 20) : 6 * maxReplyBytes + (64 << 10);
}

function isStreamRequest(body: unknown): boolean {
  if (typeof body !== 'string') return true;
  try {
    return (JSON.parse(body) as { stream?: unknown }).stream === true;
  } catch {
    return true;
  }
}

export function watchedFetch(o: WatchOptions): typeof fetch {
  const inner = o.fetch ?? globalThis.fetch;
  return async (input, init = {}) => {
    const started = Date.now();
    const stream = isStreamRequest(init.body);
    const ctrl = new AbortController();
    const outer = init.signal ?? undefined;
    let idle: ReturnType<typeof setTimeout> | undefined;
    let deadline: ReturnType<typeof setTimeout> | undefined;
    let body: TransformStreamDefaultController<Uint8Array> | undefined;
    let ended = false;
    const end = () => {
      ended = true;
      clearTimeout(idle);
      clearTimeout(deadline);
      outer?.removeEventListener('abort', onOuterAbort);
    };
    // The caller gave up (Ctrl-C): the body ends with the abort, as fetch's own would.
    const onOuterAbort = () => {
      end();
      ctrl.abort(outer?.reason);
    };
    if (outer?.aborted) ctrl.abort(outer.reason);
    else outer?.addEventListener('abort', onOuterAbort, { once: true });
    const res = await inner(input, { ...init, signal: ctrl.signal }).catch((err: unknown) => {
      end();
      throw err;
    });
    if (!res.body) {
      end();
      return res;
    }

    const fail = (err: Error) => {
      if (ended) return;
      end();
      body?.error(err);
      ctrl.abort(err); // frees the socket
    };
    const stalled = () =>
      fail(
        new ReplyFaultError(
          'stalled',
          `${o.endpoint} sent nothing for ${seconds(o.idleMs)} in the middle of its answer (--timeout ${seconds(o.idleMs)})`,
        ),
      );
    const arm = () => {
      clearTimeout(idle);
      idle = setTimeout(stalled, o.idleMs);
    };
    const cap = rawBodyCap(o.maxReplyBytes, stream);
    let bytes = 0;
    const watched = res.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        start(c) {
          body = c;
          arm();
          if (!stream) {
            const left = Math.max(0, o.idleMs - (Date.now() - started));
            deadline = setTimeout(
              () =>
                fail(
                  new ReplyFaultError(
                    'stalled',
                    `${o.endpoint} did not send its whole answer within ${seconds(o.idleMs)} (--timeout ${seconds(o.idleMs)})`,
                  ),
                ),
              left,
            );
          }
        },
        transform(chunk, c) {
          if (ended) return;
          bytes += chunk.byteLength;
          if (bytes > cap) {
            fail(new ReplyTooLargeError(o.endpoint, o.maxReplyBytes));
            return;
          }
          arm();
          c.enqueue(chunk);
        },
        flush() {
          end();
        },
      }),
    );
    // The pipe's own rejection (the source aborted after `fail`) is already reported by the body.
    return new Response(watched, { status: res.status, statusText: res.statusText, headers: res.headers });
  };
}
