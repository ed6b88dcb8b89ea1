// LLM faults: retries with exponential backoff and jitter, Retry-After, the per-run retry
// budget (after it the run stops as interrupted and can be resumed), fault injection against
// the local OpenAI-compatible server, and odd replies handled by the normal rules.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareResume } from '../src/api/continue.js';
import { loadRunRecord } from '../src/features/journal/record.js';
import { isResumableError } from '../src/features/journal/snapshot.js';
import { AnswersFileInput } from '../src/core/io/human.js';
import { RunFolder } from '../src/features/journal/run-folder.js';
import { ReplayProvider } from '../src/core/llm/cassette.js';
import { OpenAiProvider } from '../src/core/llm/openai.js';
import { RetryBudget, backoffDelay, parseRetryAfter, DEFAULT_RETRY_POLICY } from '../src/core/llm/retry.js';
import { LlmError, LlmUnavailableError, type ChatRequest } from '../src/core/llm/types.js';
import { Rng } from '../src/core/runtime/rng.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { startOpenAiServer, type ChatRequestBody, type Fault, type TestServer } from './helpers/openai-server.js';
import { scaled } from './helpers/time.js';

const FIX = resolve('test/fixtures/durable');
const SOP = join(FIX, 'town.sop.json');
const ANSWERS = join(FIX, 'answers.txt');

const request = (): ChatRequest => ({
  messages: [{ role: 'user', content: 'hi' }],
  model: 'm',
  meta: { purpose: 'agent', state: 's', agent: 'A', turn: 1 },
});
const fast = { baseDelayMs: 5, maxDelayMs: 40 };

describe('backoff', () => {
  it('grows exponentially with jitter between half and the whole delay, capped', () => {
    const policy = { maxRetries: 10, baseDelayMs: 100, maxDelayMs: 1000 };
    for (let attempt = 0; attempt < 6; attempt++) {
      const exp = Math.min(1000, 100 * 2 ** attempt);
      expect(backoffDelay(attempt, policy, undefined, () => 0)).toBe(exp / 2);
      expect(backoffDelay(attempt, policy, undefined, () => 0.999999)).toBe(Math.round(exp / 2 + (0.999999 * exp) / 2));
    }
    const spread = new Set(Array.from({ length: 20 }, () => backoffDelay(2, policy, undefined)));
    expect(spread.size).toBeGreaterThan(1);
  });

  it('honours Retry-After (seconds, HTTP date, retry-after-ms) over the backoff, capped at a minute', () => {
    const h = (o: Record<string, string>) => ({ get: (n: string) => o[n] ?? null });
    expect(parseRetryAfter(h({ 'retry-after': '2' }))).toBe(2000);
    expect(parseRetryAfter(h({ 'retry-after': '0.25' }))).toBe(250);
    expect(parseRetryAfter(h({ 'retry-after-ms': '40', 'retry-after': '9' }))).toBe(40);
    expect(parseRetryAfter(h({ 'retry-after': new Date(10_000 + 3000).toUTCString() }), 10_000)).toBe(3000);
    expect(parseRetryAfter(h({ 'retry-after': 'soon' }))).toBeUndefined();
    expect(backoffDelay(0, DEFAULT_RETRY_POLICY, 1234)).toBe(1234);
    expect(backoffDelay(0, DEFAULT_RETRY_POLICY, 3_600_000)).toBe(60_000);
    // and at the run's --timeout when it is shorter (the provider's policy)
    expect(backoffDelay(0, { ...DEFAULT_RETRY_POLICY, maxRetryAfterMs: 10_000 }, 999_999_000)).toBe(10_000);
    expect(backoffDelay(0, { ...DEFAULT_RETRY_POLICY, maxRetryAfterMs: 300_000 }, 999_999_000)).toBe(60_000);
  });
});

describe('the openai provider against a faulty server', () => {
  let server: TestServer | undefined;
  afterAll(async () => {
    await server?.close();
  });

  async function serve(faults: Array<Fault | undefined>) {
    await server?.close();
    server = await startOpenAiServer({ fault: (i) => faults[i], reply: () => 'fine' });
    return server;
  }

  it('retries 429 (waiting as Retry-After says), 500, a reset connection and a timeout, then answers', async () => {
    const s = await serve([
      { kind: 'status', status: 429, headers: { 'retry-after-ms': '30' } },
      { kind: 'status', status: 500 },
      { kind: 'reset' },
      { kind: 'hang' },
      { kind: 'status', status: 503, headers: { 'retry-after': '0.02' } },
    ]);
    const retries: Array<{ attempt: number; delayMs: number; reason: string }> = [];
    const budget = new RetryBudget(50);
    const llm = new OpenAiProvider({
      baseURL: s.url,
      timeoutMs: scaled(1_000), // the hung attempt's; the others are answered at once
      retry: { ...fast, maxRetries: 6 },
      budget,
      onRetry: (r) => retries.push(r),
    });
    const res = await llm.chat(request());
    expect(res.content).toBe('fine');
    expect(retries.map((r) => r.reason)).toEqual([
      expect.stringMatching(/HTTP 429/),
      expect.stringMatching(/HTTP 500/),
      expect.stringMatching(/connection/),
      expect.stringMatching(/timed out/),
      expect.stringMatching(/HTTP 503/),
    ]);
    expect(retries[0]!.delayMs).toBe(30);
    expect(retries[4]!.delayMs).toBe(20);
    expect(budget.used).toBe(5);
    expect(s.requests).toHaveLength(6);
  });

  it("after the run's retry budget, fails with a resumable error that says why", async () => {
    const s = await serve(Array.from({ length: 10 }, () => ({ kind: 'status', status: 429 })));
    const llm = new OpenAiProvider({ baseURL: s.url, retry: { ...fast, maxRetries: 8 }, budget: new RetryBudget(3) });
    const err = await llm.chat(request()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmUnavailableError);
    expect((err as Error).message).toMatch(/HTTP 429.*retry budget \(3\) is spent/);
    expect(isResumableError(err)).toBe(true);
    expect(s.requests).toHaveLength(4);
  });

  it('does not retry a refused key or a bad request, and those fail the run (not resumable)', async () => {
    const s = await serve([
      { kind: 'status', status: 401 },
      { kind: 'status', status: 400 },
    ]);
    const llm = new OpenAiProvider({ baseURL: s.url, retry: fast });
    const e401 = await llm.chat(request()).catch((e: unknown) => e);
    expect(e401).toBeInstanceOf(LlmError);
    expect((e401 as Error).message).toMatch(/refused the API key/);
    expect(isResumableError(e401)).toBe(false);
    const e400 = await llm.chat(request()).catch((e: unknown) => e);
    expect((e400 as Error).message).toMatch(/HTTP 400/);
    expect(s.requests).toHaveLength(2);
  });
});

/** A reply that depends only on the prompt, so a run's transcript does not depend on faults. */
function replyFor(body: ChatRequestBody): string {
  let h = 2166136261;
  const text = JSON.stringify(body.messages);
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  const words = ['bread', 'square', 'vote', 'oven', 'market', 'noise', 'rent', 'queue'];
  return `${words[(h >>> 0) % 8]} ${words[(h >>> 3) % 8]} ${words[(h >>> 6) % 8]} #${(h >>> 0).toString(36)}`;
}

describe('fault injection: 20 runs against a server failing 30% of requests', () => {
  let root: string;
  let clean: TestServer;
  let faulty: TestServer;
  const tally = { 429: 0, 500: 0, reset: 0, timeout: 0 };

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'sop-faults-'));
    clean = await startOpenAiServer({ reply: replyFor });
    const rng = new Rng(8);
    faulty = await startOpenAiServer({
      reply: replyFor,
      fault: () => {
        if (rng.next() >= 0.3) return undefined;
        const r = rng.next();
        if (r < 0.3) {
          tally[429]++;
          return { kind: 'status', status: 429, headers: { 'retry-after-ms': '15' } };
        }
        if (r < 0.6) {
          tally[500]++;
          return { kind: 'status', status: 500 };
        }
        if (r < 0.9) {
          tally.reset++;
          return { kind: 'reset' };
        }
        tally.timeout++;
        return { kind: 'hang' };
      },
    });
  });
  afterAll(async () => {
    await clean?.close();
    await faulty?.close();
    rmSync(root, { recursive: true, force: true });
  });

  /** One run (and its resumes, when the retries ran out) in its own folder; returns the folder. */
  async function runTo(out: string, url: string, stream: boolean): Promise<{ dir: string; resumes: number }> {
    const { sop } = loadSopFile(SOP);
    const provider = () =>
      new OpenAiProvider({ baseURL: url, apiKey: 'test', timeoutMs: scaled(1000), retry: fast, budget: new RetryBudget(50) });
    let folder = new RunFolder(out, 'run', undefined);
    let result = await new Run({
      sop,
      file: SOP,
      llm: provider(),
      human: new AnswersFileInput(ANSWERS),
      seed: 7,
      stream,
      listeners: [folder.onEvent],
    }).run();
    folder.close();
    let resumes = 0;
    while (result.status === 'interrupted' && resumes < 10) {
      resumes++;
      const { continuation: c } = prepareResume(folder.dir);
      folder = new RunFolder(c.outDir, c.runId, undefined, { events: c.history });
      result = await new Run({
        sop: c.sop,
        file: SOP,
        llm: provider(),
        human: new AnswersFileInput(ANSWERS),
        seed: c.seed,
        stream,
        inputs: c.inputs,
        listeners: [folder.onEvent],
        resume: c.resume,
      }).run();
      folder.close();
    }
    expect(result.status, result.error?.message).toBe('finished');
    return { dir: folder.dir, resumes };
  }

  const transcript = (dir: string) => ({
    jsonl: readFileSync(join(dir, 'transcript.jsonl'), 'utf8').replace(/"timestamp":"[^"]*"/g, ''),
    md: readFileSync(join(dir, 'transcript.md'), 'utf8').split('\n').slice(3).join('\n'),
  });

  it('every run finishes with the transcript of the fault-free run', async () => {
    const reference = transcript((await runTo(join(root, 'clean'), clean.url, true)).dir);
    const runs = await Promise.all(Array.from({ length: 20 }, (_, i) => runTo(join(root, `faulty-${i}`), faulty.url, i % 2 === 0)));
    const same = runs.filter((r) => {
      const t = transcript(r.dir);
      return t.jsonl === reference.jsonl && t.md === reference.md;
    }).length;
    const requests = faulty.requests.length;
    const faults = tally[429] + tally[500] + tally.reset + tally.timeout;
    const resumed = runs.filter((r) => r.resumes > 0).length;
    process.stdout.write(
      `fault injection: ${same}/20 runs identical to the fault-free run; ${faults} of ${requests} requests failed ` +
        `(${tally[429]} x 429, ${tally[500]} x 500, ${tally.reset} resets, ${tally.timeout} timeouts); ${resumed} runs needed a resume\n`,
    );
    expect(same).toBe(20);
    expect(faults / requests).toBeGreaterThan(0.2);
    for (const r of runs) expect(loadRunRecord(r.dir).status).toBe('finished');
  }, 120_000);
});

describe('odd LLM replies', () => {
  it('are recorded by the normal rules: empty, very long, a fake command, odd characters', async () => {
    const root = mkdtempSync(join(tmpdir(), 'sop-odd-'));
    try {
      const { sop } = loadSopFile(SOP);
      const folder = new RunFolder(root, 'odd', undefined);
      const result = await new Run({
        sop,
        file: SOP,
        llm: new ReplayProvider(join(FIX, 'town.cassette.json')),
        human: new AnswersFileInput(ANSWERS),
        seed: 7,
        stream: false,
        listeners: [folder.onEvent],
      }).run();
      folder.close();
      expect(result.status).toBe('finished');
      const contents = result.messages.map((m) => m.content);
      expect(contents).toContain('');
      expect(contents.some((c) => c.length > 10_000 && c.startsWith('I will keep it short.'))).toBe(true);
      // A command in a state that declares none is plain speech: nothing runs.
      expect(result.messages.find((m) => m.content.includes('"command": "run_code"'))?.kind).toBe('speech');
      expect(contents.some((c) => c.includes('lone \ud800 surrogate') && c.includes('\u0000'))).toBe(true);
      // The journal keeps them exactly (JSON escapes what UTF-8 cannot hold).
      const journaled = loadRunRecord(folder.dir).effective.flatMap((e) => (e.type === 'message' ? [e.message.content] : []));
      expect(journaled).toEqual(contents);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
