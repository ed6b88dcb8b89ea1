// Two `sop worker --shared-limit 3` processes on one real Redis, each running 4 debates at once
// from a `sop sweep --queue`: the LLM server never has more than 3 of their calls at once (8
// without the limit), every run finishes, and each worker says the limit in its ready line.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuiltCli } from './helpers/cli.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { REDIS, startRedis } from './helpers/redis.js';
import { watchProcess, type WatchedProcess } from './helpers/watch-process.js';

const DEBATE = join(process.cwd(), 'examples/debate/debate.sop.json');
if (!REDIS) console.warn('shared-limit-workers test skipped: redis-server is not installed (apt-get install redis-server)');

const env = { ...process.env, OPENAI_API_KEY: 'test-key', SOP_QUEUE_SECRET: 'shared-limit-test-secret-0123456789' };
const procs: WatchedProcess[] = [];
let url = '';
let llm: TestServer;

beforeAll(async () => {
  if (!REDIS) return;
  requireBuiltCli();
  const redis = await startRedis();
  procs.push(redis.process); // stopped last, after the workers that talk to it
  url = redis.url;
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
      watchProcess(
        process.execPath,
        [CLI, 'worker', '--queue', url, '--concurrency', '4', '--shared-limit', '3', '--allow-base-url', llm.url, ...roots],
        env,
      ),
    );
    procs.push(...workers);
    for (const w of workers) await w.waitFor(/ready: queue .*LLM calls at once to each server shared with other workers: 3/);
    const sweep = watchProcess(
      process.execPath,
      [CLI, 'sweep', DEBATE, '--llm', 'openai', '--base-url', llm.url, '--seeds', '1-8', '--queue', url, '--out', out],
      env,
    );
    procs.push(sweep);
    expect(await sweep.exited, sweep.out).toBe(0);
    const lines = readFileSync(join(out, 'results.jsonl'), 'utf8').trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { status: string }).status)).toEqual(Array(8).fill('finished'));
    // both workers ran some of them, and the server never had more than 3 calls at once
    for (const w of workers) expect(w.out).toMatch(/run \S+ finished/);
    expect(llm.peakInFlight).toBe(3);
  }, 180_000);
});
