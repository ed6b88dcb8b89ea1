// Hostile population stores (issue 32, the stores half): the stores a population run shares and
// the files it is handed back. Through the real `sop` binary, a real redis-server and an
// OpenAI-compatible server on 127.0.0.1 (the one part replaced):
// - a shard worker whose server echoes OPENAI_API_KEY, a DATABASE_URL password and
//   SOP_QUEUE_SECRET in every reply, and a population whose data holds the key, run over Redis and
//   SIGKILLed mid-step: no value anywhere in Redis holds any of the three secrets;
// - `sop query` with a deadline and a memory limit: a query that would run for ever, or take the
//   machine's memory, ends with one line and exit 1;
// - batch result files streamed line by line (a file past the cap, a line past the cap, duplicated
//   custom_ids, lines that are not results).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { CLI, requireBuiltCli } from './helpers/cli.js';
import { freePort } from './helpers/free-port.js';
import { startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';
import { until } from './helpers/until.js';
import { writePopulationSop } from './helpers/population-sop.js';
import { queryResults } from '../src/api/results-db.js';
import { runSop, type RunEvent } from '../src/index.js';
import { OpenAiBatchTarget } from '../src/features/batch/openai-target.js';
import { startBatchServer, type BatchServerOptions } from './helpers/batch-server.js';

const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
if (!REDIS)
  console.warn('hostile population stores: the Redis tests are skipped: redis-server is not installed (apt-get install redis-server)');

const KEY = 'sk-hostile-stores-KEY-7f3a9c5d';
const DB_PASSWORD = 'pgPASS-stores-4e1d9b';
const QUEUE_SECRET = 'queue-secret-stores-0123456789abcdef';
const SECRETS = [KEY, DB_PASSWORD, QUEUE_SECRET];
const env = {
  ...process.env,
  OPENAI_API_KEY: KEY,
  DATABASE_URL: `postgres://app:${DB_PASSWORD}@db.example:5432/app`,
  SOP_QUEUE_SECRET: QUEUE_SECRET,
};

const counts = {
  redisValues: 0,
  secretsInRedis: 0,
  repliesRedacted: 0,
  queriesStopped: 0,
  longestRetryWaitMs: -1,
  judgePrompts: 0,
  judgeLeaks: 0,
  batchFilesStreamed: 0,
  streamedBytes: 0,
  batchFilesRefused: 0,
  droppedLinesTold: 0,
};

interface Proc {
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
}

function start(cmd: string, args: string[], e: NodeJS.ProcessEnv = env): Proc {
  const child = spawn(cmd, args, { env: e, stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = { child, out: '', exited: new Promise((r) => child.on('exit', (code) => r(code))) };
  const onData = (d: Buffer) => void (p.out += d.toString());
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return p;
}

let dir: string;
const procs: Proc[] = [];
const servers: TestServer[] = [];
const sop = (args: string[], e: NodeJS.ProcessEnv = env) => {
  const p = start(process.execPath, [CLI, ...args], e);
  procs.push(p);
  return p;
};

beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-hostile-stores-'));
});

afterAll(async () => {
  for (const p of procs) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
  await Promise.all(procs.map((p) => p.exited));
  await Promise.all(servers.map((s) => s.close()));
  if (dir) rmSync(dir, { recursive: true, force: true });
  console.log(
    `hostile population stores: ${counts.secretsInRedis} secrets in Redis (${counts.redisValues} values read after a SIGKILL, ${counts.repliesRedacted} replies redacted), ` +
      `${counts.queriesStopped} queries stopped with one line, ` +
      `retry-after 999999 waited at most ${counts.longestRetryWaitMs} ms with --timeout 2, ` +
      `${counts.judgeLeaks} private observations in ${counts.judgePrompts} judge prompts, ` +
      `${counts.batchFilesStreamed} batch file streamed (${(counts.streamedBytes / 2 ** 20).toFixed(0)} MiB), ${counts.batchFilesRefused} batch files refused with one line, ${counts.droppedLinesTold} dropped result lines told`,
  );
});

/** A social step of `n` generated agents, each acting once; every persona shows a note from the data that holds the key. */
function socialSop(n: number) {
  return {
    name: 'stores-step',
    llm: { model: 'gpt-4o-mini', temperature: 0.7 },
    agents: {},
    root: 'feed',
    states: {
      feed: {
        environment_prompt: 'You use a small social network. Your feed shows posts by people you follow.',
        population: {
          source: {
            generate: {
              n,
              seed: 7,
              columns: { name: { choice: ['Ada', 'Ben', 'Chloe', 'Dev'] }, note: { choice: [`token ${KEY}`] } },
            },
          },
          id: 'id',
          persona: 'You are {{name}}. Your notes say: {{note}}.',
        },
        world: {
          type: 'social',
          params: { rank: 'hot', feed_size: 5, seed_posts: [{ id: 'news', author: 'a0', text: 'Buses are free from next month.' }] },
          graph: { generate: { model: 'barabasi_albert', m: 3, seed: 7 } },
        },
        actions: ['post', 'idle'],
        activation: { probability: 1 },
        cognition: [{ tier: 'per_agent' }],
        resolution: { type: 'shuffle', seed: 7 },
        max_steps: 1,
        next_states: { '1': 'end' },
      },
      end: { final: true },
    },
  };
}

/** Every value Redis holds, as text: strings, hash fields and values, lists, sets, sorted sets and streams. */
async function everyValue(redis: Redis): Promise<string[]> {
  const out: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === 'string') out.push((await redis.get(key)) ?? '');
      else if (type === 'hash') out.push(...Object.entries(await redis.hgetall(key)).flat());
      else if (type === 'list') out.push(...(await redis.lrange(key, 0, -1)));
      else if (type === 'set') out.push(...(await redis.smembers(key)));
      else if (type === 'zset') out.push(...(await redis.zrange(key, 0, -1)));
      else if (type === 'stream') for (const [, fields] of await redis.xrange(key, '-', '+')) out.push(...fields);
      out.push(key);
    }
  } while (cursor !== '0');
  return out;
}

const holdsSecret = (v: string) => SECRETS.some((s) => v.toLowerCase().includes(s.toLowerCase()));

describe.skipIf(!REDIS)('Redis holds no secret of the run or its workers', () => {
  let redisProc: Proc;
  let url: string;
  let redis: Redis;

  beforeAll(async () => {
    const port = await freePort();
    redisProc = start(REDIS!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    procs.push(redisProc);
    await until(() => redisProc.out.includes('Ready to accept connections'), { timeoutMs: 10_000 });
    url = `redis://127.0.0.1:${port}`;
    redis = new Redis({ host: '127.0.0.1', port });
  });
  afterAll(() => redis?.disconnect());

  it('acceptance: replies echoing OPENAI_API_KEY, a DATABASE_URL password and SOP_QUEUE_SECRET, the run SIGKILLed mid-step', async () => {
    // the server echoes the three secrets in every post it is asked for
    const server = await startOpenAiServer({
      latencyMs: 20,
      reply: () => JSON.stringify({ command: 'post', command_args: { text: `leak ${KEY} ${DB_PASSWORD} ${QUEUE_SECRET} end` } }),
    });
    servers.push(server);
    const file = join(dir, 'step.sop.json');
    writeFileSync(file, JSON.stringify(socialSop(250)));
    const worker = sop([
      'worker',
      '--queue',
      url,
      '--shards',
      '--llm',
      'openai',
      '--base-url',
      server.url,
      '--allow-model',
      '*',
      '--shard-concurrency',
      '4',
    ]);
    expect(await until(() => worker.out.includes('ready: shard queue'), { timeoutMs: 60_000 }), worker.out).toBe(true);
    const run = sop(['run', file, '--out', join(dir, 'runs'), '--shard-over', url, '--shard-size', '50', '--quiet']);
    const fields = async () => {
      const keys = await redis.keys('sop-shards:replies:*');
      return keys.length === 0 ? 0 : redis.hlen(keys[0]!);
    };
    expect(await until(async () => (await fields()) >= 20, { timeoutMs: 90_000, intervalMs: 5 }), run.out + worker.out).toBe(true);
    run.child.kill('SIGKILL');
    await run.exited;
    // the worker goes on answering the shards the dead run queued: every reply is stored
    expect(await until(async () => (await fields()) === 250, { timeoutMs: 120_000, intervalMs: 50 }), worker.out).toBe(true);
    expect(server.requests.length).toBeGreaterThanOrEqual(250);
    // the server was sent the personas' notes without the key the data held
    expect(server.requests.some((r) => JSON.stringify(r.body).includes('token [REDACTED]'))).toBe(true);
    expect(server.requests.some((r) => JSON.stringify(r.body).includes(KEY))).toBe(false);

    const values = await everyValue(redis);
    counts.redisValues = values.length;
    counts.secretsInRedis = values.filter(holdsSecret).length;
    counts.repliesRedacted = Object.values(await redis.hgetall((await redis.keys('sop-shards:replies:*'))[0]!)).filter((v) =>
      v.includes('leak [REDACTED] [REDACTED] [REDACTED] end'),
    ).length;
    expect(values.filter(holdsSecret)).toEqual([]);
    expect(counts.repliesRedacted).toBe(250);
    expect(worker.out).not.toContain(KEY);
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(130);
    expect(readdirSync(join(dir, 'runs'))).toHaveLength(1);
  }, 300_000);
});

describe('sop query: a deadline and a memory limit', () => {
  let runDir: string;
  /** Runs `sop query` to its end: its exit code, its output and how long it took. */
  const query = async (...args: string[]) => {
    const t0 = Date.now();
    const q = sop(['query', runDir, ...args]);
    const code = await q.exited;
    return { code, out: q.out, ms: Date.now() - t0 };
  };
  const oneLine = (r: { code: number | null; out: string }, re: RegExp) => {
    expect(r.code, r.out).toBe(1);
    expect(r.out.trim().split('\n'), r.out).toHaveLength(1);
    expect(r.out).toMatch(re);
    expect(r.out).not.toMatch(/\n\s+at /);
    counts.queriesStopped++;
  };

  beforeAll(async () => {
    const home = mkdtempSync(join(dir, 'query-'));
    const file = writePopulationSop(home, { agents: 6, steps: 1 });
    const r = sop(['run', file, '--llm', 'mock', '--out', join(home, 'runs'), '--quiet']);
    expect(await r.exited, r.out).toBe(0);
    runDir = join(home, 'runs', readdirSync(join(home, 'runs'))[0]!);
    // the database is built before the timed queries
    expect((await query('select count(*) as n from agents')).code).toBe(0);
  }, 120_000);

  it('acceptance: a query that would run for ever, with --timeout 5, exits non-zero within 15 s with one line', async () => {
    const r = await query('select count(*) from range(100000000000000)', '--timeout', '5');
    oneLine(r, /^error: the query was stopped after 5 s, its deadline \(--timeout SECONDS; default 60\)$/m);
    expect(r.ms).toBeLessThan(15_000);
  }, 60_000);

  it('a query that needs more memory than --memory-limit is stopped with one line', async () => {
    const r = await query("select length(string_agg(repeat('x',10000000),'')) from range(400)", '--memory-limit', '200MB');
    oneLine(r, /^error: the query was stopped: it needs more memory than its limit of 200 MB \(--memory-limit SIZE/m);
  }, 60_000);

  it('a size that is not one, or a deadline of 0, is one line before anything runs', async () => {
    oneLine(
      await query('select 1', '--memory-limit', 'lots'),
      /^error: --memory-limit must be a size such as 2GB, 512MiB or 1500000000 \(got "lots"\)$/m,
    );
    oneLine(await query('select 1', '--timeout', '0'), /^error: --timeout must be a number of seconds above 0 \(got 0\)$/m);
    const ok = await query('select 42 as answer', '--memory-limit', '1GiB', '--timeout', '10', '--csv');
    expect(ok.out).toBe('answer\r\n42\r\n');
  }, 60_000);

  it("the API's queryResults takes the same bounds (the viewer and scripts run queries)", async () => {
    const t0 = Date.now();
    await expect(queryResults(runDir, 'select count(*) from range(100000000000000)', { timeoutMs: 1000 })).rejects.toThrow(
      /^the query was stopped after 1 s, its deadline/,
    );
    expect(Date.now() - t0).toBeLessThan(10_000);
    await expect(
      queryResults(runDir, "select length(string_agg(repeat('x',10000000),'')) from range(400)", { memoryLimit: '150MiB' }),
    ).rejects.toThrow(/needs more memory than its limit of 150 MiB/);
    const r = await queryResults(runDir, 'select count(*) as n from agents', { timeoutMs: 30_000, memoryLimit: 512 * 1024 * 1024 });
    expect(r.rows).toEqual([[6]]);
    counts.queriesStopped += 2;
  }, 60_000);
});

describe('a server that asks to wait for ever', () => {
  it("retry-after: 999999 holds a retry at most the run's --timeout: a 12-agent step ends", async () => {
    // every first request of the step is answered 429 with retry-after: 999999, then each is answered
    const server = await startOpenAiServer({
      reply: () => JSON.stringify({ command: 'idle', command_args: {} }),
      fault: (i) => (i < 12 ? { kind: 'status', status: 429, headers: { 'retry-after': '999999' } } : undefined),
    });
    servers.push(server);
    const home = mkdtempSync(join(dir, 'retry-after-'));
    const file = writePopulationSop(home, { agents: 12, steps: 1 });
    const handle = runSop(file, { llm: 'openai', baseUrl: server.url, timeoutMs: 2000, out: join(home, 'runs') });
    const events: RunEvent[] = [];
    for await (const e of handle) events.push(e);
    const result = await handle.result;
    expect(result.status, result.error?.message).toBe('finished');
    expect(server.requests.length).toBeGreaterThanOrEqual(24); // every call was refused once, and asked again
    const waits = events
      .filter((e): e is Extract<RunEvent, { type: 'warning' }> => e.type === 'warning')
      .flatMap((e) => [...e.message.matchAll(/retry \d+ in (\d+) ms/g)].map((m) => Number(m[1])));
    expect(waits.length).toBeGreaterThan(0);
    counts.longestRetryWaitMs = Math.max(...waits);
    // the wait is the run's --timeout (2 s), not the 60 s cap nor the 11.6 days asked
    expect(counts.longestRetryWaitMs).toBe(2000);
  }, 120_000);
});

describe('a judge resolution over agents with private observations', () => {
  it("the judge's prompt holds the contested actions only: no agent's private value, cost, persona or note", async () => {
    // each trader's value or cost and note are its own: shown in its prompt, and in no one else's
    const traders = [
      { id: 'b1', role: 'buyer', value: 137, cost: 0, note: 'canary-b1-7731' },
      { id: 'b2', role: 'buyer', value: 141, cost: 0, note: 'canary-b2-8842' },
      { id: 'b3', role: 'buyer', value: 149, cost: 0, note: 'canary-b3-9953' },
      { id: 's1', role: 'seller', value: 0, cost: 61, note: 'canary-s1-1164' },
      { id: 's2', role: 'seller', value: 0, cost: 67, note: 'canary-s2-2275' },
      { id: 's3', role: 'seller', value: 0, cost: 73, note: 'canary-s3-3386' },
    ];
    const home = mkdtempSync(join(dir, 'judge-'));
    writeFileSync(
      join(home, 'traders.csv'),
      ['id,role,value,cost,note', ...traders.map((t) => `${t.id},${t.role},${t.value},${t.cost},${t.note}`)].join('\n') + '\n',
    );
    const file = join(home, 'judge.sop.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'judged-market',
        llm: { model: 'gpt-4o-mini', temperature: 0 },
        agents: {},
        root: 'trading',
        states: {
          trading: {
            environment_prompt: 'You trade one good in a market.',
            population: { source: { file: 'traders.csv' }, id: 'id', persona: 'You are a {{role}}. Your private note: {{note}}.' },
            world: { type: 'market', params: { mechanism: 'continuous', min_price: 0, max_price: 200 } },
            actions: ['bid', 'ask', 'idle'],
            activation: { probability: 1 },
            cognition: [{ tier: 'per_agent' }],
            resolution: { type: 'judge', seed: 3 },
            max_steps: 1,
            next_states: { '1': 'closed' },
          },
          closed: { final: true },
        },
      }),
    );
    const isJudge = (b: ChatRequestBody) => (b.messages[0]?.content ?? '').startsWith('You resolve simultaneous actions');
    // every buyer bids 100 and every seller asks 120: two contested book levels, each judged
    const server = await startOpenAiServer({
      reply: (b) => {
        if (isJudge(b)) {
          const asked = JSON.parse(b.messages[b.messages.length - 1]!.content ?? '{}') as { actions: unknown[] };
          return JSON.stringify({ order: asked.actions.map((_, i) => i) });
        }
        const buyer = JSON.stringify(b.messages).includes('You are a buyer');
        return JSON.stringify(buyer ? { command: 'bid', command_args: { price: 100 } } : { command: 'ask', command_args: { price: 120 } });
      },
    });
    servers.push(server);
    const result = await runSop(file, { llm: 'openai', baseUrl: server.url, out: join(home, 'runs') }).result;
    expect(result.status, result.error?.message).toBe('finished');
    const bodies = server.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as ChatRequestBody);
    const judges = bodies.filter(isJudge).map((b) => JSON.stringify(b.messages));
    const agents = bodies.filter((b) => !isJudge(b)).map((b) => JSON.stringify(b.messages));
    expect(judges).toHaveLength(2); // book:ask:120 and book:bid:100
    expect(agents).toHaveLength(traders.length);
    // each agent was shown its own note, value or cost: the private observations the judge must not see
    for (const t of traders) {
      const own = agents.filter((p) => p.includes(t.note));
      expect(own, t.id).toHaveLength(1);
      expect(own[0]).toMatch(new RegExp(`\\b${t.role === 'buyer' ? t.value : t.cost}\\b`));
    }
    const privateParts = traders.flatMap((t) => [
      t.note,
      `\\b${t.role === 'buyer' ? t.value : t.cost}\\b`,
      'You are a buyer',
      'You are a seller',
    ]);
    counts.judgePrompts = judges.length;
    for (const prompt of judges) {
      // what it is asked: the contested object and its actions (agent, name, args)
      expect(prompt).toMatch(/book:(bid|ask):(100|120)/);
      counts.judgeLeaks += privateParts.filter((p) => new RegExp(p).test(prompt)).length;
    }
    expect(counts.judgeLeaks).toBe(0);
    // nor does an agent see another's note
    for (const p of agents) expect(traders.filter((t) => p.includes(t.note))).toHaveLength(1);
  }, 120_000);
});

describe("batch result files are a server's reply: streamed, capped, checked", () => {
  const AGENTS = 6;
  let file: string;
  const reply = () => JSON.stringify({ command: 'idle', command_args: {} });
  beforeAll(() => {
    const home = mkdtempSync(join(dir, 'batch-'));
    file = writePopulationSop(home, { agents: AGENTS, steps: 1 });
  });
  /** A batch-mode run against a fake Batch API serving its output file as `o` says. */
  const batchRun = async (o: Omit<BatchServerOptions, 'reply'>) => {
    const server = await startBatchServer({ reply, ...o });
    const handle = runSop(file, { llm: 'openai', baseUrl: server.url, llmMode: 'batch', batchPollMs: 20 });
    const events: RunEvent[] = [];
    try {
      for await (const e of handle) events.push(e);
      return { result: await handle.result, events };
    } finally {
      await server.close();
    }
  };
  const warnings = (events: RunEvent[]) =>
    events.filter((e): e is Extract<RunEvent, { type: 'warning' }> => e.type === 'warning').map((e) => e.message);

  it("an output file longer than V8's longest string (560 MiB) is read a line at a time: the run finishes", async () => {
    const pad = { lines: 560, lineBytes: 2 ** 20 };
    expect(pad.lines * pad.lineBytes).toBeGreaterThan(0x1fffffe8); // read whole, it would be "Cannot create a string longer than..."
    const { result, events } = await batchRun({ padOutput: pad });
    expect(result.status, result.error?.message).toBe('finished');
    const steps = events.filter((e): e is Extract<RunEvent, { type: 'population_step' }> => e.type === 'population_step');
    expect(steps[0]!.actions.filter((a) => a.tier === 'per_agent')).toHaveLength(AGENTS);
    counts.batchFilesStreamed++;
    counts.streamedBytes = pad.lines * pad.lineBytes;
  }, 300_000);

  it('a result line past the cap (8 MiB) fails the step with one line', async () => {
    const { result } = await batchRun({ padOutput: { lines: 1, lineBytes: 9 * 2 ** 20 } });
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(
      /file file-out-batch_\d+ of batch batch_\d+: line 1 is longer than 8 MiB; the result file is not read further/,
    );
    expect(result.error?.message).not.toContain('\n');
    counts.batchFilesRefused++;
  }, 120_000);

  it('a file past its cap, or a line past its cap, is one line (the target, with small caps)', async () => {
    const server = await startBatchServer({ reply, padOutput: { lines: 50, lineBytes: 1000 } });
    onTestFinished(() => server.close());
    for (const [caps, want] of [
      [
        { maxFileBytes: 20_000 },
        /^file file-out-batch_\d+ of batch batch_\d+ is larger than 20000 bytes; the result file is not read further$/,
      ],
      [
        { maxLineBytes: 512 },
        /^file file-out-batch_\d+ of batch batch_\d+: line 1 is longer than 512 bytes; the result file is not read further$/,
      ],
    ] as const) {
      const target = new OpenAiBatchTarget({ baseURL: server.url, apiKey: () => 'sk-test', caps }, 'run-caps');
      const line = JSON.stringify({ custom_id: '1:a', method: 'POST', url: '/v1/chat/completions', body: { model: 'm', messages: [] } });
      const batch = await target.submit(line + '\n', { state: 'feed', visit: 1, step: 1 });
      let status = await target.poll(batch, new Set(['1:a']));
      while (!status.ended) status = await target.poll(batch, new Set(['1:a']));
      await expect(status.ended.read(() => {})).rejects.toThrow(want);
      counts.batchFilesRefused++;
    }
  }, 120_000);

  it('results holding a call twice refuse the batch; lines that are not results are counted and told', async () => {
    // the first result line comes twice
    const dup = await batchRun({ rewriteOutput: (out) => `${out.split('\n')[0]}\n${out}` });
    expect(dup.result.status).toBe('failed');
    expect(dup.result.error?.message).toMatch(
      /batch batch_\d+: its results hold the call 1:a\d+ twice \(a duplicated custom_id\); the batch is refused, none of its replies is used/,
    );
    counts.batchFilesRefused++;
    // garbage among the results: the run goes on, and says what it dropped
    const junk = await batchRun({ rewriteOutput: (out) => `not json\n{"id":"no custom_id"}\n${out}{"custom_id":7}\n{"custom_id":"1:a` });
    expect(junk.result.status, junk.result.error?.message).toBe('finished');
    const told = warnings(junk.events).filter((w) => /result lines were dropped/.test(w));
    expect(told).toEqual([
      expect.stringMatching(/^batch batch_\d+: 4 result lines were dropped \(2 not JSON, 2 without a string custom_id\)$/),
    ]);
    counts.droppedLinesTold += 4;
  }, 120_000);
});
