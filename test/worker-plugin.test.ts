// `sop worker` and a SOP naming a plugin module, end to end on a real Redis (redis-server started
// here on a free port): a worker started with --yes loads a module inside its --root and runs the
// job (the cascade of examples/plugin-world); a job whose SOP, inside the root, names a module
// outside it is refused with the reason, even with --yes, and none of that module runs.
import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI } from './helpers/cli.js';
import { freePort } from './helpers/free-port.js';
import { until } from './helpers/until.js';

const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
if (!REDIS) console.warn('worker-plugin tests skipped: redis-server is not installed (apt-get install redis-server)');

interface Proc {
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
}
function start(cmd: string, args: string[], env: NodeJS.ProcessEnv): Proc {
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const p: Proc = { child, out: '', exited: new Promise((r) => child.on('exit', (code) => r(code))) };
  const onData = (d: Buffer) => (p.out += d.toString());
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  return p;
}
const waitFor = async (p: Proc, re: RegExp, ms = 90_000) => {
  expect(await until(() => re.test(p.out), { timeoutMs: ms }), `no ${re} in:\n${p.out.slice(-3000)}`).toBe(true);
};

const env = {
  ...process.env,
  OPENAI_API_KEY: '',
  SOP_QUEUE_SECRET: 'worker-plugin-test-secret-0123456789',
  SOP_CONFIG_DIR: join(tmpdir(), 'sop-worker-plugin-no-config'),
};

describe.skipIf(!REDIS)('sop worker and plugin modules', () => {
  let redis: Proc;
  let url: string;
  let base: string;
  let root: string;
  const procs: Proc[] = [];
  const sop = (args: string[]) => {
    const p = start(process.execPath, [CLI, ...args], env);
    procs.push(p);
    return p;
  };

  beforeAll(async () => {
    base = mkdtempSync(join(tmpdir(), 'sop-worker-plugin-'));
    root = join(base, 'root');
    mkdirSync(root);
    mkdirSync(join(base, 'outside'));
    // the plugin world's SOP with its files beside it, inside the root
    const doc = JSON.parse(readFileSync('examples/plugin-world/lt-world.sop.json', 'utf8')) as Record<string, any>;
    delete doc.$schema;
    doc.states.cascade.population.source.file = './members.csv';
    doc.states.cascade.world.graph.file = './karate.csv';
    for (const f of ['members.csv', 'karate.csv']) copyFileSync(join('examples/models/threshold-cascade', f), join(root, f));
    // the module as a default export handed sop's API (a copy out of the repository cannot import 'sop/extend')
    const plugin = readFileSync('examples/plugin-world/lt-world.mjs', 'utf8').replace(
      /^import \{ ([^}]+) \} from 'sop\/extend';$/m,
      'export default ({ $1 }) => {',
    );
    expect(plugin).toContain('export default ({ defineWorld');
    writeFileSync(join(root, 'lt-world.mjs'), `${plugin}};\n`);
    writeFileSync(join(root, 'inside.sop.json'), JSON.stringify(doc));
    // a module outside the root that leaves a mark naming the process it runs in
    writeFileSync(
      join(base, 'outside', 'lt-world.mjs'),
      `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(join(base, 'outside', 'ran-'))} + process.pid, 'ran');\n${plugin}};\n`,
    );
    writeFileSync(join(root, 'outside.sop.json'), JSON.stringify({ ...doc, plugins: ['../outside/lt-world.mjs'] }));
    const port = await freePort();
    redis = start(REDIS!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], process.env);
    await waitFor(redis, /Ready to accept connections/);
    url = `redis://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    for (const p of procs) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    redis?.child.kill('SIGTERM');
    await redis?.exited;
    rmSync(base, { recursive: true, force: true });
  });

  it('loads a module inside its --root with --yes and runs the job; refuses a module outside it, which never runs', async () => {
    const worker = sop(['worker', '--queue', url, '--root', root, '--yes', '--concurrency', '1']);
    await waitFor(worker, /ready: queue/);

    const out = join(root, 'OUT');
    const sweep = sop(['sweep', join(root, 'inside.sop.json'), '--yes', '--llm', 'mock', '--seeds', '1', '--queue', url, '--out', out]);
    expect(await sweep.exited, sweep.out).toBe(0);
    const [line] = readFileSync(join(out, 'results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    expect(line).toMatchObject({ status: 'finished' });
    // the worker's run used the module's world, policy and metric: the cascade's adopters
    const runs = join(out, 'runs');
    const run = join(runs, readFileSync(join(out, 'results.jsonl'), 'utf8').match(/"key":"([^"]+)"/)![1]!);
    const q = start(process.execPath, [CLI, 'query', run, "select value from metrics where name = 'adopted' order by step", '--json'], env);
    procs.push(q);
    expect(await q.exited, q.out).toBe(0);
    expect((JSON.parse(q.out) as Array<{ value: number }>).map((r) => r.value)).toEqual([16, 22, 27, 29, 29, 29]);

    const out2 = join(root, 'OUT2');
    const refused = sop(['sweep', join(root, 'outside.sop.json'), '--yes', '--llm', 'mock', '--seeds', '1', '--queue', url, '--out', out2]);
    await waitFor(worker, /failed: refused: plugin .*lt-world\.mjs was not loaded: it is outside this worker's roots/);
    await refused.exited;
    // the sweep's own process loaded it (its --yes); the worker never did, and ran nothing of the job
    expect(existsSync(join(base, 'outside', `ran-${refused.child.pid}`))).toBe(true);
    expect(existsSync(join(base, 'outside', `ran-${worker.child.pid}`))).toBe(false);
    expect(existsSync(join(out2, 'runs'))).toBe(false);
  }, 300_000);
});
