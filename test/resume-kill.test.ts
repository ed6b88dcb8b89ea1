// Acceptance: kill a real `sop run` process (SIGKILL) at 50 random points of a cassette-driven
// run of 34 turns, resume each with `sop resume`, and check that every resumed transcript equals
// the uninterrupted one. Every fifth resume is itself killed and resumed again.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRunRecord } from '../src/features/journal/record.js';
import { renderTranscript } from '../src/features/journal/transcript.js';
import { Rng } from '../src/core/runtime/rng.js';
import { startHeldReplyServer } from './helpers/held-reply-server.js';
import { startOpenAiServer } from './helpers/openai-server.js';
import { codeSop } from './helpers/code-sop.js';
import { until } from './helpers/until.js';
import { spawnCli, requireBuiltCli } from './helpers/cli.js';

const FIX = join(process.cwd(), 'test/fixtures/durable');
const RUN_ARGS = [
  'run',
  join(FIX, 'town.sop.json'),
  '--llm',
  `replay:${join(FIX, 'town.cassette.json')}`,
  '--answers',
  join(FIX, 'answers.txt'),
  '--seed',
  '7',
  '--json',
];
const KILLS = 50;
const PARALLEL = 4;
const SEED = Number(process.env.SOP_KILL_SEED ?? 20261122);

interface Child {
  code: number | null;
  signal: string | null;
  lines: number;
  stderr: string;
}

/** Run the CLI; with `killAfter`, SIGKILL it once that many --json lines have been read. */
function cli(args: string[], killAfter?: number): Promise<Child> {
  return new Promise((resolve, reject) => {
    const child = spawnCli([...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let lines = 0;
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (chunk: Buffer) => {
      for (const b of chunk) if (b === 10) lines++;
      if (killAfter !== undefined && !killed && lines >= killAfter) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, lines, stderr }));
  });
}

/** Start the CLI; `done` resolves when it exits, `stderrMatches` when its stderr matches. */
function start(args: string[]) {
  const proc = spawnCli([...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const waiting: Array<{ re: RegExp; resolve: () => void }> = [];
  proc.stdout.resume();
  proc.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    for (const w of waiting.filter((x) => x.re.test(stderr))) {
      waiting.splice(waiting.indexOf(w), 1);
      w.resolve();
    }
  });
  const done = new Promise<Child>((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code, signal) => resolve({ code, signal, lines: 0, stderr }));
  });
  const stderrMatches = (re: RegExp) =>
    new Promise<void>((resolve, reject) => {
      if (re.test(stderr)) {
        resolve();
        return;
      }
      waiting.push({ re, resolve });
      void done.then(() => reject(new Error(`exited before stderr matched ${re}: ${stderr}`)));
    });
  return { proc, done, stderrMatches };
}

/** Polls `probe` until it returns a value; fails if `done` (the process) ends first. */
async function waitFor<T>(probe: () => T | undefined, done: Promise<Child>): Promise<T> {
  let ended: Child | undefined;
  void done.then((c) => {
    ended = c;
  });
  let v: T | undefined;
  await until(() => (v = probe()) !== undefined || ended !== undefined, { timeoutMs: Infinity });
  if (v === undefined) throw new Error(`the run ended first: ${ended!.stderr}`);
  return v;
}

function onlyRun(out: string): string {
  const dirs = readdirSync(out);
  if (dirs.length !== 1) throw new Error(`expected one run folder in ${out}, found ${dirs.length}`);
  return join(out, dirs[0]!);
}

/** Transcripts without what differs between two runs of the same cassette: run id, start time, timestamps. */
function transcripts(dir: string) {
  const md = readFileSync(join(dir, 'transcript.md'), 'utf8').split('\n').slice(3).join('\n');
  const jsonl = readFileSync(join(dir, 'transcript.jsonl'), 'utf8').replace(/"timestamp":"[^"]*"/g, '');
  const derived = renderTranscript(loadRunRecord(dir).effective);
  const usage = readFileSync(join(dir, 'usage.json'), 'utf8');
  return {
    md,
    jsonl,
    derivedMd: derived.markdown.split('\n').slice(3).join('\n'),
    derivedJsonl: derived.jsonl.replace(/"timestamp":"[^"]*"/g, ''),
    usage,
  };
}

async function pool<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

describe('resume after SIGKILL', () => {
  let root: string;
  let reference: ReturnType<typeof transcripts>;
  let totalLines = 0;

  beforeAll(async () => {
    requireBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'sop-kill-'));
    const out = join(root, 'reference');
    const ref = await cli([...RUN_ARGS, '--out', out]);
    expect(ref.code, ref.stderr).toBe(0);
    totalLines = ref.lines;
    reference = transcripts(onlyRun(out));
    expect(
      readFileSync(join(onlyRun(out), 'transcript.jsonl'), 'utf8')
        .trim()
        .split('\n').length,
    ).toBeGreaterThanOrEqual(30);
  });

  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it(`resumes ${KILLS} killed runs to the uninterrupted transcript`, async () => {
    const rng = new Rng(SEED);
    const points = Array.from({ length: KILLS }, (_, i) => ({
      i,
      at: 1 + Math.floor(rng.next() * (totalLines - 2)),
      again: 1 + Math.floor(rng.next() * 60),
    }));
    let identical = 0;
    let killedMidRun = 0;
    const failures: string[] = [];
    await pool(points, PARALLEL, async ({ i, at, again }) => {
      const out = join(root, `kill-${i}`);
      const first = await cli([...RUN_ARGS, '--out', out], at);
      const dir = onlyRun(out);
      const status = loadRunRecord(dir).status;
      if (status === 'killed') killedMidRun++;
      if (i % 5 === 0 && status === 'killed') {
        // Kill the resume too, somewhere in its first events, then resume once more.
        await cli(['resume', dir, '--json'], again);
      }
      const resumed = await cli(['resume', dir, '--json']);
      if (resumed.code !== 0) {
        failures.push(
          `kill ${i} after ${at} lines (${first.signal ?? first.code}): resume exited ${resumed.code}: ${resumed.stderr.trim()}`,
        );
        return;
      }
      const got = transcripts(dir);
      const same =
        got.md === reference.md &&
        got.jsonl === reference.jsonl &&
        got.derivedMd === reference.derivedMd &&
        got.derivedJsonl === reference.derivedJsonl &&
        got.usage === reference.usage;
      if (same) identical++;
      else failures.push(`kill ${i} after ${at} lines: transcript differs (${dir})`);
    });
    process.stdout.write(
      `resume after SIGKILL: ${identical}/${KILLS} resumed transcripts identical to the uninterrupted run (${killedMidRun} killed mid-run, seed ${SEED})\n`,
    );
    expect(failures).toEqual([]);
    expect(identical).toBe(KILLS);
    expect(killedMidRun).toBeGreaterThanOrEqual(KILLS * 0.8);
  }, 600_000);

  it('one Ctrl-C while the LLM is answering stops the run at once as interrupted, and it resumes', async () => {
    // The run talks to a local server whose replies depend only on the request; the signal is sent
    // while the server holds request HOLD_AT unanswered, so the run is certainly mid-way (no delay
    // or line count races a fast run to its end). The held call is aborted, not waited for.
    const HOLD_AT = 12;
    const args = (url: string, out: string) => [
      'run',
      join(FIX, 'town.sop.json'),
      '--llm',
      'openai',
      '--base-url',
      url,
      '--answers',
      join(FIX, 'answers.txt'),
      '--seed',
      '7',
      '--json',
      '--out',
      out,
    ];
    const plain = await startHeldReplyServer();
    let expected: ReturnType<typeof transcripts>;
    try {
      const ref = await cli(args(plain.url, join(root, 'sigint-ref')));
      expect(ref.code, ref.stderr).toBe(0);
      expect(plain.count).toBeGreaterThan(HOLD_AT + 10);
      expected = transcripts(onlyRun(join(root, 'sigint-ref')));
    } finally {
      await plain.close();
    }
    const server = await startHeldReplyServer(HOLD_AT);
    try {
      const out = join(root, 'sigint-1');
      const child = start(args(server.url, out));
      await Promise.race([
        server.held,
        child.done.then((c) => {
          throw new Error(`the run ended before request ${HOLD_AT}: ${c.stderr}`);
        }),
      ]);
      child.proc.kill('SIGINT');
      const stopped = await child.done; // the held request is never released: the call must be aborted
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(stopped.stderr).toMatch(/Stopping after this turn/);
      expect(stopped.stderr).not.toMatch(/MaxListenersExceeded/); // no listener left behind per LLM call
      const dir = onlyRun(out);
      expect(loadRunRecord(dir).status).toBe('interrupted');
      expect(stopped.stderr).toContain(`sop resume ${dir}`);
      server.release();
      const resumed = await cli(['resume', dir, '--json']);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(transcripts(dir)).toEqual(expected);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('a second Ctrl-C stops at once while code runs, leaving the run resumable', async () => {
    // The agent runs code that writes a marker (the readiness signal) and then sleeps; the first
    // Ctrl-C asks to stop after the turn, the second stops at once.
    const server = await startOpenAiServer({
      reply: (body) =>
        body.messages.some((m) => m.role === 'assistant')
          ? JSON.stringify({ command: 'finish', command_args: { result: 'done' } })
          : JSON.stringify({
              command: 'run_code',
              command_args: { code: 'import os, time\nopen("marker.txt", "w").write(str(os.getpid()))\ntime.sleep(60)' },
            }),
    });
    const sopFile = join(root, 'sleepy.sop.json');
    writeFileSync(sopFile, JSON.stringify(codeSop('sleepy')));
    let codePid: number | undefined;
    try {
      const out = join(root, 'sigint-2');
      const child = start([
        'run',
        sopFile,
        '--llm',
        'openai',
        '--base-url',
        server.url,
        '--auto-run',
        '--no-sandbox',
        '--json',
        '--out',
        out,
      ]);
      const marker = await waitFor(() => {
        if (!existsSync(out)) return undefined;
        const f = join(out, readdirSync(out)[0] ?? '-', 'workspace', 'marker.txt');
        return existsSync(f) && readFileSync(f, 'utf8') !== '' ? f : undefined;
      }, child.done);
      codePid = Number(readFileSync(marker, 'utf8'));
      child.proc.kill('SIGINT');
      await child.stderrMatches(/Stopping after this turn/);
      child.proc.kill('SIGINT'); // sent only now: two signals sent at once can merge into one
      const stopped = await child.done;
      expect(stopped.code, stopped.stderr).toBe(130);
      expect(stopped.stderr).toMatch(/Stopped\. Resume with/);
      const dir = onlyRun(out);
      expect(['interrupted', 'killed']).toContain(loadRunRecord(dir).status);
      expect(stopped.stderr).toContain(`sop resume ${dir}`);
    } finally {
      if (codePid)
        try {
          process.kill(codePid, 'SIGKILL');
        } catch {
          /* already gone */
        }
      await server.close();
    }
  }, 120_000);
});
