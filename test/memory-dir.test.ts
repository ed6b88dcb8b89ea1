// --memory-dir: the memory files and the code library last across runs. The Jarvis example run
// twice with one memory folder exits 0 both times and leaves its function in the library exactly
// once and a logs file with both runs' entries under their headers; the folder is locked while a
// run uses it (a stale lock is taken over, a run refused for a held one leaves no run folder);
// saving a function again replaces it.
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mergeIntoModule, mergeLibraryEntries } from '../src/features/actions/executors/library-merge.js';
import { lockMemoryDir, MEMORY_LOCK, MemoryDirError } from '../src/core/workspace/memory-dir.js';
import { tempDir } from './helpers/executor-context.js';
import { codeSop } from './helpers/code-sop.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { runSop } from '../src/api/run-sop.js';
import type { Sop } from '../src/format/sop/types.js';
import { spawnCli, spawnCliAsync } from './helpers/cli.js';
import { execAsync } from './helpers/exec.js';

const ROOT = join(import.meta.dirname, '..');
const GOAL =
  'Compute summary statistics (count, mean, min, max) of the numeric columns of examples/jarvis/sales.csv and write them to report.md.';

function jarvisArgs(memoryDir: string, out: string): string[] {
  return [
    'run',
    'sops/jarvis.sop.json',
    '--goal',
    GOAL,
    '--llm',
    'replay:examples/jarvis/jarvis.cassette.json',
    '--answers',
    'examples/jarvis/answers.txt',
    '--auto-run',
    '--memory-dir',
    memoryDir,
    '--out',
    out,
  ];
}

function jarvis(memoryDir: string, out: string) {
  return spawnCliAsync(
    [
      'run',
      'sops/jarvis.sop.json',
      '--goal',
      GOAL,
      '--llm',
      'replay:examples/jarvis/jarvis.cassette.json',
      '--answers',
      'examples/jarvis/answers.txt',
      '--auto-run',
      '--memory-dir',
      memoryDir,
      '--out',
      out,
      '--quiet',
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
}

describe('--memory-dir with the Jarvis example', () => {
  it('twice in a row: exit 0, the function in the library once, logs from both runs', async () => {
    const base = tempDir('sop-memdir-');
    const M = join(base, 'M');
    const first = await jarvis(M, join(base, 'runs'));
    expect(first.status, first.stderr).toBe(0);
    const second = await jarvis(M, join(base, 'runs'));
    expect(second.status, second.stderr).toBe(0);

    const library = readFileSync(join(M, 'library.py'), 'utf8');
    expect(library.match(/^def summarize_csv\(/gm)).toHaveLength(1);
    const listed = readFileSync(join(M, 'code_library.md'), 'utf8');
    expect(listed.match(/^def summarize_csv\(/gm)).toHaveLength(1);

    const logs = readFileSync(join(M, 'logs.md'), 'utf8');
    const headers = logs.match(/^## run \S+, \S+: Compute summary statistics/gm) ?? [];
    expect(headers).toHaveLength(2);
    // each run's seven lines under its own header
    const parts = logs.split(/^## run .*$/m).slice(1);
    for (const part of parts) expect(part.trim().split('\n')).toHaveLength(7);
    expect(existsSync(join(M, MEMORY_LOCK))).toBe(false); // released

    // the second run saw what the first saved: its Jarvis prompts held the first run's logs
    const runs = second.stderr.match(/Run folder: (\S+)/)![1]!;
    const journal = readFileSync(join(runs, 'journal.jsonl'), 'utf8');
    expect(journal).toContain('def summarize_csv(path: str) -> dict:'); // the code library in the prompts
    // the planner too: its prompt holds the library's function and the first run's logs
    const shown = await spawnCliAsync(['show', runs, '--prompts'], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
    expect(shown.status, shown.stderr).toBe(0);
    const planner = shown.stdout.split(/^=== /m).find((p) => p.startsWith('turn 1: agent call in state "plan"'))!;
    expect(planner).toContain('Functions in the code library (memory file code_library), which steps can reuse:\ndef summarize_csv(');
    expect(planner).toMatch(/What was done before \(the last lines of memory file logs\):\n## run \S+, \S+: Compute summary/);
    expect(planner).toContain('- [turn 2] Coder: ');
    // the run folder keeps the sub-flows' memory; the top-level files are only in M
    expect(existsSync(join(runs, 'memory', 'Coder-1', 'plan.md'))).toBe(true);
    expect(existsSync(join(runs, 'memory', 'logs.md'))).toBe(false);
    // the workspace got the library at the start, and the Coder's code imported it
    expect(readFileSync(join(runs, 'workspace', 'report.md'), 'utf8')).toContain('| revenue | 12 | 43.27 | 28.5 | 80 |');
  }, 240_000);

  it('a killed run leaves a stale lock; sop resume takes it over, keeps the folder and adds a resumed header', async () => {
    const base = tempDir('sop-memdir-kill-');
    const M = join(base, 'M');
    const out = join(base, 'runs');
    // killed once the Coder has saved its function (the save_code result is in the journal)
    await new Promise<void>((done, fail) => {
      const child = spawnCli([...jarvisArgs(M, out), '--json'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'ignore'] });
      let seen = '';
      child.stdout.on('data', (b: Buffer) => {
        seen += b.toString();
        if (/"command":"save_code"[^\n]*"type":"executor_result"|"type":"executor_result"[^\n]*"command":"save_code"/.test(seen))
          child.kill('SIGKILL');
      });
      child.on('error', fail);
      child.on('close', () => done());
    });
    expect(existsSync(join(M, MEMORY_LOCK))).toBe(true); // stale: its process is gone
    const dir = join(out, readdirSync(out)[0]!);
    const resumed = await spawnCliAsync(['resume', dir, '--quiet'], { cwd: ROOT, encoding: 'utf8', timeout: 120_000 });
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(existsSync(join(M, MEMORY_LOCK))).toBe(false);
    const logs = readFileSync(join(M, 'logs.md'), 'utf8');
    expect(logs).toMatch(/^## run \S+ \(resumed from turn \d+\), \S+$/m);
    expect(readFileSync(join(M, 'library.py'), 'utf8').match(/^def summarize_csv\(/gm)).toHaveLength(1);
  }, 240_000);

  it('refuses a folder another live run holds, with one clear line', async () => {
    const M = tempDir('sop-memdir-held-');
    // a live process (this one's parent shell is alive: use our own parent pid)
    writeFileSync(join(M, MEMORY_LOCK), JSON.stringify({ pid: process.ppid, host: hostname(), time: 't', run: 'other-run' }));
    const r = await jarvis(M, join(M, 'runs'));
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^error: memory folder .* is in use by run other-run, process \d+ .*delete .*memory\.lock/);
    // refused before it started: no run folder left behind (sop runs would list it as damaged)
    expect(existsSync(join(M, 'runs')) ? readdirSync(join(M, 'runs')) : []).toEqual([]);
  }, 60_000);
});

describe('the SOP key memory_dir', () => {
  it('keeps the memory files in that folder, with a header per run; a second run reads what the first wrote', async () => {
    const base = tempDir('sop-memdir-key-');
    const M = join(base, 'kept');
    const sop = { ...codeSop('keeper'), memory_dir: M, memory: { notes: '' } } as Sop;
    sop.states.work!.commands!.note = { executor: 'memory', settings: { op: 'append', file: 'notes' } };
    sop.states.work!.components!.Coder = { task: 'Take a note, then finish.', system: 'Notes so far: {{memory.notes}}' };
    const replies = (text: string) => [
      JSON.stringify({ command: 'note', command_args: { content: `${text}\n` } }),
      JSON.stringify({ command: 'finish', command_args: { result: 'done' } }),
    ];
    for (const text of ['first run', 'second run']) {
      const llm = new ScriptedLlm({ agent: replies(text) });
      const r = await runSop(sop, { llm, out: join(base, 'runs'), inputs: { goal: text } }).result;
      expect(r.status).toBe('finished');
      if (text === 'second run') expect(llm.calls[0]!.system).toContain('Notes so far: first run');
    }
    expect(readFileSync(join(M, 'notes.md'), 'utf8')).toBe('first run\nsecond run\n');
    const logs = readFileSync(join(M, 'logs.md'), 'utf8');
    expect(logs.match(/^## run \S+, \S+: (first|second) run$/gm)).toHaveLength(2);
    expect(logs.match(/^- \[turn 1\] note: /gm)).toHaveLength(2);
  }, 60_000);
});

describe('a new goal with the same memory folder', () => {
  const scientist = (cwd: string, goal: string) =>
    spawnCliAsync(['run', 'scientist', '--llm', 'mock', '--goal', goal, '--memory-dir', 'M', '--max-turns', '1', '--out', 'runs'], {
      cwd,
      encoding: 'utf8',
      timeout: 60_000,
    });

  it('the scientist: goal B replaces mission A, which goes to the logs with one notice; the same goal leaves it', async () => {
    const cwd = tempDir('sop-mission-');
    const M = join(cwd, 'M');
    const a = await scientist(cwd, 'Why is the sky blue?');
    expect(a.status, a.stderr).toBe(0);
    expect(readFileSync(join(M, 'mission.md'), 'utf8')).toBe('Why is the sky blue?');
    expect(a.stderr).not.toMatch(/memory file "mission"/);

    const b = await scientist(cwd, 'Why is grass green?');
    expect(b.status, b.stderr).toBe(0);
    expect(readFileSync(join(M, 'mission.md'), 'utf8')).toBe('Why is grass green?');
    const notices = b.stderr.split('\n').filter((l) => l.includes('memory file "mission"'));
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatch(
      /^warning: new inputs: memory file "mission" \(.*mission\.md\) now holds this run's mission; the previous one was appended to .*logs\.md$/,
    );
    const logs = readFileSync(join(M, 'logs.md'), 'utf8');
    // under the second run's header: when and by which run it was replaced, then the old mission
    expect(logs).toMatch(
      /^## run (\S+), \S+: Why is grass green\?\n### mission replaced by run \1, \d{4}-\d\d-\d\dT[\d:.]+Z: new inputs gave it new content; the previous mission was:\n\nWhy is the sky blue\?\n/m,
    );
    // the second run's planner read the new mission
    const run = b.stderr.match(/Run folder: (\S+)/)![1]!;
    expect(readFileSync(join(run, 'journal.jsonl'), 'utf8')).toContain('The mission (memory file mission): Why is grass green?');

    const again = await scientist(cwd, 'Why is grass green?');
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).not.toMatch(/memory file "mission"/);
    expect(readFileSync(join(M, 'mission.md'), 'utf8')).toBe('Why is grass green?');
    expect(readFileSync(join(M, 'logs.md'), 'utf8').match(/^### mission replaced/gm)).toHaveLength(1);
  }, 120_000);

  it('a file made from the goal keeps what a run wrote while the goal stays, and starts again from a new goal', async () => {
    const base = tempDir('sop-memdir-follow-');
    const M = join(base, 'kept');
    const sop = { ...codeSop('follower'), memory_dir: M, memory: { plan: 'Plan for {{goal}}:\n' } } as Sop;
    sop.states.work!.commands!.note = { executor: 'memory', settings: { op: 'append', file: 'plan' } };
    sop.states.work!.components!.Coder = { task: 'Add a step, then finish.', system: 'The plan: {{memory.plan}}' };
    const run = async (goal: string, step: string) => {
      const llm = new ScriptedLlm({
        agent: [
          JSON.stringify({ command: 'note', command_args: { content: `- ${step}\n` } }),
          JSON.stringify({ command: 'finish', command_args: { result: 'done' } }),
        ],
      });
      const warnings: string[] = [];
      const r = await runSop(sop, {
        llm,
        out: join(base, 'runs'),
        inputs: { goal },
        listeners: [(e) => void (e.type === 'warning' && warnings.push(e.message))],
      }).result;
      expect(r.status).toBe('finished');
      return { system: llm.calls[0]!.system, warnings };
    };
    await run('bees', 'count them');
    const same = await run('bees', 'feed them');
    expect(same.system).toContain('The plan: Plan for bees:\n- count them');
    expect(same.warnings).toEqual([]);
    expect(readFileSync(join(M, 'plan.md'), 'utf8')).toBe('Plan for bees:\n- count them\n- feed them\n');

    const other = await run('ants', 'find the nest');
    expect(other.system).toContain('The plan: Plan for ants:\n');
    expect(other.system).not.toContain('bees');
    expect(other.warnings.filter((w) => w.includes('memory file "plan"'))).toHaveLength(1);
    expect(readFileSync(join(M, 'plan.md'), 'utf8')).toBe('Plan for ants:\n- find the nest\n');
    expect(readFileSync(join(M, 'logs.md'), 'utf8')).toContain('the previous plan was:\n\nPlan for bees:\n- count them\n- feed them\n');
  }, 60_000);
});

describe('the memory folder lock', () => {
  it('takes over a stale lock (its process is gone) and refuses a second run in the same process', async () => {
    const M = tempDir('sop-memdir-lock-');
    const dead = await execAsync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(M, MEMORY_LOCK), JSON.stringify({ pid: Number(dead.stdout), host: hostname(), time: 't' }));
    const release = lockMemoryDir(M, 'run-a');
    expect(JSON.parse(readFileSync(join(M, MEMORY_LOCK), 'utf8')).run).toBe('run-a');
    expect(() => lockMemoryDir(M, 'run-b')).toThrow(MemoryDirError);
    release();
    expect(existsSync(join(M, MEMORY_LOCK))).toBe(false);
    lockMemoryDir(M, 'run-c')();
  });
});

describe('saving a function that is already in the library', () => {
  const f1 = 'def f(x: int) -> int:\n    """Double."""\n    return 2 * x\n';
  const f2 = 'def f(x: int) -> int:\n    """Triple."""\n    return 3 * x\n';
  const g = '@staticmethod\ndef g() -> None:\n    pass\n';

  it('Python: replaces the earlier definition (decorators included) and keeps the others', () => {
    const once = mergeIntoModule('', f1, ['f'], 'python');
    expect(once).toBe(f1);
    const twice = mergeIntoModule(mergeIntoModule(once, g, ['g'], 'python'), f2, ['f'], 'python');
    expect(twice.match(/^def f\(/gm)).toHaveLength(1);
    expect(twice).toContain('Triple');
    expect(twice).not.toContain('Double');
    expect(twice).toContain('@staticmethod\ndef g()');
    expect(mergeIntoModule(twice, g, ['g'], 'python').match(/^@staticmethod/gm)).toHaveLength(1);
  });

  it('JavaScript: replaces the function and its export line', () => {
    const a = '/** Double. */\nfunction f(x) {\n  return 2 * x;\n}\nmodule.exports.f = f;\n';
    const b = 'function f(x) {\n  return 3 * x;\n}\nmodule.exports.f = f;\n';
    const merged = mergeIntoModule(a, b, ['f'], 'javascript');
    expect(merged.match(/^function f\(/gm)).toHaveLength(1);
    expect(merged.match(/^module\.exports\.f = f;/gm)).toHaveLength(1);
    expect(merged).not.toContain('Double');
  });

  it('the code_library memory file lists the function once', () => {
    const e1 = 'def f(x: int) -> int:\n    """Double."""\n';
    const e2 = 'def f(x: int) -> int:\n    """Triple."""\n';
    const other = 'def h() -> None:\n';
    const text = mergeLibraryEntries(mergeLibraryEntries(e1, other, ['h']), e2, ['f']);
    expect(text.match(/^def f\(/gm)).toHaveLength(1);
    expect(text).toContain('Triple');
    expect(text).toContain('def h() -> None:');
  });
});
