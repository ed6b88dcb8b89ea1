// One population step over many `sop worker --shards` processes (docs/scale.md#one-step-over-many-workers),
// on a real redis-server started here: a 3,000-agent step gives byte-identical step tables (agents,
// steps, actions, metrics) in this process, over 1 worker and over 3; with 3 workers answering
// through OpenAI-compatible servers, one SIGKILLed mid-shard, the run still gives the tables of the
// run without shards, its shard is finished by another worker that asks only the calls not stored
// (each server request counted: at most the killed worker's calls in flight are asked twice), and
// the run counts every call once (its usage equals the unsharded run's). A shard job is untrusted:
// an unsigned one is refused, and one naming a model the worker does not allow fails the run with
// the reason before any call is made.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SHARD_QUEUE, STEP_QUEUE } from '../src/features/shards/job.js';
import { CLI } from './helpers/cli.js';
import { freePort } from './helpers/free-port.js';
import { startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';
import { until } from './helpers/until.js';

const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
if (!REDIS) console.warn('shards-queue tests skipped: redis-server is not installed (apt-get install redis-server)');

interface Proc {
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
}

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Proc {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = { child, out: '', exited: new Promise((r) => child.on('exit', (code) => r(code))) };
  const onData = (d: Buffer) => void (p.out += d.toString());
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return p;
}

const env = { ...process.env, OPENAI_API_KEY: 'sk-test-shards', SOP_QUEUE_SECRET: 'shards-queue-test-secret-0123456789' };
const TABLES = ['agents', 'steps', 'actions', 'metrics'];

/** A social step of 3,000 generated agents, every one acting once by its own LLM call. */
const SOP = {
  name: 'shard-step',
  llm: { model: 'gpt-4o-mini', temperature: 0.7 },
  agents: {},
  root: 'feed',
  states: {
    feed: {
      environment_prompt: 'You use a small social network. Your feed shows posts by people you follow.',
      population: {
        source: {
          generate: {
            n: 3000,
            seed: 7,
            columns: {
              name: { choice: ['Ada', 'Ben', 'Chloe', 'Dev'] },
              age: { normal: { mean: 40, sd: 12, min: 18, max: 90, round: true } },
              interest: { categorical: { sports: 0.3, politics: 0.3, music: 0.4 } },
            },
          },
        },
        id: 'id',
        persona: 'You are {{name}}, {{age}}, who mostly cares about {{interest}}.',
      },
      world: {
        type: 'social',
        params: { rank: 'hot', feed_size: 5, seed_posts: [{ id: 'news', author: 'a0', text: 'Buses are free from next month.' }] },
        graph: { generate: { model: 'barabasi_albert', m: 3, seed: 7 } },
      },
      actions: ['post', 'like', 'repost', 'follow', 'idle'],
      activation: { probability: 1 },
      cognition: [{ tier: 'per_agent' }],
      resolution: { type: 'shuffle', seed: 7 },
      max_steps: 1,
      next_states: { '1': 'end' },
    },
    end: { final: true },
  },
};

/** A server's action for a request: one of four, chosen by the request's text (the same request, the same action). */
function action(body: ChatRequestBody): string {
  let h = 2166136261;
  for (const ch of JSON.stringify(body.messages)) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  const actions = [
    { command: 'repost', command_args: { post_id: 'news' } },
    { command: 'like', command_args: { post_id: 'news' } },
    { command: 'post', command_args: { text: `buses ${(h >>> 0) % 97}` } },
    { command: 'idle', command_args: {} },
  ];
  return JSON.stringify(actions[(h >>> 0) % actions.length]);
}

describe.skipIf(!REDIS)('one population step over sop worker --shards processes on Redis', () => {
  let redis: Proc;
  let url: string;
  let dir: string;
  let file: string;
  const procs: Proc[] = [];
  const servers: TestServer[] = [];

  beforeAll(async () => {
    const port = await freePort();
    redis = start(REDIS!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    await until(() => redis.out.includes('Ready to accept connections'), { timeoutMs: 10_000 });
    url = `redis://127.0.0.1:${port}`;
    dir = mkdtempSync(join(tmpdir(), 'sop-shards-'));
    file = join(dir, 'step.sop.json');
    writeFileSync(file, JSON.stringify(SOP));
  });

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    redis?.child.kill('SIGTERM');
    await redis?.exited;
    await Promise.all(servers.map((s) => s.close()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const sop = (args: string[]) => {
    const p = start(process.execPath, [CLI, ...args], env);
    procs.push(p);
    return p;
  };
  const worker = async (...extra: string[]) => {
    const w = sop(['worker', '--queue', url, '--shards', ...extra]);
    expect(await until(() => w.out.includes('ready: shard queue'), { timeoutMs: 60_000 }), w.out).toBe(true);
    return w;
  };
  /** Runs the SOP to its end; returns its closing line and run folder. */
  const run = async (out: string, ...extra: string[]) => {
    const r = sop(['run', file, '--out', join(dir, out), '--quiet', ...extra]);
    expect(await r.exited, r.out).toBe(0);
    const runDir = join(dir, out, readdirSync(join(dir, out))[0]!);
    return { line: r.out.replace(/ Run folder: .*/s, ''), runDir };
  };
  /** The step tables, every row as JSON after its table's name, in a fixed order (one query). */
  const tables = async (runDir: string) => {
    const sql = TABLES.map((t) => `select '${t}' as t, to_json(x)::varchar as row from ${t} x`).join(' union all ') + ' order by all';
    const q = sop(['query', runDir, sql, '--csv']);
    expect(await q.exited, q.out).toBe(0);
    return q.out;
  };
  const llmCalls = (runDir: string) =>
    readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"type":"llm_call"')).length;

  it('a run whose shards no worker takes says so, rather than wait in silence', async () => {
    const r = sop(['run', file, '--out', join(dir, 'unattended'), '--llm', 'mock', '--shard-over', url]);
    expect(await until(() => r.out.includes('no sop worker --shards is connected there'), { timeoutMs: 60_000 }), r.out).toBe(true);
    expect(r.out).toMatch(/3000 LLM calls wait in shard jobs on redis:\/\/127\.0\.0\.1:\d+/);
    r.child.kill('SIGKILL');
    await r.exited;
    // its shard jobs go, so that the workers of the next tests do not take them
    for (const name of [SHARD_QUEUE, STEP_QUEUE]) {
      const q = new Queue(name, { connection: { host: '127.0.0.1', port: Number(new URL(url).port) } });
      await q.obliterate({ force: true });
      await q.close();
    }
  }, 90_000);

  it('acceptance: a 3,000-agent step gives the same tables in this process, over 1 worker and over 3', async () => {
    const local = await run('local', '--llm', 'mock');
    const w1 = await worker('--llm', 'mock');
    const one = await run('one', '--llm', 'mock', '--shard-over', url);
    expect(w1.out.match(/shard \d of step \w+ started: 1000 calls/g)).toHaveLength(3);
    const w2 = await worker('--llm', 'mock');
    const w3 = await worker('--llm', 'mock');
    const before = [w1, w2, w3].map((w) => w.out.length);
    const three = await run('three', '--llm', 'mock', '--shard-over', url);
    // the second step was spread: more than one worker took a shard of it
    const took = [w1, w2, w3].filter((w, n) => /shard \d of step \w+ started/.test(w.out.slice(before[n]))).length;
    expect(took).toBeGreaterThan(1);

    const want = await tables(local.runDir);
    for (const t of TABLES) expect(want).toContain(`${t},`);
    expect(want.split('\n').filter((l) => l.startsWith('actions,')).length).toBe(3000); // one action each
    expect(await tables(one.runDir)).toEqual(want);
    expect(await tables(three.runDir)).toEqual(want);
    // every call counted once, by the run
    expect(one.line).toBe(local.line);
    expect(three.line).toBe(local.line);
    expect(local.line).toContain('3000 LLM calls');
    for (const w of [w1, w2, w3]) {
      w.child.kill('SIGTERM');
      expect(await w.exited).toBe(130);
    }
  }, 240_000);

  it('a worker SIGKILLed mid-shard: its shard is finished by another, no stored call asked again, the same tables', async () => {
    const serve = async () => {
      const s = await startOpenAiServer({ latencyMs: 30, reply: (body) => action(body) });
      servers.push(s);
      return s;
    };
    const direct = await serve();
    const base = await run('direct', '--llm', 'openai', '--base-url', direct.url);
    expect(direct.requests).toHaveLength(3000);

    // each worker has its own server, so what each asked is counted
    const [sa, sb, sc] = [await serve(), await serve(), await serve()];
    const opts = (s: TestServer) => [
      '--llm',
      'openai',
      '--base-url',
      s.url,
      '--allow-model',
      'gpt-4o-mini',
      '--shard-concurrency',
      '8',
      '--lock-ms',
      '2000',
    ];
    const a = await worker(...opts(sa));
    const b = await worker(...opts(sb));
    const c = await worker(...opts(sc));
    const r = sop(['run', file, '--out', join(dir, 'killed'), '--quiet', '--llm', 'openai', '--base-url', direct.url, '--shard-over', url]);
    procs.push(r);
    // A is mid-shard: it has started one, answered some of its calls, and not finished it
    expect(await until(() => /shard \d of step \w+ started/.test(a.out) && sa.requests.length >= 40, { timeoutMs: 90_000 })).toBe(true);
    a.child.kill('SIGKILL');
    await a.exited;
    expect(a.out).not.toMatch(/ done: /);
    const askedByA = sa.requests.length;
    expect(askedByA).toBeLessThan(1000);

    expect(await r.exited, r.out).toBe(0);
    const killedDir = join(dir, 'killed', readdirSync(join(dir, 'killed'))[0]!);
    // another worker took A's shard over and asked only the calls A had not stored
    const resumed = [b, c].map((w) => w.out.match(/done: (\d+) asked, (\d+) answered before/g) ?? []).flat();
    expect(
      resumed.some((l) => !/ 0 answered before/.test(l)),
      `${b.out}\n${c.out}`,
    ).toBe(true);
    const asked = sa.requests.length + sb.requests.length + sc.requests.length;
    expect(asked).toBeGreaterThanOrEqual(3000);
    expect(asked).toBeLessThanOrEqual(3000 + 8); // at most A's calls in flight at the kill, asked again

    expect(await tables(killedDir)).toEqual(await tables(base.runDir));
    expect(r.out.replace(/ Run folder: .*/s, '')).toBe(base.line); // usage: every call counted once
    expect(llmCalls(killedDir)).toBe(3000);
    for (const w of [b, c]) {
      w.child.kill('SIGTERM');
      await w.exited;
    }
  }, 240_000);

  it('a shard job is untrusted: an unsigned one is refused, and a model the worker does not allow fails the run with the reason, before any call', async () => {
    const server = await startOpenAiServer({ reply: (body) => action(body) });
    servers.push(server);
    const w = await worker('--llm', 'openai', '--base-url', server.url, '--lock-ms', '2000');
    // a job anyone who can write to the Redis could add, naming its own server and model
    const queue = new Queue(SHARD_QUEUE, { connection: { host: '127.0.0.1', port: Number(new URL(url).port) } });
    const forged = {
      v: 1,
      step: 'f'.repeat(24),
      shard: 0,
      calls: [
        {
          key: '1:a0',
          model: 'gpt-4o',
          baseUrl: 'http://127.0.0.1:9/v1',
          messages: [{ role: 'user', content: 'hi' }],
          meta: { purpose: 'agent', state: 'feed', turn: 1 },
        },
      ],
    };
    await queue.add('shard', forged, { jobId: 'shard-forged-0' });
    expect(
      await until(() => w.out.includes('shard job shard-forged-0 failed: refused: the job is not signed'), { timeoutMs: 20_000 }),
      w.out,
    ).toBe(true);
    await queue.close();

    const r = sop(['run', file, '--out', join(dir, 'refused'), '--quiet', '--llm', 'mock', '--shard-over', url]);
    expect(await r.exited).not.toBe(0);
    expect(r.out).toContain(
      'refused: the shard asks for model "gpt-4o-mini", which this worker does not allow (start it with --allow-model NAME, or --model NAME for every call)',
    );
    expect(server.requests).toHaveLength(0);
    w.child.kill('SIGTERM');
    await w.exited;
  }, 120_000);
});
