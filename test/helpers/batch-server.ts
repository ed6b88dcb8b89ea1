// A fake of the OpenAI Batch API for tests, on 127.0.0.1 and a free port: POST /v1/files
// (multipart upload, purpose "batch"), POST /v1/batches, GET /v1/batches/:id, GET
// /v1/files/:id/content. A batch stays `in_progress` while the server holds batches (`hold`),
// until the test calls release(); then it ends as scripted (completed, failed, expired) and its
// output file answers each line with `reply` (a chat completion), or an error for the lines
// `errorFor` names. It counts batch creations and records every upload, so a test can tell that a
// resumed run submitted no second batch.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import type { ChatRequestBody } from './openai-server.js';

type Outcome = 'completed' | 'failed' | 'expired';

export interface BatchServerOptions {
  /** The reply to one line of a batch (its request body and custom_id). */
  reply: (body: ChatRequestBody, customId: string) => string;
  /** Batches stay in_progress until release() (default false: they complete at the first poll). */
  hold?: boolean;
  /** How a batch ends (default completed), or how the n-th batch created (from 0) does. */
  outcome?: Outcome | ((n: number) => Outcome);
  /** Lines answered with an error instead of a reply (`at`: the line's place in its file, from 0). */
  errorFor?: (customId: string, at: number) => boolean;
  /** The output file as served, made from the one written (duplicated lines, garbage, ...). */
  rewriteOutput?: (output: string) => string;
  /**
   * Lines served before the output file's own, made as they are sent (never held whole): `lines`
   * of `lineBytes` bytes each, results of requests no batch asked (a very large file).
   */
  padOutput?: { lines: number; lineBytes: number };
}

export interface BatchLine {
  custom_id: string;
  method: string;
  url: string;
  body: ChatRequestBody;
}

export interface FakeBatchServer {
  url: string; // base URL, ending in /v1
  /** Batches created, in order. */
  created: Array<{ id: string; inputFileId: string; endpoint: string; window: string; metadata: unknown }>;
  /** The lines of every uploaded file, by file id. */
  uploads: Map<string, BatchLine[]>;
  /** GET /v1/batches/:id requests answered. */
  polls: number;
  /** Let held batches end (as `outcome` says) at their next poll. */
  release(): void;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

/** The parts of a multipart/form-data body, by field name. */
function multipart(body: Buffer, contentType: string): Map<string, string> {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  const out = new Map<string, string>();
  if (!boundary) return out;
  const sep = `--${boundary[1] ?? boundary[2]}`;
  for (const part of body.toString('utf8').split(sep)) {
    const head = part.indexOf('\r\n\r\n');
    if (head === -1) continue;
    const name = /name="([^"]+)"/.exec(part.slice(0, head))?.[1];
    if (name) out.set(name, part.slice(head + 4).replace(/\r\n$/, ''));
  }
  return out;
}

interface Batch {
  id: string;
  input_file_id: string;
  status: string;
  output_file_id?: string;
  error_file_id?: string;
  errors?: unknown;
}

export async function startBatchServer(options: BatchServerOptions): Promise<FakeBatchServer> {
  const files = new Map<string, string>();
  const batches = new Map<string, Batch>();
  let held = options.hold === true;
  let n = 0;
  const sockets = new Set<Socket>();
  const state: FakeBatchServer = {
    url: '',
    created: [],
    uploads: new Map(),
    polls: 0,
    release: () => void (held = false),
    close: () =>
      new Promise((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };

  /** A held batch ends (at a poll after release): its output and error files are written. */
  const finish = (b: Batch) => {
    const lines = state.uploads.get(b.input_file_id) ?? [];
    const n0 = state.created.findIndex((c) => c.id === b.id);
    const outcome = typeof options.outcome === 'function' ? options.outcome(n0) : (options.outcome ?? 'completed');
    if (outcome === 'failed') {
      b.status = 'failed';
      b.errors = { object: 'list', data: [{ code: 'invalid_request', line: 1, message: 'the model is not available for batches' }] };
      return;
    }
    let output = '';
    let errors = '';
    // an expired batch finished the first half of its lines only
    const done = outcome === 'expired' ? lines.slice(0, Math.floor(lines.length / 2)) : lines;
    for (const [at, line] of done.entries()) {
      if (options.errorFor?.(line.custom_id, at)) {
        errors += `${JSON.stringify({ id: `req-${++n}`, custom_id: line.custom_id, response: { status_code: 400, body: { error: { message: 'the request was refused by the test', type: 'invalid_request_error' } } }, error: null })}\n`;
        continue;
      }
      const content = options.reply(line.body, line.custom_id);
      const completion = {
        id: `chatcmpl-${++n}`,
        object: 'chat.completion',
        model: line.body.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 },
      };
      output += `${JSON.stringify({ id: `req-${n}`, custom_id: line.custom_id, response: { status_code: 200, request_id: `r${n}`, body: completion }, error: null })}\n`;
    }
    if (outcome === 'expired')
      for (const line of lines.slice(done.length))
        errors += `${JSON.stringify({ id: `req-${++n}`, custom_id: line.custom_id, response: null, error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' } })}\n`;
    if (output) files.set((b.output_file_id = `file-out-${b.id}`), options.rewriteOutput ? options.rewriteOutput(output) : output);
    if (errors) files.set((b.error_file_id = `file-err-${b.id}`), errors);
    b.status = outcome;
  };

  const server = createServer(async (req, res) => {
    const body = await readBody(req);
    const url = req.url ?? '';
    if (req.method === 'POST' && url === '/v1/files') {
      const parts = multipart(body, req.headers['content-type'] ?? '');
      const text = parts.get('file');
      if (parts.get('purpose') !== 'batch' || text === undefined) return json(res, 400, { error: { message: 'a batch file upload' } });
      const id = `file-in-${++n}`;
      files.set(id, text);
      state.uploads.set(
        id,
        text
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as BatchLine),
      );
      return json(res, 200, { id, object: 'file', bytes: text.length, created_at: 0, filename: 'batch.jsonl', purpose: 'batch' });
    }
    if (req.method === 'POST' && url === '/v1/batches') {
      const b = JSON.parse(body.toString('utf8')) as {
        input_file_id: string;
        endpoint: string;
        completion_window: string;
        metadata?: unknown;
      };
      if (!files.has(b.input_file_id)) return json(res, 404, { error: { message: `no file ${b.input_file_id}` } });
      const id = `batch_${++n}`;
      state.created.push({ id, inputFileId: b.input_file_id, endpoint: b.endpoint, window: b.completion_window, metadata: b.metadata });
      batches.set(id, { id, input_file_id: b.input_file_id, status: 'validating' });
      return json(res, 200, batchBody(batches.get(id)!, 0));
    }
    const poll = /^\/v1\/batches\/([^/]+)$/.exec(url);
    if (req.method === 'GET' && poll) {
      const b = batches.get(poll[1]!);
      if (!b) return json(res, 404, { error: { message: 'no such batch' } });
      state.polls++;
      if (b.status === 'validating') b.status = 'in_progress';
      else if (b.status === 'in_progress' && !held) finish(b);
      const total = state.uploads.get(b.input_file_id)?.length ?? 0;
      return json(res, 200, batchBody(b, total));
    }
    const content = /^\/v1\/files\/([^/]+)\/content$/.exec(url);
    if (req.method === 'GET' && content) {
      const text = files.get(content[1]!);
      if (text === undefined) return json(res, 404, { error: { message: 'no such file' } });
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const pad = options.padOutput;
      if (!pad || !content[1]!.startsWith('file-out-')) return res.end(text);
      // a padding line: a result of a request no batch asked, its text filling the line
      const head = JSON.stringify({ custom_id: 'not-asked', response: { status_code: 200, body: { pad: '' } } });
      const line = Buffer.from(`${head.slice(0, -4)}${'x'.repeat(Math.max(0, pad.lineBytes - head.length - 1))}"}}}\n`);
      let sent = 0;
      const more = () => {
        while (sent < pad.lines) {
          sent++;
          if (!res.write(line)) return void res.once('drain', more);
        }
        res.end(text);
      };
      res.on('close', () => (sent = pad.lines + 1)); // the client went: nothing more is made
      return more();
    }
    json(res, 404, { error: { message: `not here: ${req.method} ${url}` } });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return state;
}

function batchBody(b: Batch, total: number) {
  const over = ['completed', 'failed', 'expired'].includes(b.status);
  return {
    id: b.id,
    object: 'batch',
    endpoint: '/v1/chat/completions',
    input_file_id: b.input_file_id,
    completion_window: '24h',
    status: b.status,
    created_at: 0,
    output_file_id: b.output_file_id ?? null,
    error_file_id: b.error_file_id ?? null,
    errors: b.errors ?? null,
    request_counts: { total, completed: over && b.status === 'completed' ? total : 0, failed: 0 },
  };
}
