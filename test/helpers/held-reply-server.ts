// An OpenAI-compatible chat server on 127.0.0.1 whose replies are a pure function of the request
// (so an interrupted and resumed run gets the replies an uninterrupted one got), and which can
// hold one request unanswered until the test releases it. A test that must act while a run is
// in progress waits for `held` (the run is then blocked in that LLM call) instead of a delay.
import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface HeldReplyServer {
  url: string;
  /** Chat requests received so far. */
  readonly count: number;
  /** Resolves when the request to hold arrives (its 0-based index among chat requests). */
  held: Promise<void>;
  /** Answer the held request (and stop holding). */
  release(): void;
  close(): Promise<void>;
}

/** A short deterministic reply: a few words picked by a hash of the request's messages. */
export function replyOf(messages: unknown): string {
  const words = 'bread square council noise morning oven flour market rent smoke crowd vote'.split(' ');
  const h = createHash('sha256').update(JSON.stringify(messages)).digest();
  return Array.from({ length: 4 + (h[0]! % 6) }, (_, i) => words[h[i + 1]! % words.length]).join(' ') + '.';
}

export async function startHeldReplyServer(holdAt?: number): Promise<HeldReplyServer> {
  let count = 0;
  let arrived!: () => void;
  const held = new Promise<void>((r) => {
    arrived = r;
  });
  let release!: () => void;
  const released = new Promise<void>((r) => {
    release = r;
  });
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      if (!req.url?.endsWith('/chat/completions')) {
        send(res, 404, { error: { message: 'no route' } });
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; messages: unknown; stream?: boolean };
      const index = count++;
      if (index === holdAt) {
        arrived();
        await released;
      }
      if (res.destroyed) return;
      const content = replyOf(body.messages);
      const usage = { prompt_tokens: JSON.stringify(body.messages).length >> 2, completion_tokens: content.length >> 2, total_tokens: 0 };
      const base = { id: `chatcmpl-held-${index}`, created: 0, model: body.model };
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content }, finish_reason: null }] })}\n\n`,
        );
        res.write(
          `data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}\n\n`,
        );
        res.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices: [], usage })}\n\n`);
        res.end('data: [DONE]\n\n');
        return;
      }
      send(res, 200, {
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage,
      });
    });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    get count() {
      return count;
    },
    held,
    release,
    close: () =>
      new Promise<void>((r) => {
        release();
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
