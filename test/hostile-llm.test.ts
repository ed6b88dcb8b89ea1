// A hostile LLM server: answers that stall after one chunk, streams torn off before their end,
// malformed or empty 200 answers, a plain JSON answer to a streamed request, replies cut at
// max tokens or too large to keep, Ctrl-C while the server says nothing, and secrets in replies
// recorded to a cassette. The real `openai` client talks to an OpenAI-compatible server on
// 127.0.0.1 (test/helpers/openai-server.ts); the CLI runs as a child process.
import { type ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunFolder } from '../src/features/journal/run-folder.js';
import { readJournal } from '../src/features/journal/reader.js';
import { loadRunRecord } from '../src/features/journal/record.js';
import { isResumableError } from '../src/features/journal/snapshot.js';
import { SHARED_TEXT_MIN } from '../src/features/journal/shared-text.js';
import { InterruptibleProvider, LlmInterruptedError } from '../src/core/llm/interruptible.js';
import { OpenAiProvider, type OpenAiProviderOptions } from '../src/core/llm/openai.js';
import { ReplyTooLargeError } from '../src/core/llm/reply-errors.js';
import { RetryBudget } from '../src/core/llm/retry.js';
import { LlmError, LlmUnavailableError, type ChatRequest } from '../src/core/llm/types.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { validateSopDocument } from '../src/format/sop/sop-file.js';
import { startOpenAiServer, type ChatRequestBody, type Fault, type ServerOptions, type TestServer } from './helpers/openai-server.js';
import { spawnCli, requireBuiltCli } from './helpers/cli.js';
import { scaled } from './helpers/time.js';

const ROOT = join(import.meta.dirname, '..');
const DEBATE = join(ROOT, 'examples', 'debate', 'debate.sop.json');

const counts = { modes: 0, recovered: 0, refused: 0, tornRecorded: 0, leaks: 0, journalRatio: 0 };
let dir: string;
const servers: TestServer[] = [];

beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-hostile-llm-'));
});
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `hostile llm: ${counts.modes} fault modes, ${counts.recovered} retried and recovered, ${counts.refused} refused with a clear message, ` +
      `${counts.tornRecorded} torn replies recorded, ${counts.leaks} secrets in cassettes, journal ${counts.journalRatio.toFixed(2)}x the reply text`,
  );
});

async function serve(o: ServerOptions): Promise<TestServer> {
  const s = await startOpenAiServer(o);
  servers.push(s);
  return s;
}

const request = (stream: boolean): ChatRequest => ({
  messages: [{ role: 'user', content: 'Say something' }],
  model: 'm',
  stream,
  meta: { purpose: 'agent', state: 'opening', agent: 'Ann', turn: 3 },
});

// The calls' timeout: long enough that an answer the server gives at once is never cut on a loaded
// machine (two suites side by side on 2 cores delay a first chunk by over a second); a stalled
// attempt waits it out.
const TIMEOUT_MS = scaled(2500);
const TIMEOUT_S = String(TIMEOUT_MS / 1000).replace('.', '\\.');

function provider(s: TestServer, over: Partial<OpenAiProviderOptions> = {}) {
  const retries: string[] = [];
  const warnings: string[] = [];
  const p = new OpenAiProvider({
    apiKey: 'test-key',
    baseURL: s.url,
    timeoutMs: TIMEOUT_MS,
    retry: { maxRetries: 3, baseDelayMs: 1, maxDelayMs: 5 },
    onRetry: (r) => retries.push(r.reason),
    onWarning: (w) => warnings.push(w),
    ...over,
  });
  return { p, retries, warnings };
}

const FULL = 'The whole reply, as the server meant it to be read.';
const PARTIAL = 'TORN-PARTIAL-4c1d';

// Each fault on the first attempt only; the second attempt answers FULL.
const firstAttemptFaults: Array<{ name: string; stream: boolean; fault: Fault; reason: RegExp }> = [
  {
    name: 'stream stalls after one chunk',
    stream: true,
    fault: { kind: 'stall', text: PARTIAL },
    reason: new RegExp(`sent nothing for ${TIMEOUT_S} s in the middle of its answer \\(--timeout ${TIMEOUT_S} s\\)`),
  },
  {
    name: 'JSON body stalls half-way',
    stream: false,
    fault: { kind: 'stall' },
    reason: new RegExp(`did not send its whole answer within ${TIMEOUT_S} s \\(--timeout ${TIMEOUT_S} s\\)`),
  },
  {
    name: 'stream ends before finish_reason',
    stream: true,
    fault: { kind: 'tear', text: PARTIAL },
    reason: /ended before the reply was complete.*partial text is discarded/,
  },
  {
    name: 'stream connection reset mid-way',
    stream: true,
    fault: { kind: 'tear', text: PARTIAL, reset: true },
    reason: /broke in the middle of the answer/,
  },
  { name: 'JSON body torn half-way', stream: false, fault: { kind: 'tear' }, reason: /malformed JSON/ },
  { name: 'JSON body connection reset', stream: false, fault: { kind: 'tear', reset: true }, reason: /broke in the middle of the answer/ },
  {
    name: '200 with bad JSON',
    stream: false,
    fault: { kind: 'body', body: '{"choices": [' },
    reason: /malformed JSON \(.*end of JSON input/,
  },
  { name: '200 with an empty body', stream: false, fault: { kind: 'body', body: '' }, reason: /malformed JSON/ },
  { name: '200 without choices', stream: false, fault: { kind: 'body', body: '{"id":"x"}' }, reason: /JSON without "choices"/ },
  { name: '200 with empty choices', stream: false, fault: { kind: 'body', body: '{"choices":[]}' }, reason: /without a message/ },
  {
    name: '200 with an error object',
    stream: false,
    fault: { kind: 'body', body: '{"error":{"message":"overloaded"}}' },
    reason: /an error: overloaded/,
  },
  {
    name: '200 with HTML',
    stream: false,
    fault: { kind: 'body', body: '<html>busy</html>', contentType: 'text/html' },
    reason: /text that is not JSON/,
  },
  {
    name: 'SSE event that is not JSON',
    stream: true,
    fault: { kind: 'body', body: 'data: {"choices": [\n\n', contentType: 'text/event-stream' },
    reason: /malformed JSON/,
  },
  {
    name: 'SSE chunks without choices',
    stream: true,
    fault: { kind: 'body', body: 'data: {"id":"a"}\n\ndata: {"id":"b"}\n\ndata: [DONE]\n\n', contentType: 'text/event-stream' },
    reason: /no chat completion chunk/,
  },
  {
    name: 'SSE error event',
    stream: true,
    fault: { kind: 'body', body: 'data: {"error":{"message":"model crashed"}}\n\n', contentType: 'text/event-stream' },
    reason: /model crashed/,
  },
  {
    name: 'SSE with text but no finish',
    stream: true,
    fault: {
      kind: 'body',
      body: `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: PARTIAL } }] })}\n\ndata: [DONE]\n\n`,
      contentType: 'text/event-stream',
    },
    reason: /no finish_reason/,
  },
];

describe('each fault on one attempt is retried and the whole reply kept', () => {
  it.each(firstAttemptFaults)('$name', async ({ stream, fault, reason }) => {
    const s = await serve({ reply: () => FULL, fault: (i) => (i === 0 ? fault : undefined) });
    const { p, retries } = provider(s);
    const deltas: string[] = [];
    const res = await p.chat(request(stream), { onDelta: (t) => deltas.push(t) });
    counts.modes++;
    expect(res.content).toBe(FULL);
    expect(res.content).not.toContain(PARTIAL);
    expect(retries).toHaveLength(1);
    expect(retries[0]).toMatch(reason);
    expect(retries[0]).not.toContain(PARTIAL); // the message names the fault, not the text
    expect(s.requests).toHaveLength(2);
    counts.recovered++;
  });
});

describe('answers kept with a warning', () => {
  it('a streamed request answered with one plain JSON body: used whole, with a warning', async () => {
    const s = await serve({ reply: () => FULL, fault: () => ({ kind: 'json-for-stream' }) });
    const { p, retries, warnings } = provider(s);
    const deltas: string[] = [];
    expect((await p.chat(request(true), { onDelta: (t) => deltas.push(t) })).content).toBe(FULL);
    expect((await p.chat(request(true), { onDelta: (t) => deltas.push(t) })).content).toBe(FULL);
    expect(deltas).toEqual([FULL, FULL]);
    expect(retries).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/answered a streamed request with one plain JSON reply; using it whole/)]); // once
    counts.modes++;
  });

  it.each([true, false])('finish_reason "length" (stream %s): the reply is kept, with a warning that it was cut', async (stream) => {
    const s = await serve({ reply: () => FULL, fault: () => ({ kind: 'finish', reason: 'length' }) });
    const { p, retries, warnings } = provider(s);
    expect((await p.chat(request(stream), { onDelta: () => {} })).content).toBe(FULL);
    expect(retries).toEqual([]);
    expect(warnings).toEqual([
      expect.stringMatching(
        /reply of the agent call by Ann in state "opening" \(turn 3\) was cut at max tokens \(finish_reason "length"\)/,
      ),
    ]);
    if (stream) counts.modes++;
  });

  it('an empty reply is asked for once more; a second empty one is recorded empty, with warnings', async () => {
    const s = await serve({ reply: (_b, i) => (i === 0 ? '' : FULL) });
    const { p, warnings } = provider(s);
    expect((await p.chat(request(true), { onDelta: () => {} })).content).toBe(FULL);
    expect(warnings).toEqual([expect.stringMatching(/got an empty reply from .*; asking once more/)]);
    counts.recovered++;

    const empty = await serve({ reply: () => '' });
    const e = provider(empty);
    expect((await e.p.chat(request(false))).content).toBe('');
    expect(empty.requests).toHaveLength(2);
    expect(e.warnings).toEqual([expect.stringMatching(/asking once more/), expect.stringMatching(/empty reply twice; recorded empty/)]);
    counts.modes++;
  });
});

describe('faults that persist end the call with a clear, resumable error', () => {
  it('a server that always stalls after one chunk: every attempt ends at the timeout, then the call gives up naming the server and the timeout', async () => {
    const s = await serve({ reply: () => FULL, fault: () => ({ kind: 'stall', text: PARTIAL }) });
    const { p, retries } = provider(s, { retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 } });
    const started = Date.now();
    const err = await p.chat(request(true), { onDelta: () => {} }).catch((e: unknown) => e);
    const ms = Date.now() - started; // at least the 3 timeouts; without them, the call never ends (the test's timeout fails it)
    expect(err).toBeInstanceOf(LlmUnavailableError);
    expect(isResumableError(err)).toBe(true);
    expect((err as Error).message).toBe(
      `LLM call failed: ${s.url} sent nothing for ${TIMEOUT_MS / 1000} s in the middle of its answer (--timeout ${TIMEOUT_MS / 1000} s); gave up after 3 attempts`,
    );
    expect(retries).toHaveLength(2);
    expect(ms).toBeGreaterThanOrEqual(3 * TIMEOUT_MS);
    counts.refused++;
  });

  it('malformed answers on every attempt: the final message says what was wrong and how often it was tried', async () => {
    const s = await serve({ fault: () => ({ kind: 'body', body: '{"choices": [' }) });
    const { p } = provider(s);
    const err = await p.chat(request(false)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmUnavailableError);
    expect((err as Error).message).toMatch(
      new RegExp(`^LLM call failed: ${s.url.replace(/[.]/g, '\\.')} answered with malformed JSON \\(.*\\); gave up after 4 attempts$`),
    );
    counts.refused++;
  });

  it('the run-wide budget bounds retries of torn streams too', async () => {
    const s = await serve({ reply: () => FULL, fault: () => ({ kind: 'tear', text: PARTIAL }) });
    const { p } = provider(s, { budget: new RetryBudget(1) });
    await expect(p.chat(request(true), { onDelta: () => {} })).rejects.toThrow(
      /ended before the reply was complete.*retry budget \(1\) is spent/,
    );
    expect(s.requests).toHaveLength(2);
  });
});

describe('replies over the size cap are refused, not retried', () => {
  it.each([true, false])('a %s reply of 5,000 bytes over a 2,000-byte cap', async (stream) => {
    const s = await serve({ reply: () => 'x'.repeat(5000) });
    // a timeout no busy machine reaches: a retry here would be the refusal's, not a slow answer's
    const { p, retries } = provider(s, { maxReplyBytes: 2000, timeoutMs: scaled(30_000) });
    const err = await p.chat(request(stream), { onDelta: () => {} }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ReplyTooLargeError);
    expect(isResumableError(err)).toBe(true);
    expect((err as Error).message).toBe(
      `LLM call failed: the reply from ${s.url} is larger than the cap of 2000 bytes, so it was refused and nothing of it was recorded; raise the cap with options.maxReplyBytes (or llm.max_reply_bytes in the SOP) and resume`,
    );
    expect(retries).toEqual([]);
    expect(s.requests).toHaveLength(1);
    counts.modes++;
    counts.refused++;
  });

  it('tool call arguments count too, and a stream that never stops sending bytes is cut off', async () => {
    const s = await serve({ toolCalls: () => [{ name: 'write', arguments: JSON.stringify({ text: 'y'.repeat(3000) }) }] });
    // (a timeout that megabytes through 127.0.0.1 never reach on a loaded machine: the cap must end the call)
    const { p } = provider(s, { maxReplyBytes: 2000, timeoutMs: scaled(30_000) });
    await expect(p.chat(request(true), { onDelta: () => {} })).rejects.toBeInstanceOf(ReplyTooLargeError);

    // Keep-alive comments only: no text, but no end either; the raw cap (64 x the reply cap + 1 MiB) stops it.
    const endless = await serve({
      fault: () => ({ kind: 'body', body: ': keep-alive\n'.repeat(120_000), contentType: 'text/event-stream' }),
    });
    const e = provider(endless, { maxReplyBytes: 2000, timeoutMs: scaled(30_000) });
    await expect(e.p.chat(request(true), { onDelta: () => {} })).rejects.toBeInstanceOf(ReplyTooLargeError);
    counts.modes++;
  });
});

describe('aborting (Ctrl-C) a call the server never answers', () => {
  it('ends the call at once with a resumable error, in the middle of a stalled stream', async () => {
    let arrived!: () => void;
    const seen = new Promise<void>((r) => {
      arrived = r;
    });
    const s = await serve({ reply: () => FULL, fault: () => ({ kind: 'stall', text: PARTIAL }), onRequest: () => arrived() });
    const stop = new AbortController();
    const { p, retries } = provider(s, { timeoutMs: 3_600_000 });
    const llm = new InterruptibleProvider(p, stop.signal);
    let firstDelta!: () => void;
    const streaming = new Promise<void>((r) => {
      firstDelta = r;
    });
    const call = llm.chat(request(true), { onDelta: () => firstDelta() }).catch((e: unknown) => e);
    await seen;
    await streaming;
    stop.abort(); // the call's timeout is a minute off: only the abort ends it before the test's timeout
    const err = await call;
    expect(err).toBeInstanceOf(LlmInterruptedError);
    expect(isResumableError(err)).toBe(true);
    expect(retries).toEqual([]);
    // Later calls stop at once too.
    await expect(llm.chat(request(false))).rejects.toBeInstanceOf(LlmInterruptedError);
    expect(s.requests).toHaveLength(1);
  });
});

// --- Whole runs -------------------------------------------------------------------------------

function filesUnder(d: string): string[] {
  return readdirSync(d).flatMap((f) => {
    const p = join(d, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

function runFolder(out: string): string {
  const entries = readdirSync(out);
  expect(entries).toHaveLength(1);
  return join(out, entries[0]!);
}

interface Done {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function cli(args: string[], env: Record<string, string | undefined> = {}, onSpawn?: (c: ChildProcess) => void): Promise<Done> {
  return new Promise((resolve, reject) => {
    const child = spawnCli([...args], {
      cwd: ROOT,
      env: { ...process.env, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: undefined, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
    onSpawn?.(child);
  });
}

/** Replies for the debate example: agents stream, the speaker choice and judges answer in tags. */
function debateReply(agent: (n: number) => string): (b: ChatRequestBody) => string {
  let n = 0;
  return (b) => {
    if (b.stream) return agent(++n);
    const system = b.messages[0]?.content ?? '';
    if (/choose who speaks next/i.test(system)) return '<end>Negative</end>';
    if (/running summary/i.test(system)) return 'A short summary.';
    return '<decision>0</decision><end>0</end>';
  };
}

/** Messages of the run's agents (the debate's scripted replies start with "Point"). */
const agentMessages = (record: ReturnType<typeof loadRunRecord>) =>
  record.effective.flatMap((e) => (e.type === 'message' && e.message.content.startsWith('Point') ? [e.message.content] : []));

const noStack = (s: string) => !/\n\s+at .+:\d+:\d+\)?\n/.test(s);

describe('sop run against a hostile server', () => {
  it('a server that stalls after one chunk: `--timeout 3` ends the run by itself, interrupted and resumable, naming the server and the timeout', async () => {
    const stalling = await serve({ reply: debateReply(() => FULL), fault: () => ({ kind: 'stall', text: PARTIAL }) });
    const out = join(dir, 'stall');
    const r = await cli([
      'run',
      DEBATE,
      '--llm',
      'openai',
      '--base-url',
      stalling.url,
      '--timeout',
      '3',
      '--max-turns',
      '3',
      '--input',
      'topic=x',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(75); // stopped for the LLM: resumable (without the timeout: 5 x 120 s, past the test's timeout)
    expect(noStack(r.stderr), r.stderr).toBe(true);
    // The first LLM call is the judge's (plain JSON, half sent); the next would be an agent's stream.
    expect(r.stderr).toContain(
      `(LLM call failed: ${stalling.url} did not send its whole answer within 3 s (--timeout 3 s); gave up after 5 attempts)`,
    );
    expect(r.stderr).toMatch(/Resume with: sop resume /);
    expect(stalling.requests).toHaveLength(5);
    const folder = runFolder(out);
    expect(loadRunRecord(folder).status).toBe('interrupted');
    for (const f of filesUnder(folder)) expect(readFileSync(f, 'utf8')).not.toContain(PARTIAL);
    counts.refused++;

    // Agents' streams stall after their first chunk.
    const streams = await serve({
      reply: debateReply(() => FULL),
      fault: (_i, b) => ((b as ChatRequestBody).stream ? { kind: 'stall', text: PARTIAL } : undefined),
    });
    const out2 = join(dir, 'stall-stream');
    const r2 = await cli([
      'run',
      DEBATE,
      '--llm',
      'openai',
      '--base-url',
      streams.url,
      '--timeout',
      '1',
      '--max-turns',
      '3',
      '--input',
      'topic=x',
      '--out',
      out2,
    ]);
    expect(r2.code, r2.stderr).toBe(75);
    expect(noStack(r2.stderr), r2.stderr).toBe(true);
    expect(r2.stderr).toContain(
      `(LLM call failed: ${streams.url} sent nothing for 1 s in the middle of its answer (--timeout 1 s); gave up after 5 attempts)`,
    );
    const folder2 = runFolder(out2);
    for (const f of filesUnder(folder2)) expect(readFileSync(f, 'utf8')).not.toContain(PARTIAL);

    // Resumed against a server that answers, it goes on from where it stopped.
    const healthy = await serve({ reply: debateReply((n) => `Point ${n}.`) });
    const resumed = await cli(['resume', folder, '--base-url', healthy.url]);
    expect(resumed.code, resumed.stderr).toBe(0);
    const record = loadRunRecord(folder);
    expect(record.status).toBe('max_turns');
    expect(record.turns).toBe(3);
    expect(agentMessages(record)).toEqual(['Point 1.', 'Point 2.']);
  }, 90_000);

  it('one Ctrl-C while the server says nothing stops the run at once (interrupted, exit 130), and it resumes', async () => {
    let arrived!: () => void;
    const seen = new Promise<void>((r) => {
      arrived = r;
    });
    const silent = await serve({
      reply: debateReply(() => FULL),
      fault: () => ({ kind: 'stall', text: PARTIAL }),
      onRequest: () => arrived(),
    });
    const out = join(dir, 'sigint');
    // --timeout an hour: only the Ctrl-C can end the run before the test's timeout
    const args = ['run', DEBATE, '--llm', 'openai', '--base-url', silent.url, '--max-turns', '2', '--input', 'topic=x', '--out', out];
    const r = await cli([...args, '--json', '--timeout', '3600'], {}, (child) => {
      void seen.then(() => child.kill('SIGINT'));
    });
    expect(r.code, r.stderr).toBe(130);
    expect(noStack(r.stderr), r.stderr).toBe(true);
    expect(r.stderr).toMatch(/Stopping after this turn, or now if it is waiting for the LLM/);
    const folder = runFolder(out);
    const record = loadRunRecord(folder);
    expect(record.status).toBe('interrupted');
    expect(record.finished?.error).toMatch(/stopped by Ctrl-C while waiting for the LLM/);
    const finished = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RunEvent)
      .find((e) => e.type === 'run_finished');
    expect(finished).toMatchObject({ status: 'interrupted' });

    const healthy = await serve({ reply: debateReply((n) => `Point ${n}.`) });
    const resumed = await cli(['resume', folder, '--base-url', healthy.url]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(loadRunRecord(folder).status).toBe('max_turns');
  }, 60_000);

  it('a torn first stream is retried and its text appears nowhere in the run folder', async () => {
    let tore = false; // the first streamed answer (an agent's) is torn
    const s = await serve({
      reply: debateReply((n) => `Point ${n}.`),
      fault: (_i, body) => (!tore && (body as ChatRequestBody).stream ? ((tore = true), { kind: 'tear', text: PARTIAL }) : undefined),
    });
    const out = join(dir, 'torn');
    const r = await cli(['run', DEBATE, '--llm', 'openai', '--base-url', s.url, '--max-turns', '3', '--input', 'topic=x', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /warning: LLM call failed \(the stream from .* ended before the reply was complete \(no finish_reason\); its partial text is discarded\); retry 1/,
    );
    const folder = runFolder(out);
    const files = filesUnder(folder);
    expect(files.map((f) => f.slice(folder.length + 1))).toEqual(
      expect.arrayContaining(['journal.jsonl', 'transcript.md', 'transcript.jsonl']),
    );
    const torn = files.filter((f) => readFileSync(f, 'utf8').includes(PARTIAL));
    counts.tornRecorded += torn.length;
    expect(torn).toEqual([]);
    // The torn attempt was the first agent reply ("Point 1." never arrived whole); the retry got the next.
    expect(agentMessages(loadRunRecord(folder))).toEqual(['Point 2.', 'Point 3.']);
  }, 60_000);

  it('a reply over --max-reply-bytes stops the run (interrupted) with the cap named; a resume with a larger cap goes on', async () => {
    const s = await serve({ reply: debateReply((n) => `Point ${n}: ${'z'.repeat(3000)}`) });
    const out = join(dir, 'cap');
    const r = await cli([
      'run',
      DEBATE,
      '--llm',
      'openai',
      '--base-url',
      s.url,
      '--max-turns',
      '2',
      '--input',
      'topic=x',
      '--out',
      out,
      '--max-reply-bytes',
      '1000',
    ]);
    expect(r.code, r.stderr).toBe(75); // stopped for the LLM's reply: resumable
    expect(noStack(r.stderr)).toBe(true);
    expect(r.stderr).toMatch(
      /is larger than the cap of 1000 bytes, so it was refused and nothing of it was recorded; raise the cap with --max-reply-bytes/,
    );
    const folder = runFolder(out);
    for (const f of filesUnder(folder)) expect(readFileSync(f, 'utf8')).not.toContain('zzzzzzzzzz');
    const resumed = await cli(['resume', folder, '--max-reply-bytes', '10000']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(loadRunRecord(folder).status).toBe('max_turns');
  }, 60_000);

  it('bad --timeout and --max-reply-bytes values are refused with one line', async () => {
    for (const [flag, value, message] of [
      ['--timeout', 'soon', '--timeout must be a number of seconds above 0 (got NaN)'],
      ['--max-reply-bytes', '-3', '--max-reply-bytes must be a whole number of bytes, at least 1 (got -3)'],
    ] as const) {
      const r = await cli(['run', DEBATE, '--llm', 'mock', flag, value, '--input', 'topic=x', '--out', join(dir, 'flags')]);
      expect(r.code).toBe(1);
      expect(r.stderr).toBe(`error: ${message}\n`);
    }
  });

  it('a --record cassette holds no secret: not the API key, not secrets in replies, not in recorded requests', async () => {
    const canaries = {
      OPENAI_API_KEY: 'sk-canary-hostile-9e8d7c6b',
      HOSTILE_SERVICE_TOKEN: 'tok-canary-"quoted"-3a2b',
      DB_PASSWORD: 'pw-canary-5x5y5z',
    };
    const s = await serve({
      reply: debateReply(
        (n) =>
          `Point ${n}: the key is ${canaries.OPENAI_API_KEY}, the token ${canaries.HOSTILE_SERVICE_TOKEN}, the password ${canaries.DB_PASSWORD}.`,
      ),
    });
    const cassette = join(dir, 'secret.cassette.json');
    const out = join(dir, 'secret');
    const r = await cli(
      ['run', DEBATE, '--llm', 'openai', '--base-url', s.url, '--max-turns', '4', '--input', 'topic=x', '--out', out, '--record', cassette],
      canaries,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(s.requests[0]!.headers.authorization).toBe(`Bearer ${canaries.OPENAI_API_KEY}`); // the key was in use
    const text = readFileSync(cassette, 'utf8');
    const forms = Object.values(canaries).flatMap((v) => [
      v,
      JSON.stringify(v).slice(1, -1),
      JSON.stringify(JSON.stringify(v)).slice(1, -1),
    ]);
    const found = forms.filter((f) => text.includes(f));
    counts.leaks += found.length;
    expect(found).toEqual([]);
    const c = JSON.parse(text) as { interactions: Array<{ response: string; request?: Array<{ content: string }> }> };
    const agentCalls = s.requests.filter((q) => (q.body as ChatRequestBody).stream).length;
    expect(agentCalls).toBeGreaterThan(1);
    expect(
      c.interactions.filter((i) => i.response.includes('the key is [REDACTED], the token [REDACTED], the password [REDACTED]')),
    ).toHaveLength(agentCalls);
    // Later prompts carry earlier replies: redacted there too.
    expect(c.interactions.some((i) => i.request?.some((m) => m.content.includes('[REDACTED]')))).toBe(true);
  }, 60_000);
});

describe('long replies are journaled once', () => {
  it('12 turns of 100 KB replies: the journal holds each once, reads back whole, and a kill between the reply and its message resumes without asking again', async () => {
    const size = 100_000;
    const agentText = (n: number) => `Point ${n}: ${String(n).repeat(size)}`;
    const s = await serve({ reply: debateReply(agentText) });
    const out = join(dir, 'big');
    const r = await cli(['run', DEBATE, '--llm', 'openai', '--base-url', s.url, '--max-turns', '12', '--input', 'topic=x', '--out', out]);
    expect(r.code, r.stderr).toBe(0);
    const folder = runFolder(out);
    const agentCalls = s.requests.filter((q) => (q.body as ChatRequestBody).stream).length;
    expect(agentCalls).toBeGreaterThanOrEqual(8); // 12 turns, a few of them opening lines
    const expected = Array.from({ length: agentCalls }, (_, i) => agentText(i + 1));
    const replyBytes = expected.reduce((a, t) => a + Buffer.byteLength(t), 0);
    const journalBytes = statSync(join(folder, 'journal.jsonl')).size;
    counts.journalRatio = journalBytes / replyBytes;
    expect(journalBytes).toBeLessThan(1.2 * replyBytes); // each reply twice would be over 2x
    const record = loadRunRecord(folder);
    const messages = record.effective.flatMap((e) => (e.type === 'message' ? [e.message.content] : []));
    expect(agentMessages(record)).toEqual(expected);
    const transcript = readFileSync(join(folder, 'transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { content: string }).content);
    expect(transcript).toEqual(messages);
    expect(readFileSync(join(folder, 'journal.jsonl'), 'utf8')).toContain('"text_of":{');

    // A copy killed after the 12th reply was journaled, before its message.
    const read = readJournal(folder);
    const events = read.events;
    const lines = readFileSync(join(folder, 'journal.jsonl'), 'utf8').split('\n');
    const lastAgentCall = events
      .map((e, i) => ({ e, i }))
      .filter(({ e }) => e.type === 'llm_call' && e.purpose === 'agent')
      .pop()!;
    const killed = join(dir, 'big-killed');
    cpSync(folder, join(killed, 'run'), { recursive: true });
    // (up to its line: not every line is an event, prompt_part lines are not)
    writeFileSync(join(killed, 'run', 'journal.jsonl'), lines.slice(0, read.lines[lastAgentCall.i]).join('\n') + '\n');
    const before = s.requests.filter((q) => (q.body as ChatRequestBody).stream).length;
    const resumed = await cli(['resume', join(killed, 'run'), '--base-url', s.url]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(s.requests.filter((q) => (q.body as ChatRequestBody).stream).length).toBe(before); // the reply was reused
    const again = loadRunRecord(join(killed, 'run')).effective.flatMap((e) => (e.type === 'message' ? [e.message.content] : []));
    expect(again).toEqual(messages);

    // A fork's journal is written the same way, and reads back to the same history.
    const forks = join(dir, 'big-forks');
    const forked = await cli(['fork', folder, '--at', '6', '--out', forks, '--max-turns', '6']);
    expect(forked.code, forked.stderr).toBe(0);
    const fork = runFolder(forks);
    expect(readFileSync(join(fork, 'journal.jsonl'), 'utf8')).toContain('"text_of":{');
    const forkMessages = loadRunRecord(fork).effective.flatMap((e) => (e.type === 'message' ? [e.message.content] : []));
    expect(forkMessages).toEqual(
      loadRunRecord(folder).effective.flatMap((e) => (e.type === 'message' && e.message.turn <= 6 ? [e.message.content] : [])),
    );
  }, 120_000);

  it('short texts stay inline; a message that is not inside a recent reply is written whole', () => {
    const sop = validateSopDocument(
      {
        name: 'once',
        agents: { Ann: { roles: { s: 'Host' } } },
        root: 's',
        states: { s: { roles: ['Host'], next_states: { '0': 's', '1': 'end' } }, end: { final: true } },
      },
      'once.sop.json',
    ).sop;
    const root = mkdtempSync(join(dir, 'inline-'));
    const folder = new RunFolder(root, 'r', (t) => t);
    const long = 'w'.repeat(SHARED_TEXT_MIN + 10);
    folder.onEvent({
      type: 'llm_call',
      purpose: 'agent',
      state: 's',
      agent: 'Ann',
      turn: 1,
      model: 'm',
      usage: { promptTokens: 1, completionTokens: 1 },
      ms: 1,
      prompt_chars: 1,
      reply: `Ann: ${long}`,
      effect: '0.0',
    });
    folder.onEvent({
      type: 'message',
      message: { id: 0, turn: 1, state: 's', sender: 'Ann', role: 'Host', content: long, kind: 'speech', timestamp: 't' },
    });
    folder.onEvent({
      type: 'message',
      message: { id: 1, turn: 2, state: 's', sender: 'Ann', role: 'Host', content: 'short', kind: 'speech', timestamp: 't' },
    });
    folder.onEvent({
      type: 'message',
      message: {
        id: 2,
        turn: 3,
        state: 's',
        sender: 'Ann',
        role: 'Host',
        content: 'v'.repeat(SHARED_TEXT_MIN),
        kind: 'speech',
        timestamp: 't',
      },
    });
    // A sub-flow's events come wrapped; its long message refers to its own LLM call.
    const sub = `${'s'.repeat(SHARED_TEXT_MIN)} done`;
    folder.onEvent({
      type: 'subflow',
      flow: 'Coder-1',
      event: {
        type: 'llm_call',
        purpose: 'agent',
        state: 's',
        agent: 'Bo',
        turn: 1,
        model: 'm',
        usage: { promptTokens: 1, completionTokens: 1 },
        ms: 1,
        prompt_chars: 1,
        reply: sub,
        effect: 'Coder-1/0.0',
      },
    });
    folder.onEvent({
      type: 'subflow',
      flow: 'Coder-1',
      event: {
        type: 'message',
        message: { id: 0, turn: 1, state: 's', sender: 'Bo', role: 'Host', content: sub, kind: 'speech', timestamp: 't' },
      },
    });
    folder.close();
    const raw = readFileSync(join(folder.dir, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(raw[1]).toMatchObject({
      type: 'message',
      message: { content: null },
      text_of: { effect: '0.0', start: 5, length: long.length },
    });
    expect(raw[2]).toMatchObject({ message: { content: 'short' } });
    expect(raw[3]).not.toHaveProperty('text_of');
    expect(raw[5]).toMatchObject({
      type: 'subflow',
      event: { type: 'message', message: { content: null }, text_of: { effect: 'Coder-1/0.0', start: 0, length: sub.length } },
    });
    const read = readJournal(folder.dir).events;
    expect(read.flatMap((e) => (e.type === 'message' ? [e.message.content] : []))).toEqual([long, 'short', 'v'.repeat(SHARED_TEXT_MIN)]);
    expect(read[5]).toEqual({
      type: 'subflow',
      flow: 'Coder-1',
      event: {
        type: 'message',
        message: { id: 0, turn: 1, state: 's', sender: 'Bo', role: 'Host', content: sub, kind: 'speech', timestamp: 't' },
      },
    });
    // A reference to a reply the journal does not hold is a damaged journal, named by line.
    writeFileSync(join(folder.dir, 'journal.jsonl'), JSON.stringify(raw[1]) + '\n');
    expect(readJournal(folder.dir).damaged).toEqual([
      expect.objectContaining({
        line: 1,
        reason: expect.stringMatching(/its text is the reply of LLM call 0\.0, which no earlier line holds/),
      }),
    ]);
    expect(sop.name).toBe('once');
  });
});

// The provider's own errors are LlmErrors with a message, never a stack trace on the terminal.
describe('error types', () => {
  it('ReplyTooLargeError is an LlmError', () => {
    expect(new ReplyTooLargeError('http://x/v1', 10)).toBeInstanceOf(LlmError);
  });
});

// A Run that gets a torn stream records the retried reply, and only that.
describe('in a run', () => {
  it('the torn text reaches the terminal as deltas, but no message, journal line or transcript', async () => {
    const s = await serve({
      reply: (b) => (b.stream ? 'Ann: Good evening.' : '<end>1</end>'),
      fault: (i) => (i === 0 ? { kind: 'tear', text: PARTIAL } : undefined),
    });
    const { p } = provider(s);
    const sop = validateSopDocument(
      {
        name: 'hello',
        agents: { Ann: { roles: { s: 'Host' } } },
        root: 's',
        states: { s: { roles: ['Host'], next_states: { '0': 's', '1': 'end' } }, end: { final: true } },
      },
      'hello.sop.json',
    ).sop;
    const root = mkdtempSync(join(dir, 'run-'));
    const folder = new RunFolder(root, 'r', (t) => t);
    const deltas: string[] = [];
    const result = await new Run({
      sop,
      file: 'hello',
      llm: p,
      listeners: [
        folder.onEvent,
        (e) => {
          if (e.type === 'delta') deltas.push(e.text);
        },
      ],
    }).run();
    folder.close();
    expect(result.status).toBe('finished');
    expect(result.messages.map((m) => m.content)).toEqual(['Good evening.']);
    expect(deltas.join('')).toContain(PARTIAL); // shown live before the tear was known; followed by a warning
    for (const f of filesUnder(folder.dir)) expect(readFileSync(f, 'utf8')).not.toContain(PARTIAL);
  });
});
