// Waiting for a batch: polls about a second apart at first, then further apart (x1.5 each time)
// up to a cap, since a batch takes minutes to hours; a run's abort ends the wait at once.

/** The first wait between two polls (or less, when the cap is lower). */
export const FIRST_POLL_MS = 1000;
/** The longest wait between two polls, unless --batch-poll says otherwise. */
export const DEFAULT_POLL_CAP_MS = 60_000;

/** The waits between polls: from FIRST_POLL_MS growing by half each time to `capMs`. */
export function* pollDelays(capMs: number = DEFAULT_POLL_CAP_MS): Generator<number, never> {
  let ms = Math.min(FIRST_POLL_MS, capMs);
  for (;;) {
    yield ms;
    ms = Math.min(capMs, Math.round(ms * 1.5));
  }
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason as Error);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason as Error);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * `fn` given a signal of its own that aborts with `signal`; the link is undone when `fn` is over.
 * A client that adds an abort listener to each request's signal and never removes it (the openai
 * SDK does) then adds it to a signal that goes with the request, not to the run's, which a wait
 * of 24 hours would fill with thousands (MaxListenersExceededWarning).
 */
export async function withOwnSignal<T>(signal: AbortSignal | undefined, fn: (signal?: AbortSignal) => Promise<T>): Promise<T> {
  if (!signal) return fn(undefined);
  signal.throwIfAborted();
  const own = new AbortController();
  const onAbort = () => own.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await fn(own.signal);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
