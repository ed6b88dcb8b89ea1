// Hostile queued jobs: anyone who can write to the Redis can add jobs to `sop-runs`. With a real
// redis-server (password set) on a local port and a real `sop worker` process, jobs added with the
// BullMQ API — unsigned, signed with another secret, altered after signing, copied under another
// id, or signed but naming a runs folder, SOP file, answers file, pricing file or cassette outside
// the worker's --root (also through symlinks), a key with path parts, autoRun, yes, a base URL the
// worker does not allow, a shape the schema refuses — are each recorded failed at once with the
// reason; no file is written outside the root, no LLM is called and no code runs. A sweep signed
// with the shared secret still runs, and neither the secret nor the Redis password is printed.
// Over rediss:// (a redis-server with TLS and a test CA), the runs run, and a server whose
// certificate is not trusted is one error line.
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signJob } from '../src/shared/util/job-signature.js';
import { codeSop } from './helpers/code-sop.js';
import { execAsync } from './helpers/exec.js';
import { calledCommand, startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { freePort } from './helpers/free-port.js';
import { stopChild } from './helpers/processes.js';
import { REDIS, startRedis, type TestRedis } from './helpers/redis.js';
import { watchProcess, type WatchedProcess } from './helpers/watch-process.js';

const CLI = join(process.cwd(), 'dist/src/apps/cli/main.js');
const DEBATE = join(process.cwd(), 'examples/debate/debate.sop.json');
if (!REDIS) console.warn('hostile trust (queue) tests skipped: redis-server is not installed (apt-get install redis-server)');

const SECRET = 'queue-secret-0123456789abcdef';
const PASSWORD = 'redis-pass-9f8e7d6c';
const KEY = 'sk-hostile-queue-CANARY42';
let refused = 0;
let outside = 0;
let codeRuns = 0;

/** Every file and folder under a folder, recursively (symlinks not followed). */
const entriesUnder = (dir: string): string[] => readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();
const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');

afterAll(() => {
  console.log(`hostile trust (queue): ${refused} forged jobs refused, ${outside} files written outside the root, ${codeRuns} code runs`);
});

describe.skipIf(!REDIS)('a sop worker refuses queued jobs it cannot trust', () => {
  let redis: TestRedis;
  let url: string;
  let queue: Queue;
  let llm: TestServer;
  let attacker: Server;
  let attackerUrl: string;
  let attackerHits = 0;
  let worker: WatchedProcess;
  let root: string;
  let out: string;
  const procs: WatchedProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis(['--requirepass', PASSWORD]);
    url = `redis://:${PASSWORD}@127.0.0.1:${redis.port}`;
    queue = new Queue('sop-runs', { connection: { host: '127.0.0.1', port: redis.port, password: PASSWORD, maxRetriesPerRequest: null } });
    // the worker's own LLM server: any run would call it, and it answers with code that leaves a marker
    llm = await startOpenAiServer({
      reply: (body) =>
        calledCommand(body, 'run_code')
          ? JSON.stringify({ command: 'finish', command_args: { result: 'done' } })
          : JSON.stringify({ command: 'run_code', command_args: { code: 'open("marker.txt", "w").write("ran")' } }),
    });
    // a server a forged job would send the calls (and the key) to
    attacker = createHttpServer((req, res) => {
      attackerHits++;
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => attacker.listen(0, '127.0.0.1', () => r()));
    attackerUrl = `http://127.0.0.1:${(attacker.address() as { port: number }).port}/v1`;

    const base = mkdtempSync(join(tmpdir(), 'sop-trust-queue-'));
    root = join(base, 'root');
    out = join(base, 'outside');
    mkdirSync(root);
    mkdirSync(out);
    copyFileSync(DEBATE, join(root, 'debate.sop.json'));
    writeFileSync(join(root, 'code.sop.json'), JSON.stringify(codeSop('code')));
    writeFileSync(join(out, 'evil.sop.json'), JSON.stringify(codeSop('evil')));
    writeFileSync(join(out, 'answers.txt'), 'secret answers\n');
    symlinkSync(join(out, 'evil.sop.json'), join(root, 'link.sop.json'));
    symlinkSync(out, join(root, 'escape'));
    writeFileSync(join(root, 'answers.txt'), 'an answer\n');

    worker = watchProcess(
      process.execPath,
      [CLI, 'worker', '--queue', url, '--root', root, '--allow-answers', '--allow-pricing', '--allow-replay', '--concurrency', '2'],
      { ...process.env, SOP_QUEUE_SECRET: SECRET, OPENAI_API_KEY: KEY, OPENAI_BASE_URL: llm.url },
      root,
    );
    procs.push(worker);
    await worker.waitFor(/ready: queue/);
  }, 60_000);

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await queue?.close();
    await redis?.stop();
    await llm?.close();
    await new Promise((r) => attacker?.close(r));
  });

  const SWEEP = 'f0f0f0f0f0f0';
  let n = 0;
  /** A job as `sop sweep --queue` would make it (signed unless told), changed by `change`. */
  function forged(change: (d: Record<string, unknown>) => void, o: { sign?: string | false; key?: string; id?: string } = {}) {
    const key = o.key ?? `s1-forged${++n}`;
    const data: Record<string, unknown> = {
      v: 1,
      sweep: SWEEP,
      file: join(root, 'debate.sop.json'),
      runsDir: join(root, 'runs'),
      point: { key, seed: 1, inputs: {}, repeat: 1 },
      llm: 'openai',
    };
    change(data);
    const id = o.id ?? `${SWEEP}-${key}`;
    if (o.sign !== false) data.sig = signJob(o.sign ?? SECRET, id, data);
    return { id, data };
  }

  async function refusedWith(
    job: { id: string; data: Record<string, unknown> },
    reason: RegExp,
    after?: (d: Record<string, unknown>) => void,
  ) {
    after?.(job.data); // altered after it was signed
    await queue.add('run', job.data, { jobId: job.id, attempts: 3, backoff: { type: 'fixed', delay: 10 } });
    await worker.waitFor(new RegExp(`job ${escapeRe(job.id)} failed: refused: `));
    const j = await Job.fromId(queue, job.id);
    expect(await j!.getState()).toBe('failed');
    expect(j!.failedReason).toMatch(/^refused: /);
    expect(j!.failedReason).toMatch(reason);
    expect(j!.attemptsMade, 'a refused job is not tried again').toBe(1);
    refused++;
  }

  it('unsigned, wrongly signed, altered or moved jobs are refused with the reason', async () => {
    await refusedWith(
      forged(() => {}, { sign: false }),
      /the job is not signed \(no "sig"; queue runs with sop sweep --queue and the same SOP_QUEUE_SECRET\)/,
    );
    await refusedWith(
      forged(() => {}, { sign: 'another-secret-of-32-characters!!' }),
      /signature does not match/,
    );
    await refusedWith(
      forged(() => {}),
      /signature does not match: it was altered after it was queued/,
      (d) => (d.runsDir = out),
    );
    await refusedWith(
      forged(() => {}),
      /signature does not match/,
      (d) => (d.autoRun = true),
    );
    // a signed job copied under another id
    const good = forged(() => {});
    await refusedWith(
      { id: `${SWEEP}-s1-copied`, data: { ...good.data, point: { ...(good.data.point as object), key: 's1-copied' } } },
      /signature does not match/,
    );
    await refusedWith(
      forged(() => {}, { sign: false, key: 'nosig' }),
      /the job's "sig" is not an HMAC-SHA256 in hex/,
      (d) => (d.sig = 'zz'),
    );
  }, 60_000);

  it('signed jobs that fail the schema are refused with the reason', async () => {
    await refusedWith(
      forged((d) => (d.cmd = 'id')),
      /the job is not a valid sop job: \(the job\) must NOT have additional properties \(cmd\)/,
    );
    await refusedWith(
      forged((d) => ((d.point as Record<string, unknown>).seed = '1; rm -rf /')),
      /not a valid sop job: \/point\/seed must be integer/,
    );
    await refusedWith(
      forged((d) => (d.sweep = '../../etc')),
      /not a valid sop job: \/sweep must match pattern/,
    );
    await refusedWith(
      forged((d) => (d.llm = 'replay:relative.json')),
      /not a valid sop job: \/llm must match pattern/,
    );
    await refusedWith(
      forged((d) => (d.file = 'debate.sop.json')),
      /not a valid sop job: \/file must match pattern/,
    );
  }, 60_000);

  it('signed jobs that reach outside the root, or ask for what the worker does not allow, are refused; nothing runs', async () => {
    const before = entriesUnder(out);
    await refusedWith(
      forged((d) => (d.runsDir = join(out, 'runs'))),
      /the runs folder ".*outside\/runs" is outside this worker's --root/,
    );
    await refusedWith(
      forged(() => {}, { key: '../x' }),
      /point\.key "\.\.\/x" has path parts; a run key names one folder/,
    );
    await refusedWith(
      forged(() => {}, { key: `../../${basename(out)}/pwned` }),
      /point\.key ".*" has path parts/,
    );
    await refusedWith(
      forged(() => {}, { key: '..\\x' }),
      /point\.key "\.\.\\\\x" has path parts/,
    );
    await refusedWith(
      forged(() => {}, { key: '..' }),
      /has path parts/,
    );
    await refusedWith(
      forged((d) => {
        d.file = join(root, 'code.sop.json');
        d.autoRun = true;
      }),
      /asks to run agents' code without asking \(autoRun\); this worker allows it only with --auto-run/,
    );
    await refusedWith(
      forged((d) => (d.yes = true)),
      /asks to accept every approval \(yes\); this worker allows it only with --yes/,
    );
    await refusedWith(
      forged((d) => (d.answers = '/etc/passwd')),
      /the answers file "\/etc\/passwd" is outside this worker's --root/,
    );
    await refusedWith(
      forged((d) => (d.answers = join(out, 'answers.txt'))),
      /the answers file .* is outside this worker's --root/,
    );
    await refusedWith(
      forged((d) => (d.pricing = '/etc/passwd')),
      /the pricing file "\/etc\/passwd" is outside/,
    );
    await refusedWith(
      forged((d) => (d.llm = 'replay:/etc/passwd')),
      /the replay cassette "\/etc\/passwd" is outside/,
    );
    await refusedWith(
      forged((d) => (d.baseUrl = attackerUrl)),
      /sends the LLM calls \(and this worker's API key\) to "http:\/\/127\.0\.0\.1:\d+\/v1"; this worker allows a job's base URL only with --allow-base-url URL/,
    );
    await refusedWith(
      forged((d) => (d.file = join(out, 'evil.sop.json'))),
      /the SOP file ".*evil\.sop\.json" is outside/,
    );
    // through symlinks inside the root
    await refusedWith(
      forged((d) => (d.file = join(root, 'link.sop.json'))),
      /the SOP file ".*link\.sop\.json" \(really ".*outside\/evil\.sop\.json"\) is outside/,
    );
    await refusedWith(
      forged((d) => (d.runsDir = join(root, 'escape', 'runs'))),
      /the runs folder ".*escape\/runs" \(really ".*outside\/runs"\) is outside/,
    );

    // nothing was written outside the root, nor where "../x" points, no LLM was called, no code ran
    const after = entriesUnder(out);
    outside += after.filter((f) => !before.includes(f)).length;
    expect(after).toEqual(before);
    expect(existsSync(join(root, 'x'))).toBe(false);
    expect(existsSync(join(root, 'runs'))).toBe(false);
    const markers = [...entriesUnder(root), ...after].filter((f) => f.endsWith('marker.txt'));
    codeRuns += markers.length;
    expect(markers).toEqual([]);
    expect(llm.requests, 'no refused job called the LLM').toHaveLength(0);
    expect(attackerHits).toBe(0);
  }, 120_000);

  it('a signed job that continues a run folder is held to the same limits as the settings that run was started with', async () => {
    // a run in the root made by `sop run` with a --base-url this worker does not allow
    const runs = join(root, 'runs-of-sop-run');
    const made = watchProcess(
      process.execPath,
      [CLI, 'run', join(root, 'debate.sop.json'), '--llm', 'mock', '--base-url', attackerUrl, '--out', runs],
      {
        ...process.env,
      },
    );
    expect(await made.exited, made.out).toBe(0);
    const [key] = readdirSync(runs);
    await refusedWith(
      forged(
        (d) => {
          d.runsDir = runs;
          delete d.llm;
        },
        { key: key! },
      ),
      /the run it continues sends the LLM calls \(and this worker's API key\) to "http:\/\/127\.0\.0\.1:\d+\/v1"; this worker allows a job's base URL only with --allow-base-url URL/,
    );
    expect(attackerHits).toBe(0);
  }, 60_000);

  it("a sweep signed with the shared secret runs; the secret, the key and Redis's password are never printed", async () => {
    const sweep = watchProcess(
      process.execPath,
      [CLI, 'sweep', join(root, 'debate.sop.json'), '--llm', 'mock', '--seeds', '1-2', '--queue', url, '--out', join(root, 'OUT')],
      { ...process.env, SOP_QUEUE_SECRET: SECRET },
    );
    procs.push(sweep);
    expect(await sweep.exited, sweep.out).toBe(0);
    expect(sweep.out).toContain('2 of 2 runs done, 0 failed');
    for (const text of [worker.out, sweep.out]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(PASSWORD);
      expect(text).not.toContain(KEY);
    }
    expect(worker.out).toContain(`inside ${root}; allowing answers files, pricing files, replay cassettes`);
    // the same sweep with another secret: the worker refuses its jobs, and the sweep records why
    const wrong = watchProcess(
      process.execPath,
      [CLI, 'sweep', join(root, 'debate.sop.json'), '--llm', 'mock', '--seeds', '3', '--queue', url, '--out', join(root, 'OUT2')],
      { ...process.env, SOP_QUEUE_SECRET: 'a-different-secret-0000000000' },
    );
    procs.push(wrong);
    expect(await wrong.exited, wrong.out).toBe(1);
    expect(wrong.out).toContain('0 of 1 runs done, 1 failed');
    expect(wrong.out).toMatch(/refused: the job's signature does not match/);
    refused++;
  }, 120_000);

  it('a worker or a sweep with no secret (or a short one) refuses to start, with one line', async () => {
    const env = { ...process.env, SOP_QUEUE_SECRET: '' };
    for (const args of [
      ['worker', '--queue', url],
      ['sweep', DEBATE, '--llm', 'mock', '--queue', url, '--out', join(root, 'NOSECRET')],
    ]) {
      const p = watchProcess(process.execPath, [CLI, ...args], env);
      expect(await p.exited).toBe(1);
      expect(p.out.trim().split('\n')).toHaveLength(1);
      expect(p.out).toMatch(/^error: sop (worker|sweep --queue) needs SOP_QUEUE_SECRET: set it to the same random value/);
      expect(p.out).not.toContain(PASSWORD);
    }
    expect(existsSync(join(root, 'NOSECRET'))).toBe(false);
    const short = watchProcess(process.execPath, [CLI, 'worker', '--queue', url], { ...process.env, SOP_QUEUE_SECRET: 'short' });
    expect(await short.exited).toBe(1);
    expect(short.out.trim()).toBe('error: SOP_QUEUE_SECRET is 5 characters long; use at least 16 random ones (e.g. openssl rand -hex 32)');
    const badRoot = watchProcess(process.execPath, [CLI, 'worker', '--queue', url, '--root', join(root, 'nope')], {
      ...process.env,
      SOP_QUEUE_SECRET: SECRET,
    });
    expect(await badRoot.exited).toBe(1);
    expect(badRoot.out.trim()).toBe(`error: --root ${join(root, 'nope')}: no such folder`);
  }, 60_000);
});

const OPENSSL = ['/usr/bin/openssl', '/usr/local/bin/openssl'].find((f) => existsSync(f));
if (REDIS && !OPENSSL) console.warn('rediss:// test skipped: openssl is not installed (to make a test certificate)');

describe.skipIf(!REDIS || !OPENSSL)('rediss://: the queue over TLS, the server certificate checked', () => {
  it('a sweep and a worker over TLS run the runs; a certificate not trusted is one error line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-trust-tls-'));
    const ssl = async (...args: string[]) => {
      const r = await execAsync(OPENSSL!, args, { cwd: dir, encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    };
    await ssl(
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      'ca.key',
      '-out',
      'ca.pem',
      '-days',
      '1',
      '-subj',
      '/CN=sop-test-ca',
    );
    await ssl('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'srv.key', '-out', 'srv.csr', '-subj', '/CN=localhost');
    writeFileSync(join(dir, 'ext'), 'subjectAltName=DNS:localhost\n');
    await ssl(
      'x509',
      '-req',
      '-in',
      'srv.csr',
      '-CA',
      'ca.pem',
      '-CAkey',
      'ca.key',
      '-CAcreateserial',
      '-out',
      'srv.pem',
      '-days',
      '1',
      '-extfile',
      'ext',
    );
    const port = await freePort();
    const redis = watchProcess(
      REDIS!,
      [
        ...['--port', '0', '--tls-port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        ...['--tls-cert-file', 'srv.pem', '--tls-key-file', 'srv.key', '--tls-ca-cert-file', 'ca.pem', '--tls-auth-clients', 'no'],
        ...['--requirepass', PASSWORD],
      ],
      process.env,
      dir,
    );
    // a redis-server built without TLS exits at once, saying so
    const up = await redis.waitFor(/Ready to accept connections/).then(
      () => true,
      (e: unknown) => {
        if (redis.child.exitCode === null) throw e;
        return false;
      },
    );
    if (!up) {
      console.warn(`rediss:// test skipped: this redis-server has no TLS (${redis.out.trim().split('\n').pop()})`);
      return;
    }
    const started: WatchedProcess[] = [];
    try {
      const url = `rediss://:${PASSWORD}@localhost:${port}`;
      const env = { ...process.env, SOP_QUEUE_SECRET: SECRET, NODE_EXTRA_CA_CERTS: join(dir, 'ca.pem') };
      const w = watchProcess(process.execPath, [CLI, 'worker', '--queue', url, '--root', dir, '--root', process.cwd()], env, dir);
      started.push(w);
      await w.waitFor(/ready: queue/);
      const sweep = watchProcess(
        process.execPath,
        [CLI, 'sweep', DEBATE, '--llm', 'mock', '--seeds', '1-2', '--queue', url, '--out', join(dir, 'OUT')],
        env,
      );
      started.push(sweep);
      expect(await sweep.exited, sweep.out).toBe(0);
      expect(sweep.out).toContain('2 of 2 runs done, 0 failed');
      w.child.kill('SIGTERM');
      await w.exited;
      // without the CA: the server is not trusted, and nothing is sent to it
      const untrusted = watchProcess(process.execPath, [CLI, 'worker', '--queue', url], { ...process.env, SOP_QUEUE_SECRET: SECRET });
      expect(await untrusted.exited).toBe(1);
      expect(untrusted.out.trim()).toMatch(
        /^error: cannot reach Redis at rediss:\/\/\S+ within 10 s \(self[- ]signed certificate in certificate chain\)$/,
      );
      for (const text of [w.out, sweep.out, untrusted.out]) expect(text).not.toContain(PASSWORD);
    } finally {
      // what talks to the Redis first (a worker left running would retry a gone Redis forever)
      for (const p of started) await stopChild(p.child, 'SIGKILL');
      redis.child.kill('SIGTERM');
      await redis.exited;
    }
  }, 90_000);
});
