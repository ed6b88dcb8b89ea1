// The Redis ACL docs/scale.md recommends ("Lock it": no default user, an ACL user for sop limited
// to the queue's keys and channels, no dangerous commands) is one BullMQ can work with: a real
// redis-server started with the lines of the docs' redis.conf block, a real `sop worker` and
// `sop sweep --queue` as that user run a sweep (and a `sop worker --shards` a run's population
// steps), and a client without the password, or with a wrong
// one, is refused at once with one line.
// The lines are read from the docs, so the docs cannot drift from what is tested.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers/cli.js';
import { freePort } from './helpers/free-port.js';
import { scaled } from './helpers/time.js';

const DEBATE = join(process.cwd(), 'examples/debate/debate.sop.json');
const SOCIAL = join(process.cwd(), 'examples/social-spread/social-spread.sop.json');
const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
if (!REDIS) console.warn('queue-redis-acl test skipped: redis-server is not installed (apt-get install redis-server)');

/** The redis.conf lines of docs/scale.md (its block after "# redis.conf"). */
function docsAclLines(): string[] {
  const doc = readFileSync(join(process.cwd(), 'docs/scale.md'), 'utf8');
  const block = /```\n\s*# redis\.conf\n([\s\S]*?)```/.exec(doc);
  if (!block) throw new Error('docs/scale.md has no redis.conf block');
  return block[1]!
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}

interface Proc {
  child: ChildProcess;
  out: () => string;
  exited: Promise<number | null>;
}

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, cwd?: string): Proc {
  const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return { child, out: () => out, exited: new Promise((r) => child.on('exit', (code) => r(code))) };
}

/** Waits for `re` in the output of `p` (a readiness line), or fails naming what was seen. */
async function ready(p: Proc, re: RegExp, ms = 60_000): Promise<void> {
  const end = Date.now() + scaled(ms);
  while (!re.test(p.out())) {
    if (Date.now() > end || p.child.exitCode !== null) throw new Error(`no ${re} in:\n${p.out().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const procs: Proc[] = [];
afterAll(async () => {
  for (const p of procs.reverse())
    if (p.child.exitCode === null) {
      p.child.kill('SIGTERM');
      await p.exited;
    }
});

describe.skipIf(!REDIS)("the Redis ACL of docs/scale.md's redis.conf", () => {
  it('lets sop worker and sop sweep --queue run a sweep as the ACL user; a client without the password, or with a wrong one, is refused at once', async () => {
    const acl = docsAclLines();
    expect(acl.some((l) => /^user default off$/.test(l))).toBe(true);
    const user = /^user (\S+) on >(\S+) /.exec(acl.find((l) => /^user \S+ on >/.test(l)) ?? '');
    expect(user, acl.join('\n')).not.toBeNull();
    const [, name, password] = user!;

    const dir = mkdtempSync(join(tmpdir(), 'sop-redis-acl-'));
    const port = await freePort();
    writeFileSync(join(dir, 'redis.conf'), [`port ${port}`, 'bind 127.0.0.1', 'save ""', 'appendonly no', ...acl, ''].join('\n'));
    const redis = start(REDIS!, [join(dir, 'redis.conf')], process.env, dir);
    procs.push(redis);
    await ready(redis, /Ready to accept connections/);

    const env = { ...process.env, OPENAI_API_KEY: '', SOP_QUEUE_SECRET: 'redis-acl-test-secret-0123456789' };
    const url = `redis://${name}:${password}@127.0.0.1:${port}`;
    const worker = start(process.execPath, [CLI, 'worker', '--queue', url, '--root', process.cwd(), '--root', dir], env);
    procs.push(worker);
    await ready(worker, /ready: queue/);
    const sweep = start(
      process.execPath,
      [CLI, 'sweep', DEBATE, '--llm', 'mock', '--seeds', '1-2', '--queue', url, '--out', join(dir, 'out')],
      env,
    );
    procs.push(sweep);
    expect(await sweep.exited, sweep.out()).toBe(0);
    expect(sweep.out()).toContain('2 of 2 runs done, 0 failed');
    expect(worker.out()).not.toMatch(/NOPERM|NOAUTH/);
    for (const text of [worker.out(), sweep.out()]) expect(text).not.toContain(password);

    // a population run's steps over a shard worker (docs/scale.md#one-step-over-many-workers), as the same user
    const shards = start(process.execPath, [CLI, 'worker', '--queue', url, '--shards', '--llm', 'mock'], env);
    procs.push(shards);
    await ready(shards, /ready: shard queue/);
    const run = start(
      process.execPath,
      [CLI, 'run', SOCIAL, '--llm', 'mock', '--shard-over', url, '--shard-size', '50', '--out', join(dir, 'runs'), '--quiet'],
      env,
    );
    procs.push(run);
    expect(await run.exited, run.out()).toBe(0);
    expect(shards.out()).toMatch(/shard 2 of step \w+ done: \d+ asked/);
    expect(shards.out() + run.out()).not.toMatch(/NOPERM|NOAUTH/);
    for (const text of [shards.out(), run.out()]) expect(text).not.toContain(password);

    // the default user is off: without the ACL user's password, nothing is taken from the queue
    const anonymous = start(process.execPath, [CLI, 'worker', '--queue', `redis://127.0.0.1:${port}`], env);
    procs.push(anonymous);
    expect(await anonymous.exited).toBe(1);
    expect(anonymous.out().trim().split('\n')).toHaveLength(1);
    expect(anonymous.out().trim()).toBe(
      `error: Redis at redis://127.0.0.1:${port} refused the login (NOAUTH Authentication required.); give the user and password it expects in the URL, redis://USER:PASSWORD@HOST:PORT (docs/scale.md)`,
    );
    // a wrong password: the same, at once, the password not printed (after 10 s of retries the
    // message would be "cannot reach Redis ... within 10 s")
    const wrong = start(process.execPath, [CLI, 'worker', '--queue', `redis://${name}:not-${password}@127.0.0.1:${port}`], env);
    procs.push(wrong);
    expect(await wrong.exited).toBe(1);
    expect(wrong.out()).toMatch(/^error: Redis at redis:\/\/\S+ refused the login \(WRONGPASS /);
    expect(wrong.out()).not.toContain(password);
  }, 120_000);
});
