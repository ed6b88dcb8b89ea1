// The stateful interpreter of the code executor: a Python and a JavaScript session per run, in
// which what one run_code defines is there for the next (real interpreters, real processes); a
// sub-flow shares its caller's sessions unless its command says "session": "own"; the sandbox
// holds; timeouts and caps as for one-off code; a resumed run starts empty and says so.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CodeSession } from '../src/features/actions/executors/session/code-session.js';
import { sandboxSupport } from '../src/shared/sandbox/sandbox.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { RunFolder } from '../src/features/journal/run-folder.js';
import { resumeCommand } from '../src/apps/cli/resume-command.js';
import type { Sop } from '../src/format/sop/types.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { tempDir } from './helpers/executor-context.js';
import { vi } from 'vitest';

const sessions: CodeSession[] = [];
function session(language: 'python' | 'javascript', sandbox = false): CodeSession {
  const s = new CodeSession({ language, cwd: tempDir('sop-session-'), sandbox });
  sessions.push(s);
  return s;
}
afterAll(() => {
  for (const s of sessions) s.close();
});

const cmd = (command: string, args: Record<string, unknown>) => JSON.stringify({ command, command_args: args });

/** One agent with run_code in both languages (and a sub-flow command when given), then finish. */
function coderSop(name: string, extra: Sop['states'][string]['commands'] = {}): Sop {
  return {
    name,
    environment: { summary: { enabled: false } },
    agents: { Sam: { roles: { work: 'Coder' } } },
    root: 'work',
    states: {
      work: {
        roles: ['Coder'],
        components: { Coder: { task: 'Run code, then finish.' } },
        commands: {
          run_code: { executor: 'code', settings: { languages: ['python', 'javascript'] } },
          finish: { executor: 'finish' },
          ...extra,
        },
        next_states: { '1': 'end' },
      },
      end: { final: true },
    },
  };
}

async function runSop(sop: Sop, replies: string[], o: { dir?: string; file?: string } = {}) {
  const dir = o.dir ?? tempDir('sop-session-run-');
  const llm = new ScriptedLlm({ agent: replies });
  const events: RunEvent[] = [];
  const run = new Run({
    sop,
    file: o.file ?? join(dir, `${sop.name}.sop.json`),
    llm,
    stream: false,
    maxTurns: 20,
    listeners: [(e) => events.push(e)],
    actions: { workspace: join(dir, 'workspace'), autoRun: true, launchDir: dir },
  });
  const result = await run.run();
  const flat = (e: RunEvent): RunEvent => (e.type === 'subflow' ? flat(e.event) : e);
  const codeResults = events
    .map(flat)
    .flatMap((e) => (e.type === 'executor_result' && e.executor === 'code' ? [{ ok: e.ok, result: e.result }] : []));
  return { result, codeResults, llm, dir };
}

describe('a run keeps one session per language', () => {
  it('Python: a variable set by one run_code is read by the next', async () => {
    const { result, codeResults } = await runSop(coderSop('py-state'), [
      cmd('run_code', { language: 'python', code: 'x = 42\nprint("set x")' }),
      cmd('run_code', { language: 'python', code: 'print(x + 1)' }),
      cmd('finish', { result: 'done' }),
    ]);
    expect(result.status).toBe('finished');
    expect(codeResults.map((r) => r.ok)).toEqual([true, true]);
    expect(codeResults[1]!.result).toContain("in the run's python session (cell 2)");
    expect(codeResults[1]!.result).toContain('stdout:\n43');
  }, 30_000);

  it('JavaScript: a variable set by one run_code is read by the next', async () => {
    const { result, codeResults } = await runSop(coderSop('js-state'), [
      cmd('run_code', { language: 'javascript', code: 'const rows = [1, 2, 3];\nconsole.log("loaded", rows.length)' }),
      cmd('run_code', { language: 'javascript', code: 'console.log(rows.reduce((a, b) => a + b, 0))' }),
      cmd('finish', { result: 'done' }),
    ]);
    expect(result.status).toBe('finished');
    expect(codeResults.map((r) => r.ok)).toEqual([true, true]);
    expect(codeResults[1]!.result).toContain("in the run's javascript session (cell 2)");
    expect(codeResults[1]!.result).toContain('stdout:\n6');
  }, 30_000);

  it('the languages are apart, and session: false runs each piece alone', async () => {
    const sop = coderSop('apart');
    sop.states.work!.commands!.run_alone = { executor: 'code', settings: { language: 'python', session: false } };
    const { codeResults } = await runSop(sop, [
      cmd('run_code', { language: 'python', code: 'x = 1' }),
      cmd('run_code', { language: 'javascript', code: 'typeof x' }),
      cmd('run_alone', { code: 'print(x)' }),
      cmd('finish', { result: 'done' }),
    ]);
    expect(codeResults[1]!.result).toContain("stdout:\n'undefined'");
    // run_alone is a one-off process: x is not there
    const alone = codeResults[2]!;
    expect(alone.ok).toBe(false);
    expect(alone.result).toMatch(/^The python code ran: exit code 1\./);
    expect(alone.result).toContain("NameError: name 'x' is not defined");
  }, 30_000);

  it('reports the exception, the files written, and keeps the session after an error', async () => {
    const { codeResults } = await runSop(coderSop('errors'), [
      cmd('run_code', { language: 'python', code: 'data = {"a": 1}\nopen("out.txt", "w").write("hi")\n1 / 0' }),
      cmd('run_code', { language: 'python', code: 'print(data["a"])' }),
      cmd('finish', { result: 'done' }),
    ]);
    const failed = codeResults[0]!;
    expect(failed.ok).toBe(false);
    expect(failed.result).toContain('exception:\nTraceback (most recent call last):\n  File "<cell 1>", line 3, in <module>');
    expect(failed.result).toContain('ZeroDivisionError: division by zero');
    expect(failed.result).not.toContain('python_session.py'); // the driver's own frames are left out
    expect(failed.result).toContain('files written: out.txt');
    expect(codeResults[1]!.ok).toBe(true);
    expect(codeResults[1]!.result).toContain('stdout:\n1');
  }, 30_000);
});

describe('sub-flows', () => {
  function withSubflow(dir: string, session?: 'own'): Sop {
    const child = coderSop('child');
    writeFileSync(join(dir, 'child.sop.json'), JSON.stringify(child));
    return coderSop('parent', {
      child: {
        executor: 'sop',
        settings: { file: 'child.sop.json', ...(session ? { session } : {}) },
      },
    });
  }
  const replies = [
    cmd('run_code', { language: 'python', code: 'shared = "from the caller"' }),
    cmd('child', {}),
    cmd('run_code', { language: 'python', code: 'print(shared)' }), // the child's turn
    cmd('finish', { result: 'child done' }),
    cmd('finish', { result: 'parent done' }),
  ];

  it("share their caller's session by default", async () => {
    const dir = tempDir('sop-session-sub-');
    const { result, codeResults } = await runSop(withSubflow(dir), replies, { dir });
    expect(result.status).toBe('finished');
    expect(codeResults[1]!.ok).toBe(true);
    expect(codeResults[1]!.result).toContain('stdout:\nfrom the caller');
  }, 30_000);

  it('get an empty session of their own with "session": "own"', async () => {
    const dir = tempDir('sop-session-own-');
    const { codeResults } = await runSop(withSubflow(dir, 'own'), replies, { dir });
    expect(codeResults[1]!.ok).toBe(false);
    expect(codeResults[1]!.result).toContain("NameError: name 'shared' is not defined");
    expect(codeResults[1]!.result).toContain('(cell 1)');
  }, 30_000);
});

describe('a resumed run', () => {
  it('starts with an empty session and tells the agent plainly, without running earlier code again', async () => {
    const dir = tempDir('sop-session-resume-');
    const file = join(dir, 'resume.sop.json');
    const sop = coderSop('resume');
    writeFileSync(file, JSON.stringify(sop));
    const cassette = join(dir, 'cassette.json');
    const replies = [
      cmd('run_code', { language: 'python', code: 'x = 42\nopen("cells.txt", "a").write("cell ran\\n")' }),
      cmd('run_code', { language: 'python', code: 'print(x)' }),
      cmd('finish', { result: 'done' }),
    ];
    writeFileSync(
      cassette,
      JSON.stringify({
        version: 1,
        source: 'hand-written',
        interactions: replies.map((response) => ({ purpose: 'agent', response })),
      }),
    );
    const { ReplayProvider } = await import('../src/core/llm/cassette.js');
    const folder = new RunFolder(join(dir, 'runs'), 'crash', undefined);
    // crash at the boundary after the first run_code (its result is journaled)
    const crash = (e: RunEvent) => {
      if (e.type === 'checkpoint' && e.turn === 1) throw Object.assign(new Error('simulated crash'), { resumable: true });
    };
    const first = await new Run({
      sop,
      file,
      llm: new ReplayProvider(cassette),
      stream: false,
      listeners: [folder.onEvent, crash],
      launch: { llm: `replay:${cassette}`, auto_run: true },
      actions: { runDir: folder.dir, workspace: folder.path('workspace'), autoRun: true, launchDir: dir },
    }).run();
    folder.close();
    expect(first.status).toBe('interrupted');
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await resumeCommand({ dir: folder.dir, json: false, quiet: true })).toBe(0);
    } finally {
      spy.mockRestore();
    }
    const journal = readFileSync(join(folder.dir, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RunEvent);
    const results = journal.flatMap((e) => (e.type === 'executor_result' && e.command === 'run_code' ? [e.result] : []));
    const last = results[results.length - 1]!;
    expect(last).toContain(
      'Note: this run was resumed, and the python session started empty: the variables, imports and functions that code defined before the resume are gone (that code is not run again).',
    );
    expect(last).toContain("NameError: name 'x' is not defined");
    // the first cell ran once, not again on resume
    expect(readFileSync(join(folder.dir, 'workspace', 'cells.txt'), 'utf8')).toBe('cell ran\n');
  }, 60_000);
});

describe('CodeSession', () => {
  it('kills the session at the timeout; the next cell starts an empty one', async () => {
    const s = session('python');
    await s.run('x = 1');
    const slow = await s.run('import time\ntime.sleep(30)', { timeoutMs: 500 });
    expect(slow.timedOut).toBe(true);
    expect(slow.sessionEnded).toBe(true);
    const next = await s.run('print(x)');
    expect(next.cell).toBe(1);
    expect(next.error).toContain("NameError: name 'x' is not defined");
  }, 30_000);

  it('caps each output stream of a cell and counts what was cut', async () => {
    const s = session('python');
    const o = await s.run('print("a" * 5000)\nimport sys\n_ = sys.stderr.write("b" * 3000)', { maxOutput: 1000 });
    expect(o.stdout).toHaveLength(1000);
    expect(o.dropped.stdout).toBe(4001);
    expect(o.stderr).toHaveLength(1000);
    expect(o.dropped.stderr).toBe(2000);
    expect((await s.run('print("next")')).stdout).toBe('next\n'); // the next cell starts clean
  }, 30_000);

  it('sys.exit and process.exit end the cell with their code, not the session', async () => {
    const py = session('python');
    await py.run('kept = "yes"');
    expect((await py.run('import sys\nsys.exit(3)')).exitCode).toBe(3);
    expect((await py.run('print(kept)')).stdout).toBe('yes\n');
    const js = session('javascript');
    await js.run('var kept = "yes"');
    expect((await js.run('process.exit(4)')).exitCode).toBe(4);
    expect((await js.run('console.log(kept)')).stdout).toBe('yes\n');
  }, 30_000);

  it('JavaScript: a later cell may declare a top-level const, let or class again', async () => {
    const js = session('javascript');
    expect((await js.run('const g = 9.81;\nlet n = 1;\nclass P {}')).error).toBeUndefined();
    const again = await js.run('const g = 10;\nlet n = 2;\nclass P { k() { return g } }\nconsole.log(new P().k(), n)');
    expect(again.error).toBeUndefined();
    expect(again.stdout).toBe('10 2\n');
    // only the top level: a block's declarations stay block-scoped
    expect((await js.run('{ const inner = 1 }\ntypeof inner')).stdout).toBe("'undefined'\n");
  }, 30_000);

  it('JavaScript: a cell may await at the top level, and what it declares stays for later cells', async () => {
    const js = session('javascript');
    const first = await js.run('const r = await new Promise((res) => setTimeout(() => res(41), 5));\nr + 1');
    expect(first.error).toBeUndefined();
    expect(first.stdout).toBe('42\n'); // the last expression is printed, as in a plain cell
    // var, let, const, class, function and destructuring declared next to an await persist
    const decl = await js.run(
      [
        'const { a, b: [c] } = await Promise.resolve({ a: 1, b: [2] });',
        'let k = 3;',
        'var v = 4;',
        'class Q { sum() { return a + c + k + v } }',
        'function f() { return 7 }',
        'await null',
      ].join('\n'),
    );
    expect(decl.error).toBeUndefined();
    expect((await js.run('console.log(r, a, c, k, v, new Q().sum(), f())')).stdout).toBe('41 1 2 3 4 10 7\n');
    // an assignment to an undeclared name is a global, as in a plain cell
    expect((await js.run('await new Promise((res) => setTimeout(res, 1)); x = 1')).stdout).toBe('1\n');
    expect((await js.run('x + 1')).stdout).toBe('2\n');
    // the names may be declared again, by a plain cell and by another await cell
    const again = await js.run('const r = "plain";\nlet k = 30;\nclass Q {}\nconsole.log(r, k)');
    expect(again.error).toBeUndefined();
    expect(again.stdout).toBe('plain 30\n');
    const awaitAgain = await js.run('const r = await Promise.resolve("awaited");\nlet k = await 300;\n[r, k]');
    expect(awaitAgain.error).toBeUndefined();
    expect(awaitAgain.stdout).toBe("[ 'awaited', 300 ]\n");
    // a plain cell stays on the plain path: `await` in a string or an async function only
    expect((await js.run('"await"')).stdout).toBe("'await'\n");
    expect((await js.run('(async () => { await null; return "inner" })()')).stdout).toBe("'inner'\n");
  }, 30_000);

  it('JavaScript: an await cell that throws or rejects reports it named by the cell, and the session goes on', async () => {
    const js = session('javascript');
    await js.run('var before = "kept"');
    const thrown = await js.run('await null;\nconst made = 2;\nthrow new Error("boom")');
    expect(thrown.error).toBe('Error: boom\n    at cell 2:3:7'); // the cell's frame, no driver or REPL frames
    const rejected = await js.run('await Promise.reject(new Error("nope"))');
    expect(rejected.error).toMatch(/^Error: nope\n {4}at cell 3:/);
    for (const e of [thrown.error, rejected.error]) expect(e).not.toMatch(/js-session|js-await|node:repl|node:domain/);
    expect((await js.run('await Promise.reject("plain")')).error).toBe("Uncaught 'plain'");
    // process.exit after an await ends the cell with its code
    expect((await js.run('await null; process.exit(5)')).exitCode).toBe(5);
    // a syntax error names the real mistake, not the await
    const unfinished = await js.run('await f(');
    expect(unfinished.error).toContain('cell 6:1');
    expect(unfinished.error).toContain('SyntaxError: Unexpected end of input');
    // the session is intact: what came before, and what the failing cell declared before it threw
    expect((await js.run('console.log(before, made)')).stdout).toBe('kept 2\n');
    // a callback an await cell left behind that throws later is printed to stderr when it throws
    // (whole, with the cell that set it or with the next), not taken for the error of a cell
    const setter = await js.run(
      'globalThis.fired = new Promise((res) => setTimeout(() => { res(); throw new Error("late") }, 1)); await null',
    );
    const later = await js.run('await fired; await new Promise((res) => setImmediate(res)); "on"');
    expect([setter.error, later.error]).toEqual([undefined, undefined]);
    expect(later.stdout).toBe("'on'\n");
    expect([setter.stderr, later.stderr].sort()).toEqual([
      '',
      expect.stringMatching(/^Error: late\n {4}at Timeout\._onTimeout \(cell 8:1:\d+\)\n$/),
    ]);
  }, 30_000);

  it('runs JavaScript in a process of its own, not in the engine', async () => {
    const js = session('javascript');
    const o = await js.run('console.log(process.pid)');
    expect(Number(o.stdout.trim())).not.toBe(process.pid);
    expect(Number(o.stdout.trim())).toBe(o.pid);
  }, 30_000);

  it('reloads a library module the cell imported when its file changes', async () => {
    const s = session('python');
    const cwd = (s as unknown as { o: { cwd: string } }).o.cwd;
    writeFileSync(join(cwd, 'library.py'), 'def f():\n    return 1\n');
    expect((await s.run('from library import f\nprint(f())')).stdout).toBe('1\n');
    writeFileSync(join(cwd, 'library.py'), 'def f():\n    return 2\n\n\ndef g():\n    return 3\n');
    expect((await s.run('from library import f, g\nprint(f(), g())')).stdout).toBe('2 3\n');
  }, 30_000);

  const support = sandboxSupport();
  if (!support.ok) console.warn(`code-session: the sandbox cases are skipped: ${support.reason}`);
  it.skipIf(!support.ok)(
    'runs under the sandbox: state kept, no network, the workspace the only writable folder',
    async () => {
      const s = session('python', true);
      await s.run('x = 5');
      const o = await s.run(
        [
          'import socket',
          'print(x)',
          'try:',
          '    socket.create_connection(("1.1.1.1", 80), timeout=2)',
          '    print("network")',
          'except OSError:',
          '    print("no network")',
          'try:',
          '    open("/usr/sop-session-test", "w")',
          '    print("wrote outside")',
          'except OSError:',
          '    print("read-only")',
          '_ = open("inside.txt", "w").write("ok")',
        ].join('\n'),
      );
      expect(o.sandboxed).toBe(true);
      expect(o.stdout).toBe('5\nno network\nread-only\n');
      expect(o.files).toEqual(['inside.txt']);
    },
    30_000,
  );
});
