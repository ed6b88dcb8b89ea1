// Hostile files (issue 11, section 4): device files, named pipes and oversized files given to
// every entry point; links, pipes and ordinary path errors met by executors in a real run (and
// its resume); host Unix sockets under --sandbox; setsid escapees of code; a full disk; damaged
// and hand-edited journals. Everything goes through the real `sop` binary or the real executors;
// nothing here is mocked but the LLM (cassettes).
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executor as code } from '../src/features/actions/executors/code.js';
import { sandboxSupport } from '../src/shared/sandbox/sandbox.js';
import { MemoryFiles } from '../src/core/workspace/memory-files.js';
import { UnsafeFileError } from '../src/shared/workspace/safe-file.js';
import { Workspace } from '../src/core/workspace/workspace.js';
import { execContext, tempDir } from './helpers/executor-context.js';
import { until } from './helpers/until.js';
import { CLI } from './helpers/cli.js';
import { scaled } from './helpers/time.js';

const FIX = join(process.cwd(), 'test/fixtures/durable');
const DEBATE = join(process.cwd(), 'examples/debate/debate.sop.json');
const TOWN = [
  'run',
  join(FIX, 'town.sop.json'),
  '--llm',
  `replay:${join(FIX, 'town.cassette.json')}`,
  '--answers',
  join(FIX, 'answers.txt'),
  '--seed',
  '7',
  '--quiet',
];

const counts = {
  inputs: 0,
  inputsRefused: 0,
  entryPoints: new Set<string>(),
  agentErrors: 0,
  agentErrorsReturned: 0,
  outsideUntouched: 0,
  sockets: 'skipped' as string,
  setsid: 0,
  setsidKilled: 0,
  enospc: 'skipped' as string,
  damaged: 0,
  damagedContinued: 0,
};

interface Result {
  code: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/** Run the CLI (or another program); SIGKILL it after `timeoutMs`, scaled (a hang is a failure, not a wait). */
function run(cmd: string, args: string[], o: { cwd?: string; timeoutMs?: number } = {}): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: o.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timedOut = false;
    const timer = setTimeout(
      () => {
        timedOut = true;
        child.kill('SIGKILL');
      },
      scaled(o.timeoutMs ?? 30_000),
    );
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', reject);
    child.on('close', (codeNum) => {
      clearTimeout(timer);
      resolve({ code: codeNum, stdout, stderr, timedOut });
    });
  });
}
const sop = (args: string[], o?: { cwd?: string; timeoutMs?: number }) => run(process.execPath, [CLI, ...args], o);

/** Error lines of stderr (warnings and blank lines aside). */
const errorLines = (stderr: string) => stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('warning:'));

async function pool<T>(items: T[], size: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

const onlyRun = (out: string) => {
  const dirs = readdirSync(out).filter((d) => !d.startsWith('.'));
  if (dirs.length !== 1) throw new Error(`expected one run folder in ${out}, found ${dirs.length}`);
  return join(out, dirs[0]!);
};
/** transcript.md from its first state on (the header names the run, its start, a fork's origin). */
const transcript = (dir: string) => {
  const md = readFileSync(join(dir, 'transcript.md'), 'utf8');
  return md.slice(md.indexOf('\n## '));
};

let base: string;
let reference: string;
beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'sop-hostile-files-'));
  const r = await sop([...TOWN, '--out', join(base, 'reference')], { timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(0);
  reference = onlyRun(join(base, 'reference'));
});
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
  console.log(
    `hostile files: ${counts.inputsRefused}/${counts.inputs} device, FIFO and oversized inputs refused with one line by ${counts.entryPoints.size} entry points; ` +
      `${counts.agentErrorsReturned}/${counts.agentErrors} link, FIFO and path errors returned to the agent (run and resume went on), ${counts.outsideUntouched} outside files untouched; ` +
      `host Unix sockets under --sandbox: ${counts.sockets}; setsid escapees killed: ${counts.setsidKilled}/${counts.setsid}; ` +
      `disk full: ${counts.enospc}; damaged journals continued from the last good checkpoint: ${counts.damagedContinued}/${counts.damaged}`,
  );
});

describe('input files: devices, named pipes and oversized files at every entry point', () => {
  it('exits 1 with one clear line, never reads, never blocks, never aborts', async () => {
    const dir = join(base, 'inputs');
    mkdirSync(dir);
    const fifo = join(dir, 'fifo');
    execFileSync('mkfifo', [fifo]);
    // Sparse: over every cap (SOP 5 MiB, answers 16 MiB, cassette 256 MiB, journal 1 GiB) on no disk space.
    const huge = join(dir, 'huge.json');
    writeFileSync(huge, '');
    truncateSync(huge, 1024 * 1024 * 1024 + 1);
    const inputs: Array<[string, string, RegExp]> = [
      ['/dev/zero', '/dev/zero', /is a character device, not a regular file/],
      ['/dev/urandom', '/dev/urandom', /is a character device, not a regular file/],
      ['fifo', fifo, /is a named pipe \(FIFO\), not a regular file/],
      ['oversized', huge, /is 1073741825 bytes, over the limit of \d+ bytes/],
    ];
    const parentOf = (name: string, path: string) => {
      const file = join(dir, `parent-${name.replace(/\W/g, '_')}.sop.json`);
      writeFileSync(
        file,
        JSON.stringify({
          name: 'parent',
          agents: { Ann: { roles: { work: 'Worker' } } },
          root: 'work',
          states: {
            work: {
              roles: ['Worker'],
              components: { Worker: { task: 'Delegate.' } },
              commands: { sub: { executor: 'sop', settings: { file: path } }, finish: { executor: 'finish' } },
              next_states: { '1': 'end' },
            },
            end: { final: true },
          },
        }),
      );
      return file;
    };
    const entryPoints: Array<[string, (name: string, path: string) => string[]]> = [
      ['validate FILE', (_, p) => ['validate', p]],
      ['run FILE --llm mock', (_, p) => ['run', p, '--llm', 'mock', '--out', join(dir, 'runs')]],
      ['run --llm replay:FILE', (_, p) => ['run', DEBATE, '--llm', `replay:${p}`, '--out', join(dir, 'runs')]],
      ['run --answers FILE', (_, p) => ['run', DEBATE, '--llm', 'mock', '--answers', p, '--out', join(dir, 'runs')]],
      ['import FILE', (_, p) => ['import', p]],
      ['resume FILE', (_, p) => ['resume', p]],
      ['show FILE', (_, p) => ['show', p]],
      ['fork FILE --at 0', (_, p) => ['fork', p, '--at', '0', '--out', join(dir, 'forks')]],
      ['validate a SOP whose sub-SOP is FILE', (n, p) => ['validate', parentOf(n, p)]],
      ['run a SOP whose sub-SOP is FILE', (n, p) => ['run', parentOf(n, p), '--llm', 'mock', '--out', join(dir, 'runs')]],
    ];
    // A journal has no size ceiling (it is read a block at a time, docs/durability.md): an oversized
    // file given as a journal is read as one, and refused for what it holds, not for its size.
    const JOURNAL_READERS = new Set(['resume FILE', 'show FILE', 'fork FILE --at 0']);
    const cases = inputs.flatMap(([name, path, reason]) =>
      entryPoints.map(([entry, args]) => ({
        name,
        entry,
        args: args(name, path),
        reason:
          name === 'oversized' && JOURNAL_READERS.has(entry)
            ? /the journal does not start with run_started|the line is longer than \d+ MiB/
            : reason,
      })),
    );
    // A run folder whose journal is a named pipe.
    const folder = join(dir, 'folder-with-fifo-journal');
    mkdirSync(folder);
    execFileSync('mkfifo', [join(folder, 'journal.jsonl')]);
    cases.push({
      name: 'fifo journal',
      entry: 'resume RUN_DIR',
      args: ['resume', folder],
      reason: /journal\.jsonl: is a named pipe \(FIFO\)/,
    });
    const failures: string[] = [];
    await pool(cases, 4, async (c) => {
      counts.inputs++;
      counts.entryPoints.add(c.entry);
      const r = await sop(c.args, { timeoutMs: 60_000 }); // a CLI that hangs on its input; many seconds on a loaded machine
      const lines = errorLines(r.stderr);
      const ok = !r.timedOut && r.code === 1 && lines.length === 1 && c.reason.test(lines[0]!) && !/\n\s+at /.test(r.stderr);
      if (ok) counts.inputsRefused++;
      else failures.push(`${c.entry} with ${c.name}: exit ${r.code}${r.timedOut ? ' (hung, killed)' : ''}: ${r.stderr.slice(0, 300)}`);
    });
    expect(failures).toEqual([]);
    expect(counts.inputsRefused).toBe(41);
  }, 300_000);

  it('names the sub-SOP and its JSON pointer in sop validate', async () => {
    const file = join(base, 'parent-zero.sop.json');
    writeFileSync(
      file,
      JSON.stringify(
        {
          name: 'parent',
          agents: { Ann: { roles: { work: 'Worker' } } },
          root: 'work',
          states: {
            work: {
              roles: ['Worker'],
              components: { Worker: { task: 't' } },
              commands: { sub: { executor: 'sop', settings: { file: '/dev/zero' } } },
              next_states: { '1': 'end' },
            },
            end: { final: true },
          },
        },
        null,
        2,
      ),
    );
    const r = await sop(['validate', file]);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toMatch(
      /parent-zero\.sop\.json:\d+:\d+: \/states\/work\/commands\/sub\/settings\/file: sub-SOP \/dev\/zero: is a character device, not a regular file$/,
    );
  });
});

// A SOP whose agent (a cassette) plants links and pipes with code, then aims commands at them
// and at paths that fail in ordinary ways.
function hostileSop(dir: string, outside: string): { sopFile: string; cassette: string } {
  const sopFile = join(dir, 'hostile.sop.json');
  writeFileSync(
    sopFile,
    JSON.stringify({
      name: 'hostile-files',
      memory: { plan: 'start' },
      environment: { type: 'cooperative', summary: { enabled: false } },
      agents: { Ann: { roles: { work: 'Worker' } } },
      root: 'work',
      states: {
        work: {
          roles: ['Worker'],
          components: { Worker: { task: 'Work. The plan: {{memory.plan}}' } },
          commands: {
            run_code: { executor: 'code', settings: { language: 'bash' } },
            read_ws: { executor: 'memory', settings: { op: 'read', target: 'workspace' } },
            write_ws: { executor: 'memory', settings: { op: 'write', target: 'workspace' } },
            append_ws: { executor: 'memory', settings: { op: 'append', target: 'workspace' } },
            update_plan: { executor: 'memory', settings: { op: 'write', file: 'plan' } },
            finish: { executor: 'finish' },
          },
          controller: { max_turns: 30 },
          next_states: { '1': 'end' },
        },
        end: { final: true },
      },
    }),
  );
  const plant = [
    `ln "${outside}/victim.txt" linked.txt`,
    'mkfifo pipe',
    `ln -s "${outside}/victim.txt" sym`,
    'truncate -s 300M big.bin',
    'echo x > afile',
    `rm ../memory/logs.md && ln "${outside}/logs-victim.txt" ../memory/logs.md`,
    'rm ../memory/plan.md && mkfifo ../memory/plan.md',
    'echo planted',
  ].join('\n');
  const commands: Array<[string, Record<string, string>]> = [
    ['run_code', { code: plant }],
    ['write_ws', { file: 'linked.txt', content: 'pwned' }],
    ['append_ws', { file: 'pipe', content: 'x' }],
    ['read_ws', { file: 'big.bin' }],
    ['read_ws', { file: 'sym' }],
    ['write_ws', { file: 'n'.repeat(300), content: 'x' }],
    ['write_ws', { file: 'afile/sub.txt', content: 'x' }],
    ['write_ws', { file: 'afile/deeper/sub.txt', content: 'x' }],
    ['update_plan', { content: 'new plan' }],
    ['write_ws', { file: 'ok.txt', content: 'fine' }],
    ['finish', { result: 'done' }],
  ];
  const cassette = join(dir, 'hostile.cassette.json');
  writeFileSync(
    cassette,
    JSON.stringify({
      version: 1,
      source: 'hand-written',
      interactions: commands.map(([command, args]) => ({ purpose: 'agent', response: JSON.stringify({ command, command_args: args }) })),
    }),
  );
  return { sopFile, cassette };
}

const EXPECTED_REFUSALS = [
  /file "linked\.txt" refused: it has \d hard links/,
  /file "pipe" refused: it is a named pipe \(FIFO\), not a regular file/,
  /file "big\.bin" refused: it is 314572800 bytes; at most 1 MiB is read/,
  /path "sym" refused: "sym" is a symbolic link/,
  /cannot write "n{300}": the name is too long \(ENAMETOOLONG\)/,
  /cannot create the folder of "afile\/sub\.txt": .*\(EEXIST\)/,
  /cannot create the folder of "afile\/deeper\/sub\.txt": .*\(ENOTDIR\)/,
  /file "plan\.md" refused: it is a named pipe \(FIFO\), not a regular file/,
];

describe('executor file operations on planted links, pipes and bad paths', () => {
  it('come back to the agent as failed results; the run and its resume go on; nothing outside is written', async () => {
    const dir = join(base, 'executors');
    const outside = join(dir, 'outside');
    mkdirSync(outside, { recursive: true });
    const { sopFile, cassette } = hostileSop(dir, outside);
    const results: string[][] = [];
    for (const [label, first, resume] of [
      ['whole', [] as string[], false],
      ['stopped and resumed', ['--max-turns', '5'], true],
    ] as const) {
      writeFileSync(join(outside, 'victim.txt'), 'victim\n');
      writeFileSync(join(outside, 'logs-victim.txt'), 'logs victim\n');
      const out = join(dir, `runs-${results.length}`);
      // Unsandboxed code plants the links and pipes (the sandbox would keep it out of memory/).
      const r = await sop(['run', sopFile, '--llm', `replay:${cassette}`, '--auto-run', '--no-sandbox', '--json', '--out', out, ...first], {
        timeoutMs: 60_000,
      });
      expect(r.timedOut, label).toBe(false);
      expect(r.code, r.stderr).toBe(0);
      let events = r.stdout;
      if (resume) {
        const again = await sop(['resume', onlyRun(out), '--max-turns', '30', '--json'], { timeoutMs: 60_000 });
        expect(again.timedOut).toBe(false);
        expect(again.code, again.stderr).toBe(0);
        events += again.stdout;
      }
      const parsed = events
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; ok?: boolean; result?: string; status?: string; message?: string });
      expect(parsed.filter((e) => e.type === 'run_finished').at(-1)?.status).toBe('finished');
      const failed = parsed.filter((e) => e.type === 'executor_result' && e.ok === false).map((e) => e.result!);
      results.push(failed);
      expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('victim\n');
      expect(readFileSync(join(outside, 'logs-victim.txt'), 'utf8')).toBe('logs victim\n');
      counts.outsideUntouched += 2;
      if (!resume) {
        // The engine's own logs line is refused too, with one warning, and the run goes on.
        expect(parsed.filter((e) => e.type === 'warning' && /logs memory file/.test(e.message ?? ''))).toHaveLength(1);
        expect(readFileSync(join(onlyRun(out), 'workspace', 'ok.txt'), 'utf8')).toBe('fine');
      }
    }
    // The uninterrupted run meets every refusal; the resumed one at least those before the stop.
    const [whole, resumed] = results as [string[], string[]];
    for (const pattern of EXPECTED_REFUSALS) {
      counts.agentErrors++;
      if (whole.some((t) => pattern.test(t))) counts.agentErrorsReturned++;
    }
    expect(counts.agentErrorsReturned).toBe(EXPECTED_REFUSALS.length);
    expect(whole).toHaveLength(EXPECTED_REFUSALS.length);
    for (const pattern of EXPECTED_REFUSALS.slice(0, 4)) expect(resumed.some((t) => pattern.test(t))).toBe(true);
  }, 180_000);

  it('never writes through a hard link; a memory file put back from the journal replaces a planted link', () => {
    const dir = tempDir('sop-links-');
    const victim = join(dir, 'victim.txt');
    writeFileSync(victim, 'untouched');
    const ws = new Workspace(join(dir, 'ws')).ensure();
    execFileSync('ln', [victim, join(ws.root, 'hard.txt')]);
    expect(() => ws.write('hard.txt', 'pwned')).toThrow(UnsafeFileError);
    expect(() => ws.write('hard.txt', 'pwned', true)).toThrow(/2 hard links/);
    expect(() => ws.read('hard.txt')).toThrow(/2 hard links/);
    const memory = new MemoryFiles({ dir: join(dir, 'memory'), initial: { plan: 'p0' } }).init();
    rmSync(join(dir, 'memory', 'plan.md'));
    execFileSync('ln', [victim, join(dir, 'memory', 'plan.md')]);
    expect(() => memory.write('plan', 'pwned')).toThrow(/hard links/);
    expect(memory.snapshot().plan).toMatch(/cannot be read: .*hard links/);
    memory.restore('plan', 'from the journal');
    expect(readFileSync(join(dir, 'memory', 'plan.md'), 'utf8')).toBe('from the journal');
    expect(memory.read('plan')).toBe('from the journal');
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
  });
});

const support = sandboxSupport();
if (!support.ok) console.warn(`hostile-files: --sandbox socket test skipped: ${support.reason}`);

describe('--sandbox and host Unix sockets', () => {
  it.skipIf(!support.ok)(
    `cannot connect to a host socket, in the workspace or in a host folder${support.ok ? '' : ` (skipped: ${support.reason})`}`,
    async () => {
      // One socket in the workspace (bound writable into the sandbox), one in a host folder outside
      // /tmp (visible read-only in the sandbox): a new network namespace hides neither.
      const hostDir = mkdtempSync(join(process.cwd(), '.hs-'));
      const servers: Server[] = [];
      try {
        const ctx = execContext({ sandbox: true });
        const plain = execContext();
        const paths = [join(hostDir, 's'), join(ctx.ws.root, 's'), join(plain.ws.root, 's')];
        for (const p of paths) {
          const server = createServer((s) => s.end('host service\n'));
          await new Promise<void>((resolve) => server.listen(p, resolve));
          servers.push(server);
        }
        const probe = (targets: string[]) =>
          [
            'import socket',
            `for p in ${JSON.stringify(targets)}:`,
            '    try:',
            '        s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(p)',
            '        print("connected:", s.recv(100).decode().strip())',
            '    except OSError as e:',
            '        print("refused:", e)',
          ].join('\n');
        const open = await code.run({ language: 'python', code: probe([paths[0]!, paths[2]!]) }, plain);
        expect(open.result.match(/connected: host service/g)).toHaveLength(2);
        const boxed = await code.run({ language: 'python', code: probe([paths[0]!, paths[1]!]) }, ctx);
        expect(boxed.result).toContain('ran in the sandbox: exit code 0');
        expect(boxed.result).not.toContain('connected:');
        expect(boxed.result.match(/refused: \[Errno 13\] Permission denied/g)).toHaveLength(2);
        counts.sockets = '2/2 unreachable (reachable without the sandbox)';
      } finally {
        for (const s of servers) await new Promise<void>((resolve) => s.close(() => resolve()));
        rmSync(hostDir, { recursive: true, force: true });
      }
    },
  );
});

/** Whether a process is gone (or a zombie nobody reaps, which runs nothing). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

const waitGone = (pid: number, ms: number) => until(() => gone(pid), { timeoutMs: ms, intervalMs: 0 });

describe('code that escapes its process group with setsid (no sandbox)', () => {
  // The script waits until its child has its own session, so the escape has happened.
  const escape = (after: string) =>
    [
      'setsid sleep 1000 < /dev/null &',
      'pid=$!',
      // (bounded, and not past the process's end: a loop on a vanished pid would spin until the test's timeout)
      'for i in $(seq 1 5000); do [ -e /proc/$pid ] || break; [ "$(cut -d" " -f6 /proc/$pid/stat 2>/dev/null)" = "$pid" ] && break; done',
      'echo "escaped $pid"',
      after,
    ].join('\n');

  it.each([
    ['when the script ends', '', {}],
    ['at the timeout', 'sleep 1000', { timeout_ms: scaled(5000) }], // time for the escape on a loaded machine
  ])('is killed %s', async (_label, after, settings) => {
    const r = await code.run({ language: 'bash', code: escape(after) }, execContext({ settings: { language: 'bash', ...settings } }));
    const pid = Number(/escaped (\d+)/.exec(r.result)?.[1]);
    expect(pid).toBeGreaterThan(0);
    counts.setsid++;
    const dead = await waitGone(pid, 10_000);
    if (!dead) process.kill(pid, 'SIGKILL'); // clean up what the test started
    expect(dead).toBe(true);
    counts.setsidKilled++;
    if (after) expect(r.result).toContain('timeout');
  });
});

/** Whether this machine lets us mount a small tmpfs in a private mount namespace (as root or in a user namespace). */
function tinyDiskSupport(): { ok: true } | { ok: false; reason: string } {
  const probe = mkdtempSync(join(tmpdir(), 'sop-tmpfs-probe-'));
  try {
    const r = spawnSync('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs -o size=64k tmpfs "${probe}"`], {
      encoding: 'utf8',
      timeout: scaled(10_000),
    });
    if (r.error) return { ok: false, reason: `unshare is not available (${(r.error as NodeJS.ErrnoException).code})` };
    if (r.status !== 0)
      return { ok: false, reason: `cannot mount a tmpfs in a private namespace here: ${(r.stderr || `exit ${r.status}`).trim()}` };
    return { ok: true };
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}
const tinyDisk = tinyDiskSupport();
const tinyDiskMissing = tinyDisk.ok ? '' : tinyDisk.reason;
if (tinyDiskMissing) console.warn(`hostile-files: disk-full test skipped: ${tinyDiskMissing}`);

describe('a full disk', () => {
  it.skipIf(!tinyDisk.ok)(
    `stops the run as interrupted, names the file, and the run resumes identically${tinyDiskMissing ? ` (skipped: ${tinyDiskMissing})` : ''}`,
    async () => {
      // The run writes to a 128 KiB tmpfs (its files need about 140 KiB, so before the fix it too
      // ended with a bare "ENOSPC ... write" and `sop runs` said killed): the disk fills up part
      // way. Its folder is copied out of the namespace before that goes away.
      const mnt = join(base, 'tiny');
      const copy = join(base, 'tiny-copy');
      mkdirSync(mnt);
      mkdirSync(copy);
      const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
      const script = [
        `mount -t tmpfs -o size=128k tmpfs ${q(mnt)} || exit 99`,
        `${q(process.execPath)} ${q(CLI)} ${TOWN.map(q).join(' ')} --out ${q(join(mnt, 'runs'))}`,
        'echo "exit=$?"',
        `${q(process.execPath)} ${q(CLI)} runs --json --out ${q(join(mnt, 'runs'))}`,
        `cp -a ${q(join(mnt, 'runs'))}/. ${q(copy)}/`,
      ].join('\n');
      const r = await run('unshare', ['-rm', 'sh', '-c', script], { timeoutMs: 60_000 });
      expect(r.timedOut).toBe(false);
      expect(r.stdout).toContain('exit=75'); // stopped for the disk: resumable
      expect(r.stderr).toMatch(
        /disk full: cannot write \S+\/(journal\.jsonl|transcript\.md|transcript\.jsonl) \(ENOSPC\); nothing written before it was lost/,
      );
      expect(r.stderr).toMatch(/Resume with: sop resume \S+/);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      const listed = JSON.parse(r.stdout.split('\n').find((l) => l.startsWith('{'))!) as { status: string };
      expect(listed.status).toBe('interrupted');
      const dir = onlyRun(copy);
      expect(existsSync(join(dir, '.journal-reserve'))).toBe(false);
      const again = await sop(['resume', dir, '--quiet'], { timeoutMs: 60_000 });
      expect(again.code, again.stderr).toBe(0);
      expect(transcript(dir)).toBe(transcript(reference));
      counts.enospc = 'run interrupted (recorded as such), resumed to the same transcript';
    },
    180_000,
  );
});

describe('a damaged journal', () => {
  const damagedCopy = (name: string, edit: (lines: string[]) => number): { dir: string; line: number } => {
    const dir = join(base, 'damaged', name);
    cpSync(reference, dir, { recursive: true });
    const file = join(dir, 'journal.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    const line = edit(lines);
    writeFileSync(file, lines.join('\n'));
    return { dir, line };
  };
  const indexOfCheckpoint = (lines: string[], turn: number) => lines.findIndex((l) => l.startsWith(`{"type":"checkpoint","turn":${turn},`));

  it('continues from the last good checkpoint before a damaged line (show, fork --at 3, resume), with a warning naming it', async () => {
    counts.damaged++;
    const { dir, line } = damagedCopy('middle', (lines) => {
      const i = indexOfCheckpoint(lines, 6) - 2; // a line of turn 6
      lines[i] = `{garbage${lines[i]!.slice(1)}`;
      return i + 1;
    });
    const warning = new RegExp(`journal\\.jsonl:${line}: damaged line .*; using the last good checkpoint before it \\(turn 5\\)`);
    const shown = await sop(['show', dir]);
    expect(shown.code).toBe(0);
    expect(shown.stderr).toMatch(warning);
    expect(shown.stdout.length).toBeGreaterThan(0);
    const forked = await sop(['fork', dir, '--at', '3', '--quiet', '--out', join(base, 'damaged', 'forks')], { timeoutMs: 60_000 });
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stderr).toMatch(warning);
    expect(transcript(onlyRun(join(base, 'damaged', 'forks')))).toBe(transcript(reference));
    const resumed = await sop(['resume', dir, '--quiet'], { timeoutMs: 60_000 });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(warning);
    expect(resumed.stderr).toContain('from turn 5');
    expect(transcript(dir)).toBe(transcript(reference));
    // The resume voided the damaged attempt: no warning any more.
    const after = await sop(['show', dir]);
    expect(after.stderr).not.toContain('damaged');
    counts.damagedContinued++;
  }, 180_000);

  it('rejects a hand-edited checkpoint whose turn does not match the journal', async () => {
    for (const [name, edit] of [
      [
        'event turn',
        (e: { turn: number; snapshot: { position: { turn: number } } }) => {
          e.turn = 9999917;
        },
      ],
      [
        'snapshot turn',
        (e: { turn: number; snapshot: { position: { turn: number } } }) => {
          e.snapshot.position.turn = 9999917;
        },
      ],
    ] as const) {
      counts.damaged++;
      const { dir, line } = damagedCopy(name.replace(' ', '-'), (lines) => {
        const i = indexOfCheckpoint(lines, 20);
        const e = JSON.parse(lines[i]!);
        edit(e);
        lines[i] = JSON.stringify(e);
        return i + 1;
      });
      const runs = await sop(['runs', '--json', '--out', join(base, 'damaged')]);
      const listed = runs.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { dir: string; turns: number; status: string })
        .find((x) => x.dir === dir)!;
      expect(listed.turns).toBe(19);
      const resumed = await sop(['resume', dir, '--quiet'], { timeoutMs: 60_000 });
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(resumed.stderr).toMatch(
        new RegExp(`journal\\.jsonl:${line}: checkpoint .*9999917.*; using the last good checkpoint before it \\(turn 19\\)`),
      );
      expect(transcript(dir)).toBe(transcript(reference));
      counts.damagedContinued++;
    }
  }, 180_000);
});
