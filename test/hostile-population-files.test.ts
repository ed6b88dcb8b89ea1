// Hostile population files (issue 32): the files a population reads are untrusted input. Through
// the real `sop` binary: a graph file that is /dev/zero, a symlink to it, a FIFO (or a link to
// one), /dev/urandom or a folder is refused by `sop validate`, `sop run --llm mock` and `sop
// plan` in one line within 10 s (also by the reader itself, when the file is swapped after the
// checks); the same for a population file; a UTF-16 CSV is refused in one line; a `__proto__`
// column is kept as `_proto_` with a warning; /etc/passwd as a population file or as a local
// model is refused without quoting a line of it; every name an expression reads is checked
// against what it sees, with the closest names; expressions of 200,000 terms or 50,000 nested
// brackets are one line; `sop export --parquet` to a symlink, a file or a device writes nothing.
// With a real redis-server and `sop worker --root`: a signed job whose SOP names a population or
// graph file outside the root is recorded failed with the reason, and the file's canary reaches
// no run folder and no request (a job whose file is inside the root shows that it would have).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Job, Queue } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, requireBuiltCli, spawnCliAsync } from './helpers/cli.js';
import { freePort } from './helpers/free-port.js';
import { until } from './helpers/until.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { signJob } from '../src/shared/util/job-signature.js';
import { readEdgeListFile } from '../src/features/population/worlds/graph-file.js';
import { loadPopulation } from '../src/features/population/population.js';
import { compileExpression } from '../src/features/population/worlds/expr.js';
import { checkSopFiles } from '../src/apps/sweep/job-policy.js';

const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));
if (!REDIS)
  console.warn('hostile population files: the worker tests are skipped: redis-server is not installed (apt-get install redis-server)');

let slowest = 0;
const counts = { graphs: 0, sources: 0, outside: 0, names: 0, limits: 0, quoted: 0, exports: 0, encodings: 0 };
afterAll(() => {
  console.log(
    `hostile population files: ${counts.graphs} graph files refused, ${counts.sources} population files refused, ` +
      `${counts.outside} files outside the root refused, ${counts.names} unknown names refused at validate, ` +
      `${counts.limits} oversized expressions refused, ${counts.encodings} encodings refused or kept safe, ` +
      `${counts.quoted} lines of refused files quoted, ${counts.exports} export folders refused; ` +
      `slowest refusal ${(slowest / 1000).toFixed(1)} s`,
  );
});

const tmp = mkdtempSync(join(tmpdir(), 'sop-hostile-pop-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const PEOPLE = 'id,name,trust,note\na0,Ann,credulous,hello\na1,Bob,sceptic,hi\na2,Cy,credulous,hey\n';

/** A small population SOP: three agents, one step, every agent deciding by its own call. */
function popSop(o: Record<string, unknown> = {}, state: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: 'hostile-population',
    llm: { model: 'gpt-4o-mini' },
    agents: {},
    root: 'feed',
    states: {
      feed: {
        environment_prompt: 'A small social network.',
        population: { source: { file: 'people.csv' }, id: 'id', persona: 'You are {{name}}. {{note}}', ...o },
        world: {
          type: 'social',
          params: { feed_size: 3, seed_posts: [{ id: 'news', author: 'a0', text: 'Buses are free.' }] },
          graph: { generate: { model: 'erdos_renyi', mean_degree: 1, seed: 1 } },
        },
        actions: ['post', 'like', 'repost', 'idle'],
        activation: { probability: 1 },
        cognition: [{ tier: 'per_agent' }],
        resolution: { type: 'shuffle', seed: 1 },
        max_steps: 1,
        next_states: { '1': 'end' },
        ...state,
      },
      end: { final: true },
    },
  };
}

/** Writes a SOP into `dir` (with people.csv next to it) and returns its path. */
function writeSop(dir: string, name: string, sop: Record<string, unknown>): string {
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, 'people.csv'))) writeFileSync(join(dir, 'people.csv'), PEOPLE);
  const file = join(dir, `${name}.sop.json`);
  writeFileSync(file, JSON.stringify(sop, null, 2));
  return file;
}

/** `sop ARGS` with a deadline: the status, the output, and how long it took. */
async function sop(args: string[], cwd: string, timeout = 30_000) {
  const t0 = Date.now();
  const r = await spawnCliAsync(args, { cwd, timeout });
  return { ...r, ms: Date.now() - t0, out: `${r.stdout}${r.stderr}` };
}

/**
 * A refusal as the issue asks: exit 1, one line, no stack trace. A hang (a FIFO read) is killed at
 * the deadline and fails; the time taken is reported (slowest), not asserted: on a loaded machine
 * a CLI's start alone varies by seconds (the 10 s of the issue is measured on a quiet one).
 */
function oneLineRefusal(r: Awaited<ReturnType<typeof sop>>, what: string): string {
  expect(r.signal, `${what}: killed at the deadline (hung)`).toBeNull();
  expect(r.status, `${what}: ${r.out}`).toBe(1);
  slowest = Math.max(slowest, r.ms);
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, `${what}: ${r.stderr}`).toHaveLength(1);
  expect(r.out).not.toMatch(/\n\s+at |RangeError|Maximum call stack|Invalid string length/);
  return lines[0]!;
}

/** Runs `jobs` at most `n` at a time (the machine is shared). */
async function limited<T>(n: number, jobs: Array<() => Promise<T>>): Promise<T[]> {
  const out: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

beforeAll(() => requireBuiltCli());

describe('graph and population files that are not regular files', () => {
  const dir = join(tmp, 'kinds');
  /** name -> the path a SOP gives, made in `dir`. */
  const kinds: Record<string, { path: string; reason: RegExp }> = {};
  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    symlinkSync('/dev/zero', join(dir, 'zero.csv'));
    spawnSync('mkfifo', [join(dir, 'fifo.csv')]);
    symlinkSync(join(dir, 'fifo.csv'), join(dir, 'fifo-link.csv'));
    mkdirSync(join(dir, 'folder.csv'));
    Object.assign(kinds, {
      'dev-zero': { path: '/dev/zero', reason: /\/dev\/zero: is a character device, not a regular file/ },
      'link-to-dev-zero': { path: 'zero.csv', reason: /zero\.csv: is a character device, not a regular file/ },
      fifo: { path: 'fifo.csv', reason: /fifo\.csv: is a named pipe \(FIFO\), not a regular file/ },
      'link-to-fifo': { path: 'fifo-link.csv', reason: /fifo-link\.csv: is a named pipe \(FIFO\), not a regular file/ },
      urandom: { path: '/dev/urandom', reason: /\/dev\/urandom: is a character device/ },
      folder: { path: 'folder.csv', reason: /folder\.csv: is a directory/ },
    });
    expect(statSync(join(dir, 'fifo.csv')).isFIFO()).toBe(true);
  });

  it('a graph file of each kind: validate, run and plan exit 1 with one line, never hang', async () => {
    const jobs: Array<() => Promise<void>> = [];
    for (const [name, k] of Object.entries(kinds)) {
      const file = writeSop(dir, `graph-${name}`, popSop({}, {}));
      const doc = JSON.parse(readFileSync(file, 'utf8'));
      doc.states.feed.world.graph = { file: k.path };
      writeFileSync(file, JSON.stringify(doc, null, 2));
      for (const cmd of [['validate'], ['run', '--llm', 'mock', '--out', join(dir, 'runs'), '--quiet'], ['plan']])
        jobs.push(async () => {
          const r = await sop([cmd[0]!, file, ...cmd.slice(1)], dir);
          const line = oneLineRefusal(r, `${cmd[0]} with graph ${name}`);
          expect(line).toContain('/states/feed/world/graph/file');
          expect(line).toMatch(k.reason);
        });
    }
    await limited(3, jobs);
    counts.graphs += Object.keys(kinds).length;
    // nothing of a run was left (no run folder marked killed)
    expect(existsSync(join(dir, 'runs')) ? readdirSync(join(dir, 'runs')) : []).toEqual([]);
  }, 300_000);

  it('the edge-list reader itself refuses each kind (a file swapped after the checks), in one line', async () => {
    for (const [name, k] of Object.entries(kinds)) {
      const path = k.path.startsWith('/') ? k.path : join(dir, k.path);
      const t0 = Date.now();
      const err = await readEdgeListFile(path, k.path).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.name, name).toBe('GraphError');
      expect(err!.message).toMatch(k.reason);
      expect(err!.message).not.toContain('\n');
      expect(Date.now() - t0).toBeLessThan(2000);
      counts.graphs++;
    }
  });

  it('a population file of each kind is refused by validate and by the loader', async () => {
    await limited(
      3,
      Object.entries(kinds).map(([name, k]) => async () => {
        const file = writeSop(dir, `source-${name}`, popSop({ source: { file: k.path } }));
        const line = oneLineRefusal(await sop(['validate', file], dir), `validate with source ${name}`);
        expect(line).toContain('/states/feed/population/source/file');
        expect(line).toMatch(k.reason);
      }),
    );
    for (const [name, k] of Object.entries(kinds)) {
      const err = await loadPopulation({ source: { file: k.path, format: 'csv' } }, { baseDir: dir }).then(
        () => undefined,
        (e: Error) => e,
      );
      expect(err?.message, name).toMatch(k.reason);
      counts.sources++;
    }
  }, 120_000);
});

describe('what a data file holds', () => {
  const dir = join(tmp, 'content');

  it('a UTF-16 CSV (with its byte order mark) is refused in one line; NUL bytes too', async () => {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'utf16.csv'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(PEOPLE, 'utf16le')]));
    writeFileSync(join(dir, 'nul.csv'), Buffer.from('id,name\u0000\na0,Ann\n'));
    for (const [file, reason] of [
      ['utf16.csv', /utf16\.csv: is UTF-16 \(little-endian\) text \(its byte order mark says so\); save it as UTF-8/],
      ['nul.csv', /nul\.csv:1: holds a NUL byte: not a text file/],
    ] as const) {
      const sopFile = writeSop(dir, file, popSop({ source: { file } }));
      const line = oneLineRefusal(await sop(['validate', sopFile], dir), file);
      expect(line).toMatch(reason);
      expect(line).not.toContain('\u0000');
      counts.encodings++;
    }
  }, 60_000);

  it('a column named __proto__ is kept as _proto_, with a warning at validate', async () => {
    writeFileSync(join(dir, 'proto.csv'), 'id,__proto__,name\na0,polluted,Ann\na1,x,Bob\n');
    const sopFile = writeSop(dir, 'proto', popSop({ source: { file: 'proto.csv' }, persona: 'You are {{name}}.' }));
    const r = await sop(['validate', sopFile], dir);
    expect(r.status, r.out).toBe(0);
    expect(r.stderr).toContain(
      'warning: proto.csv: column 2 is named "__proto__", which cannot be an agent\'s attribute: it is kept as "_proto_"',
    );
    const pop = await loadPopulation({ source: { file: 'proto.csv' } }, { baseDir: dir });
    expect(pop.columns).toEqual(['id', '_proto_', 'name']);
    expect(pop.row(0)).toEqual({ id: 'a0', _proto_: 'polluted', name: 'Ann' });
    expect(Object.getPrototypeOf(pop.row(0))).toBe(Object.prototype);
    counts.encodings++;
  }, 60_000);

  it('/etc/passwd as a population file, an edge list, a local model or sweep inputs: refused without a line of it', async () => {
    const passwd = readFileSync('/etc/passwd', 'utf8');
    const lines = passwd.split('\n').filter((l) => l.trim() !== '');
    const users = lines.map((l) => l.split(':')[0]!);
    const runs = [
      ['validate', writeSop(dir, 'passwd-source', popSop({ source: { file: '/etc/passwd', format: 'csv' } }))],
      ['run', writeSop(dir, 'passwd-source-run', popSop({ source: { file: '/etc/passwd', format: 'csv' } })), '--llm', 'mock', '--quiet'],
      ['run', writeSop(dir, 'passwd-graph', popSop({}, {})), '--llm', 'mock', '--quiet'],
      ['run', join(process.cwd(), 'examples/debate/debate.sop.json'), '--llm', 'local:/etc/passwd', '--quiet'],
      ['sweep', join(process.cwd(), 'examples/debate/debate.sop.json'), '--llm', 'mock', '--inputs', join(dir, 'passwd.csv')],
    ];
    symlinkSync('/etc/passwd', join(dir, 'passwd.csv'));
    const graphSop = JSON.parse(readFileSync(runs[2]![1]!, 'utf8'));
    graphSop.states.feed.world.graph = { file: '/etc/passwd' };
    writeFileSync(runs[2]![1]!, JSON.stringify(graphSop));
    // as an edge list, its first line has one field ("follower,followee" has two): refused at that line
    const results = await limited(
      2,
      runs.map((args) => () => sop(args, dir, 120_000)),
    );
    for (const [i, r] of results.entries()) {
      expect(r.status, `${runs[i]!.join(' ')}: ${r.out}`).not.toBe(0);
      expect(r.out).toContain('passwd'); // the file is named
      for (const l of lines) expect(r.out, `${runs[i]!.join(' ')} quotes a line of /etc/passwd`).not.toContain(l);
      const quoted = [...lines.filter((l) => r.out.includes(l)), ...users.filter((u) => r.out.includes(`${u}:x:`))];
      if (r.out.includes('"root"')) quoted.push('"root"');
      counts.quoted += quoted.length;
      expect(quoted, `${runs[i]!.join(' ')}: ${r.out}`).toEqual([]);
    }
  }, 300_000);
});

describe('sop validate checks the names every expression reads', () => {
  const dir = join(tmp, 'names');

  it("refuses a metric's where over a column the source lacks, at the metric's pointer, with the closest columns", async () => {
    const file = writeSop(dir, 'trsut', popSop({}, { metrics: { credulous: { reducer: 'share', where: "trsut == 'credulous'" } } }));
    const line = oneLineRefusal(await sop(['validate', file], dir), 'trsut');
    expect(line).toContain('/states/feed/metrics/credulous/where: unknown name "trsut"');
    expect(line).toContain('did you mean "trust"?');
    expect(line).toMatch(/the closest: trust, /);
    counts.names++;
  }, 60_000);

  it('refuses process.env, globalThis and agent["__proto__"] in activation, cognition, metric, priority and transition', async () => {
    const cases: Array<[string, Record<string, unknown>, RegExp]> = [
      ['activation', { activation: { expr: 'process.env.OPENAI_API_KEY' } }, /\/activation\/expr: unknown name "process"/],
      ['activation-global', { activation: { expr: 'globalThis and step > 0' } }, /\/activation\/expr: unknown name "globalThis"/],
      [
        'cognition',
        { cognition: [{ tier: 'per_agent', where: "agent['__proto__'] == 1" }] },
        /\/cognition\/0\/where: "__proto__" is not allowed/,
      ],
      ['metric', { metrics: { m: { reducer: 'count', where: 'process.env.HOME' } } }, /\/metrics\/m\/where: unknown name "process"/],
      ['metric-of', { metrics: { m: { reducer: 'sum', of: 'globalThis' } } }, /\/metrics\/m\/of: unknown name "globalThis"/],
      ['priority', { resolution: { type: 'priority', expr: "agent['__proto__']" } }, /\/resolution\/expr: "__proto__" is not allowed/],
      [
        'priority-name',
        { resolution: { type: 'priority', expr: 'agent.trsut' } },
        /\/resolution\/expr: "agent" has no "trsut"; did you mean "agent.trust"\?/,
      ],
      ['transition', { transitions: [{ when: 'process.env.X > 0', to: 'end' }] }, /\/transitions\/0\/when: unknown name "process"/],
      ['transition-metric', { transitions: [{ when: 'cascade_news_sise > 3', to: 'end' }] }, /did you mean "cascade_news_size"\?/],
      [
        'survey',
        { interventions: [{ at: 1, survey: { name: 'why', question: 'Why?', where: 'globalThis' } }] },
        /\/interventions\/0\/survey\/where: unknown name "globalThis"/,
      ],
    ];
    await limited(
      3,
      cases.map(([name, state, re]) => async () => {
        const file = writeSop(dir, name, popSop({}, state));
        const r = await sop(['validate', file], dir);
        expect(r.status, `${name}: ${r.out}`).toBe(1);
        expect(r.stderr, name).toMatch(re);
        expect(r.out).not.toMatch(/\n\s+at /);
        counts.names++;
      }),
    );
    // what each expression does see passes
    const fine = writeSop(
      dir,
      'fine',
      popSop(
        {},
        {
          activation: { expr: "step >= 1 and hour >= 0 and trust != 'none' and id != ''" },
          metrics: {
            reposts: { reducer: 'share', where: "action.name == 'repost' and ok and output != ''" },
            by_trust: { reducer: 'histogram', of: 'trust', over: 'agents' },
          },
          resolution: { type: 'priority', expr: "agent.id == 'a0' ? 1 : 0" },
          transitions: [{ when: 'cascade_news_size >= 2 or reposts > 0.5 or by_trust_credulous > 1', to: 'end' }],
        },
      ),
    );
    const ok = await sop(['validate', fine], dir);
    expect(ok.status, ok.out).toBe(0);
  }, 180_000);

  it('an expression of 200,000 terms or 50,000 nested brackets is one line, never a stack overflow', async () => {
    const huge = `1${'+1'.repeat(199_999)}`;
    const nested = `${'('.repeat(50_000)}1${')'.repeat(50_000)}`;
    const places: Array<[string, (e: string) => Record<string, unknown>]> = [
      ['activation', (e) => ({ activation: { expr: e } })],
      ['metric', (e) => ({ metrics: { m: { reducer: 'count', where: e } } })],
      ['priority', (e) => ({ resolution: { type: 'priority', expr: e } })],
      ['transition', (e) => ({ transitions: [{ when: e, to: 'end' }] })],
    ];
    const jobs = places.flatMap(([place, at]) =>
      [
        ['terms', huge],
        ['nested', nested],
      ].map(([kind, e]) => async () => {
        const file = writeSop(dir, `limit-${place}-${kind}`, popSop({}, at(e!)));
        const line = oneLineRefusal(await sop(['validate', file], dir), `${kind} in ${place}`);
        expect(line).toMatch(/is longer than 10000 characters, the limit of an expression/);
        expect(line.length).toBeLessThan(400);
        counts.limits++;
      }),
    );
    await limited(3, jobs);
    // under the length limit, the depth limit holds
    for (const e of [
      `1${'+1'.repeat(4000)}`,
      `${'('.repeat(4000)}1${')'.repeat(4000)}`,
      `${'-'.repeat(9000)}1`,
      `${'not '.repeat(2000)}1`,
    ]) {
      expect(() => compileExpression(e)).toThrow(
        /nests (brackets|more than 200 operations) more than|nests more than 200|too deeply nested/,
      );
      counts.limits++;
    }
  }, 300_000);
});

describe('sop export --parquet to a place that is not a folder of its own', () => {
  it('refuses a symlink, an existing file or a device in one line and writes nothing through it', async () => {
    const dir = join(tmp, 'export');
    const file = writeSop(dir, 'small', popSop());
    const made = await sop(['run', file, '--llm', 'mock', '--out', join(dir, 'runs'), '--quiet'], dir, 120_000);
    expect(made.status, made.out).toBe(0);
    const run = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
    const target = join(dir, 'elsewhere');
    mkdirSync(target);
    symlinkSync(target, join(dir, 'link-out'));
    writeFileSync(join(dir, 'file-out'), 'keep me\n');
    for (const [out, reason] of [
      [join(dir, 'link-out'), /link-out: is a symbolic link; give the export folder itself/],
      [join(dir, 'file-out'), /file-out: is not a folder|file-out: is .*not a folder/],
      ['/dev/null', /\/dev\/null: is a character device, not a folder/],
    ] as const) {
      const line = oneLineRefusal(await sop(['export', run, '--parquet', out], dir), out);
      expect(line).toMatch(reason);
      counts.exports++;
    }
    expect(readdirSync(target)).toEqual([]);
    expect(readFileSync(join(dir, 'file-out'), 'utf8')).toBe('keep me\n');
    expect(lstatSync('/dev/null').isCharacterDevice()).toBe(true);
    // a folder of its own is written
    const ok = await sop(['export', run, '--parquet', join(dir, 'parquet')], dir);
    expect(ok.status, ok.out).toBe(0);
    expect(readdirSync(join(dir, 'parquet')).filter((f) => f.endsWith('.parquet')).length).toBeGreaterThan(0);
  }, 180_000);
});

describe("the files a worker's --root covers, beyond population and graph files", () => {
  it('knowledge files, sub-flow SOPs and the files a sub-flow names are checked too, symlinks resolved', () => {
    const base = join(tmp, 'roots');
    const root = join(base, 'root');
    const out = join(base, 'outside');
    mkdirSync(root, { recursive: true });
    mkdirSync(out, { recursive: true });
    const main = join(root, 'main.sop.json');
    const knowledge = (path: string) => ({ states: { talk: { components: { Host: { knowledge: { path } } } } } });
    const subflow = (file: string) => ({ states: { work: { commands: { delegate: { executor: 'sop', settings: { file } } } } } });
    const check = (sop: unknown) => () => checkSopFiles(sop, main, [root]);
    expect(check(knowledge('kb.json'))).not.toThrow();
    expect(check(knowledge('../outside/kb.json'))).toThrow(
      /the SOP's knowledge file at \/states\/talk\/components\/Host\/knowledge\/path ".*outside\/kb\.json" is outside this worker's --root/,
    );
    expect(check(subflow(join(out, 'sub.sop.json')))).toThrow(
      /the SOP's sub-flow SOP file at \/states\/work\/commands\/delegate\/settings\/file .* is outside/,
    );
    // a sub-flow inside the root that names a population file outside it (through a symlink folder)
    symlinkSync(out, join(root, 'escape'));
    writeFileSync(join(root, 'sub.sop.json'), JSON.stringify(popSop({ source: { file: 'escape/secret.csv' } })));
    expect(check(subflow('sub.sop.json'))).toThrow(
      /the sub-flow sub\.sop\.json's population file at \/states\/feed\/population\/source\/file ".*escape\/secret\.csv" \(really ".*outside\/secret\.csv"\) is outside/,
    );
    writeFileSync(join(root, 'sub2.sop.json'), JSON.stringify(popSop()));
    expect(check(subflow('sub2.sop.json'))).not.toThrow();
    // a sub-flow that runs itself is visited once
    writeFileSync(main, JSON.stringify(subflow('main.sop.json')));
    expect(check(subflow('main.sop.json'))).not.toThrow();
    counts.outside += 3;
  });
});

interface Proc {
  child: ChildProcess;
  out: string;
  exited: Promise<number | null>;
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
}

function start(cmd: string, args: string[], env: NodeJS.ProcessEnv, cwd?: string): Proc {
  const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const waiters: Array<() => boolean> = [];
  const p: Proc = {
    child,
    out: '',
    exited: new Promise((r) => child.on('exit', (code) => r(code))),
    waitFor: (re, ms = 120_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${re} within ${ms} ms in:\n${p.out.slice(-3000)}`)), ms);
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

/** Every regular file under a folder (symlinks not followed), with its bytes. */
function filesUnder(dir: string): Array<[string, Buffer]> {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => lstatSync(f).isFile())
    .map((f) => [f, readFileSync(f)]);
}

describe.skipIf(!REDIS)('sop worker --root: population and graph files outside the root', () => {
  const SECRET = 'queue-secret-pop-0123456789abcdef';
  const OUTSIDE_CANARY = 'CANARY-OUTSIDE-7f3a9c';
  const INSIDE_CANARY = 'CANARY-INSIDE-2b8e41';
  const SWEEP = 'a1a1a1a1a1a1';
  let redis: Proc;
  let worker: Proc;
  let queue: Queue;
  let llm: TestServer;
  let root: string;
  let outside: string;

  beforeAll(async () => {
    const port = await freePort();
    redis = start(REDIS!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], process.env);
    await redis.waitFor(/Ready to accept connections/, 60_000);
    queue = new Queue('sop-runs', { connection: { host: '127.0.0.1', port, maxRetriesPerRequest: null } });
    llm = await startOpenAiServer({ reply: () => 'I stay idle.' });
    const base = mkdtempSync(join(tmpdir(), 'sop-hostile-pop-root-'));
    root = join(base, 'root');
    outside = join(base, 'outside');
    mkdirSync(root);
    mkdirSync(outside);
    const secretRows = `id,name,trust,note\na0,Ann,credulous,${OUTSIDE_CANARY}\na1,Bob,sceptic,${OUTSIDE_CANARY}\n`;
    writeFileSync(join(outside, 'secret.csv'), secretRows);
    writeFileSync(join(outside, 'edges.csv'), `follower,followee\na0,a1\n${OUTSIDE_CANARY},a0\n`);
    writeFileSync(join(root, 'people.csv'), `id,name,trust,note\na0,Ann,credulous,${INSIDE_CANARY}\na1,Bob,sceptic,hi\n`);
    symlinkSync(join(outside, 'secret.csv'), join(root, 'link.csv'));
    worker = start(
      process.execPath,
      [CLI, 'worker', '--queue', `redis://127.0.0.1:${port}`, '--root', root, '--concurrency', '1'],
      { ...process.env, SOP_QUEUE_SECRET: SECRET, OPENAI_API_KEY: 'sk-test-pop', OPENAI_BASE_URL: llm.url },
      root,
    );
    await worker.waitFor(/ready: queue/, 60_000);
  }, 120_000);

  afterAll(async () => {
    if (worker?.child.exitCode === null) worker.child.kill('SIGKILL');
    await queue?.close();
    redis?.child.kill('SIGTERM');
    await redis?.exited;
    await llm?.close();
  });

  async function queueJob(key: string, sopFile: string) {
    const data: Record<string, unknown> = {
      v: 1,
      sweep: SWEEP,
      file: sopFile,
      runsDir: join(root, 'runs'),
      point: { key, seed: 1, inputs: {}, repeat: 1 },
      llm: 'openai',
    };
    const id = `${SWEEP}-${key}`;
    data.sig = signJob(SECRET, id, data);
    await queue.add('run', data, { jobId: id, attempts: 3, backoff: { type: 'fixed', delay: 10 } });
    return id;
  }

  it('a job whose SOP names a file outside the root is failed with the reason; its canary reaches no run folder and no request', async () => {
    const cases: Array<[string, Record<string, unknown>, Record<string, unknown>, RegExp]> = [
      [
        'absolute',
        { source: { file: join(outside, 'secret.csv') } },
        {},
        /population file at \/states\/feed\/population\/source\/file ".*secret\.csv" is outside/,
      ],
      [
        'relative',
        { source: { file: '../outside/secret.csv' } },
        {},
        /population file at \/states\/feed\/population\/source\/file ".*outside\/secret\.csv" is outside/,
      ],
      ['symlink', { source: { file: 'link.csv' } }, {}, /population file at .*link\.csv" \(really ".*outside\/secret\.csv"\) is outside/],
      [
        'graph',
        {},
        { graph: { file: join(outside, 'edges.csv') } },
        /edge list file at \/states\/feed\/world\/graph\/file ".*edges\.csv" is outside/,
      ],
    ];
    for (const [key, population, world, reason] of cases) {
      const sop = popSop(population);
      const feed = (sop.states as Record<string, Record<string, unknown>>).feed!;
      feed.world = { ...(feed.world as object), ...world };
      const id = await queueJob(`out-${key}`, writeSop(root, `out-${key}`, sop));
      await worker.waitFor(new RegExp(`job ${id} failed: refused: `));
      // the worker logs the refusal before BullMQ has moved the job to failed: wait for that move
      let job = await Job.fromId(queue, id);
      expect(await until(async () => (await job!.getState()) === 'failed', { timeoutMs: 30_000 }), 'job recorded failed').toBe(true);
      job = await Job.fromId(queue, id);
      expect(job!.failedReason).toMatch(/^refused: the SOP's /);
      expect(job!.failedReason).toMatch(reason);
      expect(job!.failedReason).toMatch(/outside this worker's --root/);
      expect(job!.failedReason).not.toContain(OUTSIDE_CANARY);
      expect(job!.attemptsMade, 'refused once, not retried').toBe(1);
      counts.outside++;
    }
    expect(llm.requests, 'no refused job called the LLM').toHaveLength(0);

    // the same SOP over a file inside the root runs, and its canary reaches the requests: the
    // checks below would see the outside canary had it been read
    const id = await queueJob('inside', writeSop(root, 'inside', popSop()));
    const [, status] = await worker.waitFor(/run inside (\w+)(?: after|:)/, 180_000);
    expect(status, worker.out).toBe('finished');
    const job = await Job.fromId(queue, id);
    expect(await until(async () => (await job!.getState()) === 'completed', { timeoutMs: 30_000 }), 'job recorded completed').toBe(true);
    const sent = JSON.stringify(llm.requests.map((r) => r.body));
    expect(sent).toContain(INSIDE_CANARY);
    expect(sent).not.toContain(OUTSIDE_CANARY);
    const runFiles = filesUnder(join(root, 'runs'));
    expect(runFiles.length).toBeGreaterThan(0);
    expect(runFiles.some(([, b]) => b.includes(INSIDE_CANARY))).toBe(true);
    for (const [f, b] of runFiles) expect(b.includes(OUTSIDE_CANARY), f).toBe(false);
    expect(worker.out).not.toContain(OUTSIDE_CANARY);
  }, 300_000);
});
