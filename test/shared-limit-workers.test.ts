// Two `sop worker --shared-limit 3` processes on one real Redis, each running 4 debates at once
// from a `sop sweep --queue`: the LLM server never has more than 3 of their calls at once (8
// without the limit), every run finishes, and each worker says the limit in its ready line.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuiltCli } from './helpers/cli.js';
import { freePort } from './helpers/free-port.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { until } from './helpers/until.js';

const DEBATE = join(process.cwd(), 'examples/debate/debate.sop.json');
const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
if (!REDIS) console.warn('shared-limit-workers test skipped: redis-server is not installed (apt-get install redis-server)');

interface Proc {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Proc {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return { child, out: () => out, exited: new Promise((r) => child.on('exit', (code) => r(code))) };
}

async function waitFor(p: Proc, re: RegExp): Promise<void> {
  if (!(await until(() => re.test(p.out()) || p.child.exitCode !== null, { timeoutMs: 90_000 })) || !re.test(p.out()))
    throw new Error(`no ${re} in:\n${p.out().slice(-2000)}`);
}

const env = { ...process.env, OPENAI_API_KEY: 'test-key', SOP_QUEUE_SECRET: 'shared-limit-test-secret-0123456789' };
const procs: Proc[] = [];
let url = '';
let llm: TestServer;

beforeAll(async () => {
  if (!REDIS) return;
  requireBuiltCli();
  const port = await freePort();
  const redis = start(REDIS, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  procs.push(redis);
  await waitFor(redis, /Ready to accept connections/);
  url = `redis://127.0.0.1:${port}`;
  llm = await startOpenAiServer({
    latencyMs: 100,
    maxInFlight: { limit: 1000, retryAfterMs: 10 }, // counts the requests it has at once
    reply: () => 'Our point stands. <verdict>Affirmative wins</verdict> <decision>1</decision>',
  });
});
afterAll(async () => {
  for (const p of procs.reverse())
    if (p.child.exitCode === null) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
  await llm?.close();
});

describe.skipIf(!REDIS)('sop worker --shared-limit', () => {
  it('keeps the calls at once of two workers within the limit they share', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sop-shared-limit-')), 'OUT');
    const roots = ['--root', process.cwd(), '--root', tmpdir()];
    const workers = [0, 1].map(() =>
      start(
        process.execPath,
        [CLI, 'worker', '--queue', url, '--concurrency', '4', '--shared-limit', '3', '--allow-base-url', llm.url, ...roots],
        env,
      ),
    );
    procs.push(...workers);
    for (const w of workers) await waitFor(w, /ready: queue .*LLM calls at once to each server shared with other workers: 3/);
    const sweep = start(
      process.execPath,
      [CLI, 'sweep', DEBATE, '--llm', 'openai', '--base-url', llm.url, '--seeds', '1-8', '--queue', url, '--out', out],
      env,
    );
    procs.push(sweep);
    expect(await sweep.exited, sweep.out()).toBe(0);
    const lines = readFileSync(join(out, 'results.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { status: string }).status)).toEqual(Array(8).fill('finished'));
    // both workers ran some of them, and the server never had more than 3 calls at once
    for (const w of workers) expect(w.out()).toMatch(/run \S+ finished/);
    expect(llm.peakInFlight).toBe(3);
  }, 180_000);
});
