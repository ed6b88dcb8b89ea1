// Hostile trust, streams and files (issue 23, items 4 and 5). A server that keeps a stream open
// with `: keep-alive` comments or empty chunks, or feeds the reply one byte a second, is bounded
// by content, not bytes: `--timeout` counts time without new content, a deadline bounds a reply
// that trickles however steadily, and both are retried, then stop the run as interrupted, naming
// the server. Files: --pricing goes through the safe reader (a device or a FIFO is refused at
// once), --record renames only over a regular file, a file that is not JSON is described by
// line and column, never by its bytes, and the viewer refuses hard-linked files.
// The real `openai` client talks to an OpenAI-compatible server on 127.0.0.1; the CLI runs as a
// child process. Bounds on time are generous: a loaded 2-core machine must not fail them.
import { spawn } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRunRecord } from '../src/features/journal/record.js';
import { isResumableError } from '../src/features/journal/snapshot.js';
import { OpenAiProvider } from '../src/core/llm/openai.js';
import { LlmUnavailableError, type ChatRequest } from '../src/core/llm/types.js';
import { loadPricing } from '../src/core/llm/pricing.js';
import { readCapped, safeRunFile, listRunFiles } from '../src/apps/view/files.js';
import { startOpenAiServer, type ChatRequestBody, type Fault, type ServerOptions, type TestServer } from './helpers/openai-server.js';
import { scaled } from './helpers/time.js';

const ROOT = join(import.meta.dirname, '..');
const CLI = join(ROOT, 'dist', 'src', 'apps', 'cli', 'main.js');
const DEBATE = join(ROOT, 'examples', 'debate', 'debate.sop.json');
const SECRET = 'root:x:0:0:CANARY-5e1f:/root:/bin/bash';

const counts = { streamsStopped: 0, filesRefused: 0 };
let dir: string;
const servers: TestServer[] = [];

beforeAll(() => {
  if (!existsSync(CLI)) throw new Error('dist/src/apps/cli/main.js is missing: run `npm run build` first');
  dir = mkdtempSync(join(tmpdir(), 'sop-hostile-trust-streams-'));
});
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `hostile trust (streams/files): ${counts.streamsStopped} trickling streams stopped, ${counts.filesRefused} hostile files refused`,
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

interface Done {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `sop ARGS`, killed after `killAfterMs` (times SOP_TEST_TIME_SCALE) if it has not ended by itself. */
function cli(args: string[], killAfterMs = 240_000): Promise<Done> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: { ...process.env, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: undefined },
    });
    // A run that never ends is the failure this file is about: it is killed, and the test says so.
    const guard = setTimeout(() => child.kill('SIGKILL'), scaled(killAfterMs));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

const noStack = (s: string) => !/\n\s+at .+:\d+:\d+\)?\n/.test(s);
const errorLines = (stderr: string) => stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('warning:'));

/** Replies for the debate example: agents stream, the speaker choice and judges answer in tags. */
function debateReply(b: ChatRequestBody): string {
  if (b.stream) return 'Point made, at some length, so that a slow stream has something to trickle.';
  const system = b.messages[0]?.content ?? '';
  if (/choose who speaks next/i.test(system)) return '<end>Negative</end>';
  if (/running summary/i.test(system)) return 'A short summary.';
  return '<decision>0</decision><end>0</end>';
}

function runFolder(out: string): string {
  const entries = readdirSync(out);
  expect(entries).toHaveLength(1);
  return join(out, entries[0]!);
}

// --- The provider: one call ---------------------------------------------------------------

describe('a stream is bounded by content, not bytes', () => {
  const provider = (s: TestServer, timeoutMs: number, streamDeadlineMs?: number) => {
    const retries: string[] = [];
    const p = new OpenAiProvider({
      apiKey: 'test-key',
      baseURL: s.url,
      timeoutMs,
      streamDeadlineMs,
      retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 },
      onRetry: (r) => retries.push(r.reason),
    });
    return { p, retries };
  };

  const cases: Array<{ name: string; fault: Fault; deadline?: number; reason: RegExp }> = [
    {
      name: '`: keep-alive` comments',
      fault: { kind: 'keep-alive', everyMs: 100 },
      reason: /sent no new content for 1 s in the middle of its answer \(keep-alive comments and empty chunks do not count/,
    },
    {
      name: 'chunks with an empty delta',
      fault: { kind: 'keep-alive', everyMs: 100, empty: true },
      reason: /sent no new content for 1 s/,
    },
    { name: 'the reply one byte at a time', fault: { kind: 'drip', everyMs: 50, unit: 'byte' }, reason: /sent no new content for 1 s/ },
    {
      name: 'the reply one character (one SSE chunk) at a time, past the deadline',
      fault: { kind: 'drip', everyMs: 100, unit: 'char' },
      deadline: 2500,
      reason: /did not finish its streamed answer within 2\.5 s/,
    },
  ];

  for (const c of cases) {
    it(`${c.name}: every attempt ends, is retried, and the call gives up naming the server (resumable)`, async () => {
      const s = await serve({ reply: debateReply, fault: () => c.fault });
      const { p, retries } = provider(s, 1000, c.deadline);
      const err = await p.chat(request(true)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LlmUnavailableError);
      expect(isResumableError(err)).toBe(true);
      const message = (err as Error).message;
      expect(message).toMatch(c.reason);
      expect(message).toContain(s.url);
      expect(message).toMatch(/gave up after 3 attempts/);
      expect(retries).toHaveLength(2);
      expect(s.requests).toHaveLength(3); // without the bounds, the call never ends (the test's timeout fails it)
      counts.streamsStopped++;
    }, 90_000);
  }

  it("a call's streamed attempts share one deadline (3 attempt deadlines): a steady trickle ends the call whatever its retries", async () => {
    // 10 retries allowed; the first attempt gets only keep-alives (ends at the 1 s silence), the
    // others a character a second, each ended at its 2.5 s deadline, the last at what is left of
    // the call's 7.5 s. No 11 attempts of 2.5 s: the call gives up once less than 1 s is left.
    const s = await serve({
      reply: () => 'x'.repeat(200),
      fault: (i) => (i === 0 ? { kind: 'keep-alive', everyMs: 100 } : { kind: 'drip', everyMs: 100, unit: 'char' }),
    });
    const retries: string[] = [];
    const p = new OpenAiProvider({
      apiKey: 'test-key',
      baseURL: s.url,
      timeoutMs: 1000,
      streamDeadlineMs: 2500,
      retry: { maxRetries: 10, baseDelayMs: 1, maxDelayMs: 5 },
      onRetry: (r) => retries.push(r.reason),
    });
    const err = await p.chat(request(true)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmUnavailableError);
    expect(isResumableError(err)).toBe(true);
    const message = (err as Error).message;
    expect(message).toContain(s.url);
    expect(message).toMatch(
      /did not finish its streamed answer within [\d.]+ s \(what was left of the call: a call's streamed answers may take 7\.5 s in all \(3 x its deadline\)\); gave up after 4 attempts: a call's streamed answers may take 7\.5 s in all \(3 x its deadline\)$/,
    );
    expect(retries[0]).toMatch(/sent no new content for 1 s/);
    expect(retries.slice(1)).toEqual([
      expect.stringMatching(/did not finish its streamed answer within 2\.5 s \(its deadline\)/),
      expect.stringMatching(/did not finish its streamed answer within 2\.5 s \(its deadline\)/),
    ]);
    expect(s.requests).toHaveLength(4); // about 7.5 s; without the call's deadline, 11 attempts of 2.5 s
    counts.streamsStopped++;
  }, 90_000);

  it('a slow stream whose every chunk brings content is not cut by --timeout, only by the deadline', async () => {
    // 40 characters, one every 100 ms: 4 s in all, with --timeout 2 s and the default deadline (20 s).
    const s = await serve({ reply: () => 'x'.repeat(40), fault: () => ({ kind: 'drip', everyMs: 100, unit: 'char' }) });
    const { p, retries } = provider(s, 2000);
    const res = await p.chat(request(true));
    expect(res.content).toBe('x'.repeat(40));
    expect(retries).toEqual([]);
  }, 60_000);
});

// --- Whole runs ---------------------------------------------------------------------------

describe('sop run against a trickling server (--timeout 3)', () => {
  const runs: Array<{
    name: string;
    fault: (b: ChatRequestBody) => Fault | undefined;
    extra: string[];
    reason: RegExp;
    attempts?: number;
  }> = [
    {
      name: 'agents’ streams kept open with `: keep-alive` every second',
      fault: (b) => (b.stream ? { kind: 'keep-alive', everyMs: 1000 } : undefined),
      extra: [],
      reason: /sent no new content for 3 s in the middle of its answer/,
    },
    {
      name: 'agents’ streams fed one byte a second',
      fault: (b) => (b.stream ? { kind: 'drip', everyMs: 1000, unit: 'byte' } : undefined),
      extra: [],
      reason: /sent no new content for 3 s in the middle of its answer/,
    },
    {
      name: 'agents’ streams fed one character of the reply (one chunk of content) a second',
      fault: (b) => (b.stream ? { kind: 'drip', everyMs: 1000, unit: 'char' } : undefined),
      extra: [],
      attempts: 3,
      reason:
        /did not finish its streamed answer within 30 s \(10 x --timeout 3 s\); gave up after 3 attempts: a call's streamed answers may take 90 s in all \(3 x 10 x --timeout 3 s\)/,
    },
    {
      name: 'every answer fed one byte a second, with --quiet (plain answers)',
      fault: () => ({ kind: 'drip', everyMs: 1000, unit: 'byte' }),
      extra: ['--quiet'],
      reason: /did not send its whole answer within 3 s/,
    },
  ];

  for (const r of runs) {
    it(`${r.name}: the run ends by itself (its deadlines add up to 90 s), interrupted and resumable, naming the server`, async () => {
      const s = await serve({ reply: debateReply, fault: (_i, b) => r.fault(b as ChatRequestBody) });
      const out = join(dir, `run-${counts.streamsStopped}-${Date.now()}`);
      const args = ['run', DEBATE, '--llm', 'openai', '--base-url', s.url, '--timeout', '3', '--max-turns', '4', '--out', out, ...r.extra];
      const done = await cli(args); // killed at 240 s (times SOP_TEST_TIME_SCALE): its code is then null
      expect(done.code, done.stderr).toBe(75); // interrupted for the LLM: resumable
      expect(noStack(done.stderr), done.stderr).toBe(true);
      expect(done.stderr).toMatch(r.reason);
      expect(done.stderr).toContain(`LLM call failed: ${s.url}`);
      expect(done.stderr).toContain(`gave up after ${r.attempts ?? 5} attempts`);
      expect(done.stderr).toMatch(/Resume with: sop resume /);
      expect(loadRunRecord(runFolder(out)).status).toBe('interrupted');
      counts.streamsStopped++;
    }, 300_000);
  }
});

// --- Files --------------------------------------------------------------------------------

describe('hostile files', () => {
  const fifo = () => {
    const f = join(dir, `fifo-${Date.now()}`);
    const r = spawn('mkfifo', [f]);
    return new Promise<string>((resolve, reject) => {
      r.on('close', (code) => (code === 0 ? resolve(f) : reject(new Error('mkfifo failed'))));
      r.on('error', reject);
    });
  };

  it('--pricing: a device, a FIFO, a folder and a file that is not JSON are refused with one line, never read to the end, never quoting the file', async () => {
    const notJson = join(dir, 'passwd-like.json');
    writeFileSync(notJson, SECRET + '\n');
    const badLater = join(dir, 'bad-later.json');
    writeFileSync(badLater, `{\n  "models": {\n    "m": { "input": 1, "output": 2 },\n    ${SECRET}\n  }\n}\n`);
    const cases: Array<{ file: string; reason: RegExp }> = [
      { file: '/dev/zero', reason: /^error: cannot read pricing file \/dev\/zero: is a character device, not a regular file$/ },
      { file: await fifo(), reason: /: is a named pipe \(FIFO\), not a regular file$/ },
      { file: dir, reason: /: is a directory, not a pricing file$/ },
      { file: notJson, reason: /passwd-like\.json is not JSON \(line 1, column 1: Unexpected character\)$/ },
      { file: badLater, reason: /bad-later\.json is not JSON \(line 4, column 5: Expected double-quoted property name\)$/ },
    ];
    for (const c of cases) {
      const r = await cli(
        ['run', DEBATE, '--llm', 'mock', '--max-turns', '1', '--out', join(dir, 'pricing-out'), '--pricing', c.file],
        30_000,
      );
      expect(r.code, `${c.file}: ${r.stderr}`).toBe(1); // not killed at 30 s reading /dev/zero or waiting on the FIFO
      const lines = errorLines(r.stderr);
      expect(lines, c.file).toHaveLength(1);
      expect(lines[0]).toMatch(c.reason);
      expect(r.stderr).not.toContain('CANARY');
      expect(r.stderr).not.toContain('root:x');
      counts.filesRefused++;
    }
    // The library refuses the same way.
    expect(() => loadPricing('/dev/zero')).toThrow(/is a character device, not a regular file/);
  }, 90_000);

  it('--record renames only over a regular file: a device, a FIFO, a symbolic link or a folder is refused and left as it was', async () => {
    const target = join(dir, 'precious.txt');
    writeFileSync(target, 'precious\n');
    const link = join(dir, 'record-link.json');
    symlinkSync(target, link);
    const folder = join(dir, 'record-folder');
    mkdirSync(folder);
    const pipe = await fifo();
    for (const file of ['/dev/null', pipe, link, folder]) {
      const before = statSync(file, { throwIfNoEntry: false });
      const r = await cli(['run', DEBATE, '--llm', 'mock', '--max-turns', '1', '--out', join(dir, 'record-out'), '--record', file], 30_000);
      expect(r.code, `${file}: ${r.stderr}`).toBe(1);
      const lines = errorLines(r.stderr);
      expect(lines, file).toHaveLength(1);
      expect(lines[0]).toMatch(
        /^error: --record .+: is (a character device|a named pipe \(FIFO\)|a symbolic link|a directory), not a regular file; nothing was written/,
      );
      const after = statSync(file, { throwIfNoEntry: false });
      expect(after?.ino, file).toBe(before?.ino); // not replaced
      counts.filesRefused++;
    }
    expect(readFileSync(target, 'utf8')).toBe('precious\n');
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    // A regular file is replaced, as before.
    const cassette = join(dir, 'ok.json');
    writeFileSync(cassette, 'old\n');
    const ok = await cli(
      ['run', DEBATE, '--llm', 'mock', '--max-turns', '1', '--out', join(dir, 'record-ok'), '--record', cassette],
      60_000,
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(readFileSync(cassette, 'utf8'))).toMatchObject({ version: 1, source: 'recorded' });
  }, 120_000);

  it('a cassette, an answers file and a SOP that are not JSON are described by line and column, never by their bytes', async () => {
    const cassette = join(dir, 'cassette-passwd.json');
    writeFileSync(cassette, `{\n  "version": 1,\n  ${SECRET}\n}\n`);
    const answers = join(dir, 'answers-passwd.json');
    writeFileSync(answers, `["yes",\n ${SECRET}]\n`);
    const sop = join(dir, 'sop-passwd.sop.json');
    writeFileSync(sop, `${SECRET}\n`);
    const cases: Array<{ args: string[]; reason: RegExp }> = [
      {
        args: ['run', DEBATE, '--llm', `replay:${cassette}`],
        reason: /cassette-passwd\.json: invalid JSON: Expected double-quoted property name \(line 3, column 3\)/,
      },
      { args: ['run', DEBATE, '--llm', 'mock', '--answers', answers], reason: /invalid JSON \(line 2, column 2: Unexpected character\)/ },
      { args: ['validate', sop], reason: /:1:1: .*invalid JSON: Unexpected character/ },
    ];
    for (const c of cases) {
      const r = await cli([...c.args, ...(c.args[0] === 'run' ? ['--max-turns', '1', '--out', join(dir, 'json-out')] : [])], 30_000);
      expect(r.code, r.stderr).not.toBe(0);
      expect(noStack(r.stderr), r.stderr).toBe(true);
      expect(r.stderr + r.stdout).toMatch(c.reason);
      expect(r.stderr + r.stdout).not.toContain('CANARY');
      expect(r.stderr + r.stdout).not.toContain('root:x');
      counts.filesRefused++;
    }
  }, 90_000);

  it('the viewer refuses a hard-linked file as it refuses a symbolic link', () => {
    const run = join(dir, 'view-run');
    mkdirSync(join(run, 'memory'), { recursive: true });
    mkdirSync(join(run, 'workspace'), { recursive: true });
    const outside = join(dir, 'outside-secret.txt');
    writeFileSync(outside, SECRET);
    writeFileSync(join(run, 'memory', 'plan.md'), 'the plan');
    linkSync(outside, join(run, 'workspace', 'hard.txt')); // a hard link made by code the run ran
    symlinkSync(outside, join(run, 'workspace', 'soft.txt'));
    expect(listRunFiles(run).map((f) => f.path)).toEqual(['memory/plan.md']);
    expect(readCapped(safeRunFile(run, 'memory/plan.md')!)?.text).toBe('the plan');
    for (const name of ['workspace/hard.txt', 'workspace/soft.txt']) {
      expect(safeRunFile(run, name), name).toBeUndefined();
      counts.filesRefused++;
    }
    // A file that was one name when checked and is hard-linked when read is refused at the read.
    const checked = safeRunFile(run, 'memory/plan.md')!;
    linkSync(checked, join(dir, 'plan-elsewhere.md'));
    expect(readCapped(checked)).toBeUndefined();
  });
});
