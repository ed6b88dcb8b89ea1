// sop sweep over a BullMQ queue on a real Redis (redis-server started here on a free port) with
// real `sop worker` processes: the acceptance case (24 debates against an OpenAI-compatible
// server answering after 150 ms, two workers, one SIGKILLed once it has runs under way, a third
// started: 24 finished lines with the verdict, none twice, the killed runs continued from their
// journals), --detach and --collect, bounded retries recorded with their reason, each run's
// budget and answers file carried by the jobs, and a gathering that never reads other sweeps' jobs.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResultLine } from '../src/apps/sweep/results.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { CLI } from './helpers/cli.js';
import { freePort } from './helpers/free-port.js';
import { scaled } from './helpers/time.js';

const DEBATE = join(process.cwd(), 'examples/debate/debate.sop.json');
const ASSISTANT = join(process.cwd(), 'examples/assistant/assistant.sop.json');
const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
if (!REDIS) console.warn('sweep-queue tests skipped: redis-server is not installed (apt-get install redis-server)');

interface Proc {
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
  /** Resolves once the output (stdout and stderr) matches. */
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
}

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, cwd?: string): Proc {
  const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const waiters: Array<() => boolean> = [];
  const p: Proc = {
    child,
    out: '',
    exited: new Promise((r) => child.on('exit', (code) => r(code))),
    waitFor: (re, ms = 90_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${re} within ${scaled(ms)} ms in:\n${p.out.slice(-3000)}`)), scaled(ms));
        const check = () => {
          const m = p.out.match(re);
          if (!m) return false;
          clearTimeout(timer);
          resolve(m);
          return true;
        };
        if (!check()) waiters.push(check);
      }),
  };
  const onData = (d: Buffer) => {
    p.out += d.toString();
    for (let i = waiters.length - 1; i >= 0; i--) if (waiters[i]!()) waiters.splice(i, 1);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return p;
}

// the shared secret jobs are signed with (docs/scale.md)
const env = { ...process.env, OPENAI_API_KEY: '', SOP_QUEUE_SECRET: 'sweep-queue-test-secret-0123456789' };
// the workers take jobs whose files are in the repository (the examples) and the test's folders
const ROOTS = ['--root', process.cwd(), '--root', tmpdir()];
const sop = (args: string[]) => start(process.execPath, [CLI, ...args], env);
const lines = (out: string): ResultLine[] =>
  readFileSync(join(out, 'results.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ResultLine);

describe.skipIf(!REDIS)('sop sweep --queue with sop worker processes on Redis', () => {
  let redis: Proc;
  let url: string;
  let llm: TestServer;
  const procs: Proc[] = [];

  beforeAll(async () => {
    const port = await freePort();
    redis = start(REDIS!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    await redis.waitFor(/Ready to accept connections/);
    url = `redis://127.0.0.1:${port}`;
    llm = await startOpenAiServer({
      latencyMs: 150,
      reply: () => 'Our point stands. <verdict>Affirmative wins</verdict> <decision>1</decision>',
    });
  });

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    redis?.child.kill('SIGTERM');
    await redis?.exited;
    await llm?.close();
  });

  const worker = (...extra: string[]) => {
    const w = sop(['worker', '--queue', url, '--concurrency', '4', ...ROOTS, ...extra]);
    procs.push(w);
    return w;
  };

  it('acceptance: 24 runs over two workers, one SIGKILLed mid-run and a third started, give 24 finished lines with the verdict', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sop-queue-')), 'OUT');
    const a = worker('--allow-base-url', llm.url);
    const b = worker('--allow-base-url', llm.url);
    await Promise.all([a.waitFor(/ready: queue/), b.waitFor(/ready: queue/)]);
    const sweep = sop(['sweep', DEBATE, '--llm', 'openai', '--base-url', llm.url, '--seeds', '1-24', '--queue', url, '--out', out]);
    procs.push(sweep);
    // A has runs under way: one of them has journaled a finished turn
    const [, key] = await a.waitFor(/run (\S+) started/);
    const journal = join(out, 'runs', key!, 'journal.jsonl');
    await new Promise<void>((resolve, reject) => {
      const deadline = Date.now() + scaled(60_000);
      const poll = () => {
        if (existsSync(journal) && readFileSync(journal, 'utf8').includes('"type":"checkpoint"')) resolve();
        else if (Date.now() > deadline) reject(new Error(`no checkpoint in ${journal}`));
        else setTimeout(poll, 20);
      };
      poll();
    });
    const startedByA = [...a.out.matchAll(/run (\S+) started/g)].map((m) => m[1]!);
    a.child.kill('SIGKILL');
    await a.exited;
    const c = worker('--allow-base-url', llm.url);
    await c.waitFor(/ready: queue/);

    expect(await sweep.exited, sweep.out).toBe(0);
    expect(sweep.out).toContain('24 of 24 runs done, 0 failed');
    const rs = lines(out);
    expect(rs).toHaveLength(24);
    expect(new Set(rs.map((r) => r.key)).size).toBe(24);
    expect(rs.map((r) => r.seed)).toEqual(Array.from({ length: 24 }, (_, i) => i + 1));
    for (const r of rs) {
      expect(r.status).toBe('finished');
      expect(r.outputs.verdict).toBe('Affirmative wins');
      // one run_finished per run folder: no run was done twice
      const events = readFileSync(join(r.run_dir!, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);
      expect(events.filter((l) => l.includes('"type":"run_finished"'))).toHaveLength(1);
    }
    // the runs A had under way were continued from their journals by another worker
    const killed = rs.filter((r) => startedByA.includes(r.key) && r.resumed);
    expect(killed.length).toBeGreaterThan(0);
    for (const r of killed) expect(r.worker).not.toBe(`${r.worker.split(':')[0]}:${a.child.pid}`);
    expect(rs.some((r) => r.key === key && r.resumed)).toBe(true);
    expect(b.out + c.out).toMatch(/started \(attempt 2\)/);

    // the same sweep again: nothing to do, nothing added
    const again = sop(['sweep', DEBATE, '--llm', 'openai', '--base-url', llm.url, '--seeds', '1-24', '--queue', url, '--out', out]);
    procs.push(again);
    expect(await again.exited).toBe(0);
    expect(again.out).toContain('24 already done, skipped');
    expect(lines(out)).toHaveLength(24);
    b.child.kill('SIGTERM');
    c.child.kill('SIGTERM');
    await Promise.all([b.exited, c.exited]);
  }, 240_000);

  it('--detach returns at once, --collect gathers later; retries are bounded, failures say why, a re-run retries them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-queue-'));
    const file = join(dir, 'debate.sop.json');
    copyFileSync(DEBATE, file);
    const out = join(dir, 'OUT');
    const args = ['sweep', file, '--llm', 'mock', '--seeds', '1-3', '--queue', url, '--out', out];
    const detach = sop([...args, '--detach', '--attempts', '2']);
    expect(await detach.exited, detach.out).toBe(0);
    expect(detach.out).toContain('3 runs queued');
    expect(detach.out).toContain('Detached');
    // another sweep (another SOP file) has nothing queued
    const other = sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--queue', url, '--out', out, '--collect']);
    procs.push(other);
    expect(await other.exited).toBe(1);
    expect(other.out).toContain('error: --collect: none of the 3 runs to gather is on the queue');

    // the SOP file is gone when the worker gets the runs: each fails twice, then for good
    rmSync(file);
    const w = worker();
    await w.waitFor(/(run \S+ failed: [^\n]*\n[^]*){6}/);
    copyFileSync(DEBATE, file);
    const collect = sop([...args, '--collect']);
    procs.push(collect);
    expect(await collect.exited).toBe(1);
    let rs = lines(out);
    expect(rs).toHaveLength(3);
    for (const r of rs) {
      expect(r.status).toBe('failed');
      expect(r.attempts).toBe(2);
      expect(r.error).toMatch(/debate\.sop\.json/);
    }
    expect(collect.out).toContain('0 of 3 runs done, 3 failed');

    // the same sweep again (the file is back): the failed runs are queued again and finish
    const rerun = sop(args);
    procs.push(rerun);
    expect(await rerun.exited, rerun.out).toBe(0);
    rs = lines(out);
    expect(rs).toHaveLength(3);
    expect(rs.every((r) => r.status === 'finished' && r.outputs.verdict !== undefined)).toBe(true);
    w.child.kill('SIGTERM');
    await w.exited;
  }, 120_000);

  it('a worker in another folder finds a cassette given by a relative path, and reads a SOP file again once it is edited', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-queue-'));
    const file = join(dir, 'debate.sop.json');
    copyFileSync(DEBATE, file);
    // the worker runs in another folder than the sweep (the repository, where the cassette path is relative to)
    const w = start(process.execPath, [CLI, 'worker', '--queue', url, '--concurrency', '2', ...ROOTS, '--allow-replay'], env, tmpdir());
    procs.push(w);
    await w.waitFor(/ready: queue/);
    const replay = sop(['sweep', file, '--llm', 'replay:examples/debate/debate.cassette.json', '--queue', url, '--out', join(dir, 'A')]);
    procs.push(replay);
    expect(await replay.exited, replay.out).toBe(0);
    expect(lines(join(dir, 'A'))[0]!.outputs.verdict).toMatch(/^The affirmative wins/);

    const mock = (out: string) => sop(['sweep', file, '--llm', 'mock', '--queue', url, '--out', join(dir, out)]);
    const before = mock('B');
    procs.push(before);
    expect(await before.exited, before.out).toBe(0);
    expect(lines(join(dir, 'B'))[0]!.outputs.verdict).toContain('Judge Ruth');
    // the SOP is edited between two sweeps: the worker runs the new one, not the one it read first
    writeFileSync(file, readFileSync(file, 'utf8').replaceAll('Judge Ruth', 'Judge Rosalind'));
    const after = mock('C');
    procs.push(after);
    expect(await after.exited, after.out).toBe(0);
    expect(lines(join(dir, 'C'))[0]!.outputs.verdict).toContain('Judge Rosalind');
    w.child.kill('SIGTERM');
    await w.exited;
  }, 120_000);

  it('queued jobs carry --budget-tokens and --answers (a relative path made absolute) to a worker in another folder', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-queue-'));
    const w = start(process.execPath, [CLI, 'worker', '--queue', url, '--concurrency', '2', ...ROOTS, '--allow-answers'], env, tmpdir());
    procs.push(w);
    await w.waitFor(/ready: queue/);
    const budget = sop([
      'sweep',
      DEBATE,
      '--llm',
      'mock',
      '--seeds',
      '1-3',
      '--budget-tokens',
      '1500',
      '--queue',
      url,
      '--out',
      join(dir, 'B'),
    ]);
    procs.push(budget);
    expect(await budget.exited, budget.out).toBe(0);
    expect(budget.out).toContain('3 of 3 runs done (3 stopped by a budget), 0 failed');
    const bs = lines(join(dir, 'B'));
    expect(bs.map((r) => r.status)).toEqual(['budget', 'budget', 'budget']);
    for (const r of bs) expect(r.budget).toMatch(/^--budget-tokens 1500: \d+ of 1500 tokens used/);
    expect(readFileSync(join(dir, 'B', 'summary.md'), 'utf8')).toMatch(/\| --budget-tokens 1500 \| 3 \|/);

    // the sweep is started in its own folder with a relative answers file; the worker is elsewhere
    writeFileSync(join(dir, 'answers.txt'), 'Food and long walks by the river, please.\n');
    const human = start(
      process.execPath,
      [CLI, 'sweep', ASSISTANT, '--llm', 'mock', '--seeds', '1-2', '--answers', 'answers.txt', '--queue', url, '--out', 'H'],
      env,
      dir,
    );
    procs.push(human);
    expect(await human.exited, human.out).toBe(0);
    for (const r of lines(join(dir, 'H'))) {
      expect(r.status).toBe('finished');
      expect(readFileSync(join(r.run_dir!, 'journal.jsonl'), 'utf8')).toContain('Food and long walks by the river');
    }
    w.child.kill('SIGTERM');
    await w.exited;
  }, 120_000);

  it("gathering asks Redis only about this sweep's jobs: 1,000 finished jobs of an older sweep are never read", async () => {
    const { Queue, Worker } = await import('bullmq');
    const { Redis } = await import('ioredis');
    const port = Number(new URL(url).port);
    const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
    // an older sweep's 1,000 finished jobs, each with a result line
    const old = new Queue('sop-runs', { connection });
    await old.addBulk(
      Array.from({ length: 1000 }, (_, i) => ({
        name: 'run',
        data: { point: { key: `s${i}` } },
        opts: { jobId: `oldsweep0000-s${i}`, removeOnComplete: false },
      })),
    );
    let done = 0;
    const all = new Promise<void>((resolve) => {
      const w = new Worker('sop-runs', async (job) => ({ key: job.data.point.key, status: 'finished', outputs: {} }), {
        connection,
        concurrency: 50,
      });
      w.on('completed', () => {
        if (++done === 1000) void w.close().then(resolve);
      });
    });
    await all;
    await old.close();

    const dir = mkdtempSync(join(tmpdir(), 'sop-queue-'));
    const args = ['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--queue', url, '--out', join(dir, 'OUT')];
    const detach = sop([...args, '--detach']);
    procs.push(detach);
    expect(await detach.exited, detach.out).toBe(0);
    const w = worker();
    await w.waitFor(/(run \S+ finished after[^]*){3}/);
    const redis = new Redis({ host: '127.0.0.1', port });
    const hgetall = async () => Number(((await redis.info('commandstats')).match(/cmdstat_hgetall:calls=(\d+)/) ?? [])[1] ?? 0);
    const before = await hgetall();
    const collect = sop([...args, '--collect']);
    procs.push(collect);
    expect(await collect.exited, collect.out).toBe(0);
    const reads = (await hgetall()) - before;
    await redis.quit();
    expect(lines(join(dir, 'OUT')).map((r) => r.status)).toEqual(['finished', 'finished', 'finished']);
    // its 3 jobs read (and each looked up once before): not the 1,000 others at every poll
    expect(reads).toBeLessThan(20);
    w.child.kill('SIGTERM');
    await w.exited;
  }, 120_000);
});
