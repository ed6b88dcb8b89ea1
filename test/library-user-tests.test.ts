// The user's own test suites for the code library (issue 18, item 4): test files in a folder
// (sop run --tests DIR, the tests input, the library executor's tests_dir) run with the function
// at every test and save, and save_code is refused after a failing test unless the user agrees.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Run } from '../src/api/engine/run-with-features.js';
import { executor as library } from '../src/features/actions/executors/library.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { answers, execContext, tempDir } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { spawnCliAsync } from './helpers/cli.js';

const WRONG = 'def double(x: int) -> int:\n    """Twice x."""\n    return x + 1\n';
const RIGHT = 'def double(x: int) -> int:\n    """Twice x."""\n    return 2 * x\n';

function testsFolder(): string {
  const dir = join(tempDir('sop-usertests-'), 'tests');
  mkdirSync(dir);
  writeFileSync(
    join(dir, 'test_double.py'),
    'def test_small():\n    assert double(3) == 6, "double(3) should be 6"\n\ndef test_zero():\n    assert double(0) == 0\n',
  );
  writeFileSync(join(dir, 'notes.txt'), 'not a test file');
  return dir;
}

describe("the user's test files", () => {
  it('run with the function at test_code: a failure names the file and the test', async () => {
    const dir = testsFolder();
    const ctx = execContext({ settings: { op: 'test', tests_dir: dir } });
    const bad = await library.run({ code: WRONG }, ctx);
    expect(bad.ok).toBe(false);
    expect(bad.result).toContain("The tests failed, so the code needs fixing.\nThe user's test file test_double.py: exit code 1.");
    expect(bad.result).toContain('FAILED: test_small');
    expect(bad.result).toContain('AssertionError: double(3) should be 6');
    const good = await library.run({ code: RIGHT }, ctx);
    expect(good.ok).toBe(true);
    expect(good.result).toBe("Checked: double(x: int) -> int.\nThe user's tests passed: test_double.py.");
    expect(good.summary).toBe("checked double; the user's tests passed (1)");
  });

  it('a relative tests_dir is read from the folder sop was started from; a missing one is a clear error', async () => {
    const dir = testsFolder();
    const ctx = execContext({ settings: { op: 'test', tests_dir: 'tests' }, launchDir: resolve(dir, '..') });
    expect((await library.run({ code: RIGHT }, ctx)).ok).toBe(true);
    const missing = execContext({ settings: { op: 'test', tests_dir: 'nowhere' } });
    await expect(library.run({ code: RIGHT }, missing)).rejects.toThrow(/^cannot read the tests folder .*nowhere: ENOENT$/);
  });

  it('refuse save_code while they fail; the user may agree to save anyway', async () => {
    const dir = testsFolder();
    const refused = execContext({ settings: { op: 'save', tests_dir: dir }, human: answers(['no, fix it']) });
    const r = await library.run({ code: WRONG }, refused);
    expect(r.ok).toBe(false);
    expect(r.result).toContain('The user was asked whether to save it anyway and did not agree (their reply: no, fix it).');
    expect(r.summary).toBe("save of double refused: its tests failed (the user's test_double.py)");
    expect(existsSync(join(refused.ws.root, 'library.py'))).toBe(false);

    const agreed = execContext({ settings: { op: 'save', tests_dir: dir }, human: answers(['yes']) });
    const s = await library.run({ code: WRONG }, agreed);
    expect(s.ok).toBe(true);
    expect(s.result).toContain('Its tests failed, and the user chose to save it anyway.');
    expect(readFileSync(join(agreed.ws.root, 'library.py'), 'utf8')).toBe(WRONG);

    // --yes never saves failing code, and nobody to ask means refused (not a crashed run).
    for (const o of [{ yes: true }, {}]) {
      const c = execContext({ settings: { op: 'save', tests_dir: dir }, ...o });
      expect((await library.run({ code: WRONG }, c)).ok).toBe(false);
      expect(existsSync(join(c.ws.root, 'library.py'))).toBe(false);
    }
  });
});

describe('save_code after a failing test', () => {
  it("is refused for the very code the agent's last test failed, until a test of it passes", async () => {
    const ctx = execContext({ settings: { op: 'test' }, memoryFiles: { code_library: '' } });
    const test = await library.run({ code: RIGHT, tests: 'assert double(2) == 5' }, ctx);
    expect(test.ok).toBe(false);
    const save = { ...ctx, settings: { op: 'save' }, note: test.note, human: answers(['no']) };
    const refused = await library.run({ code: RIGHT }, save);
    expect(refused.ok).toBe(false);
    expect(refused.result).toMatch(
      /^Nothing was saved: the last tests of this very code failed \(your tests\), and no test of it has passed since\./,
    );
    expect(existsSync(join(ctx.ws.root, 'library.py'))).toBe(false);
    // Other code was not tested and failing: it saves. A passing test clears the failure.
    expect((await library.run({ code: 'def other():\n    return 1\n' }, { ...save, human: answers([]) })).ok).toBe(true);
    const passed = await library.run({ code: RIGHT, tests: 'assert double(2) == 4' }, ctx);
    expect((await library.run({ code: RIGHT }, { ...save, note: passed.note })).ok).toBe(true);
  });

  it('the shipped ExtendLibrary, with a scripted LLM: refused after the user test fails, saved once fixed', async () => {
    const tests = testsFolder();
    const file = resolve('sops/extend_library.sop.json');
    const cmd = (command: string, args: Record<string, string> = {}) => JSON.stringify({ command, command_args: args });
    const llm = new ScriptedLlm({
      agent: [
        cmd('propose_plan', { draft: '1. double(x: int) -> int' }),
        cmd('write_code', { draft: WRONG }),
        cmd('test_code', { tests: 'assert double(1) == 2' }),
        cmd('save_code'),
        cmd('write_code', { draft: RIGHT }),
        cmd('test_code', { tests: 'assert double(1) == 2' }),
        cmd('save_code'),
        cmd('finish', { result: 'saved double' }),
      ],
    });
    const dir = tempDir('sop-el-');
    const result = await new Run({
      sop: loadSopFile(file).sop,
      file,
      llm,
      inputs: { goal: 'double(x)', tests },
      human: answers(['ok', 'ok', 'no', 'ok']),
      actions: { runDir: join(dir, 'run'), workspace: join(dir, 'ws'), autoRun: true, sandbox: false },
    }).run();
    expect(result.status).toBe('finished');
    const prompts = llm.of('agent').map((c) => c.messages.map((m) => m.content).join('\n'));
    expect(prompts[3]).toContain("The user's test file test_double.py: exit code 1.");
    expect(prompts[4]).toContain('The tests failed, so nothing was saved.');
    expect(prompts[4]).toContain('did not agree (their reply: no)');
    expect(readFileSync(join(dir, 'ws', 'library.py'), 'utf8')).toBe(RIGHT);
    expect(readFileSync(join(dir, 'run', 'memory', 'logs.md'), 'utf8')).toContain(
      "save_code (failed): save of double refused: its tests failed (the user's test_double.py)",
    );
  });
});

describe("save_code in a run, after the agent's own test failed", () => {
  it('is refused: the run remembers the failure from one command to the next', async () => {
    const file = resolve('sops/extend_library.sop.json');
    const cmd = (command: string, args: Record<string, string> = {}) => JSON.stringify({ command, command_args: args });
    const llm = new ScriptedLlm({
      agent: [
        cmd('propose_plan', { draft: '1. double(x: int) -> int' }),
        cmd('write_code', { draft: WRONG }),
        cmd('test_code', { tests: 'assert double(2) == 4' }),
        cmd('save_code'),
        cmd('finish', { result: 'gave up' }),
      ],
    });
    const dir = tempDir('sop-el2-');
    const result = await new Run({
      sop: loadSopFile(file).sop,
      file,
      llm,
      inputs: { goal: 'double(x)' },
      human: answers(['ok', 'ok']),
      actions: { runDir: join(dir, 'run'), workspace: join(dir, 'ws'), autoRun: true, sandbox: false },
    }).run();
    expect(result.status).toBe('finished');
    const last = llm
      .of('agent')[4]!
      .messages.map((m) => m.content)
      .join('\n');
    expect(last).toContain('Nothing was saved: the last tests of this very code failed (your tests)');
    expect(existsSync(join(dir, 'ws', 'library.py'))).toBe(false);
  });
});

describe('sop run --tests', () => {
  const run = (args: string[]) => spawnCliAsync(['run', ...args, '--out', tempDir('sop-out-')], { encoding: 'utf8' });

  it('refuses a SOP without a tests input and a folder that does not exist, in one line', async () => {
    const a = await run(['examples/debate/debate.sop.json', '--llm', 'mock', '--tests', '.']);
    expect(a.status).toBe(1);
    expect(a.stderr.trim()).toBe('error: --tests: debate has no "tests" input, so it runs no tests of yours (see docs/executors.md)');
    const b = await run(['sops/jarvis.sop.json', '--llm', 'mock', '--goal', 'x', '--tests', 'no/such/folder']);
    expect(b.status).toBe(1);
    expect(b.stderr.trim()).toBe(`error: --tests: ${resolve('no/such/folder')} is not a folder`);
  });
});
