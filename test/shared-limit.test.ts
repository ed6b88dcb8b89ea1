// `sop worker --shared-limit N` (src/apps/sweep/shared-limit.ts): the calls at once to one LLM server,
// across processes, stay within N through redis-semaphore's counting semaphore. Two limiters on their own
// Redis connections (as two workers have), on a real redis-server started with the ACL of
// docs/scale.md, each with its own adaptive gate and openai provider, call one test server: it
// never sees more than N requests at once, and sees N.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdaptiveGate } from '../src/core/llm/adaptive-limit.js';
import { OpenAiProvider } from '../src/core/llm/openai.js';
import { RedisLimits, sharedLimitId } from '../src/apps/sweep/shared-limit.js';
import { freePort } from './helpers/free-port.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { until } from './helpers/until.js';
import { scaled } from './helpers/time.js';

const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
if (!REDIS) console.warn('shared-limit test skipped: redis-server is not installed (apt-get install redis-server)');

/** The redis.conf lines of docs/scale.md (its block after "# redis.conf"). */
function docsAclLines(): string[] {
  const block = /```\n\s*# redis\.conf\n([\s\S]*?)```/.exec(readFileSync(join(process.cwd(), 'docs/scale.md'), 'utf8'));
  if (!block) throw new Error('docs/scale.md has no redis.conf block');
  return block[1]!
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

let redis: ChildProcess | undefined;
let url = '';
let server: TestServer;
const limits: RedisLimits[] = [];

beforeAll(async () => {
  if (!REDIS) return;
  const user = /^user (\S+) on >(\S+) /.exec(docsAclLines().find((l) => /^user \S+ on >/.test(l)) ?? '');
  if (!user) throw new Error('docs/scale.md has no ACL user line');
  const port = await freePort();
  let out = '';
  redis = spawn(REDIS, ['-', '--port', String(port)], { stdio: ['pipe', 'pipe', 'pipe'] });
  redis.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  // the configuration on stdin: the docs' ACL lines as they are
  redis.stdin!.end(['bind 127.0.0.1', 'save ""', 'appendonly no', ...docsAclLines(), ''].join('\n'));
  if (!(await until(() => /Ready to accept connections/.test(out), { timeoutMs: 20_000 }))) throw new Error(`redis-server: ${out}`);
  url = `redis://${user[1]}:${user[2]}@127.0.0.1:${port}`;
  // counts what it has at once; each reply held long enough that N calls are in flight together on a loaded machine
  server = await startOpenAiServer({ latencyMs: scaled(400), maxInFlight: { limit: 1000, retryAfterMs: 10 } });
});
afterAll(async () => {
  for (const l of limits) await l.close();
  await server?.close();
  redis?.kill('SIGTERM');
});

describe.skipIf(!REDIS)('a limit shared through Redis', () => {
  it('keeps the calls at once of two workers to one server within --shared-limit, with the ACL of docs/scale.md', async () => {
    const N = 3;
    const providers = [0, 1].map(() => {
      const shared = new RedisLimits({ redis: url, maxConcurrent: N });
      limits.push(shared);
      const gate = new AdaptiveGate({
        ceiling: 20,
        initial: 20,
        endpoint: server.url,
        maxPauseMs: 1000,
        shared: shared.forEndpoint(server.url, 60_000),
      });
      return new OpenAiProvider({ baseURL: server.url, apiKey: 'k', gate });
    });
    await Promise.all(limits.map((l) => l.ready()));
    const meta = { purpose: 'agent' as const, state: 's', turn: 1 };
    const calls = providers.flatMap((p, w) =>
      Array.from({ length: 12 }, (_, i) => p.chat({ model: 'm', messages: [{ role: 'user', content: `w${w} q${i}` }], meta })),
    );
    const replies = await Promise.all(calls);
    expect(replies).toHaveLength(24);
    expect(replies[13]!.content).toBe('echo: w1 q1');
    // the most the server had at once: never more than N, and N
    expect(server.peakInFlight).toBe(N);
    expect(sharedLimitId(server.url)).toMatch(/^sop-llm-[0-9a-f]{16}$/);
  }, 30_000);

  it('gives back the slot of a worker that died holding it, once its hold runs out', async () => {
    const shared = new RedisLimits({ redis: url, maxConcurrent: 1 });
    limits.push(shared);
    await shared.ready();
    const endpoint = 'http://127.0.0.1:1/dead-worker-test';
    // a worker that took the one slot and died: its entry stays, never refreshed
    const other = new Redis(url);
    const taken = Date.now();
    await other.zadd(`semaphore:${sharedLimitId(endpoint)}`, taken, 'a-worker-that-died');
    await other.quit();
    const ran = await shared.forEndpoint(endpoint, 1500).run(async () => Date.now());
    expect(ran - taken).toBeGreaterThanOrEqual(1500); // not before the dead worker's hold ran out
  }, 30_000);
});
