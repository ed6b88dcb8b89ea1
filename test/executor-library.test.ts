// The library executor: syntax check, tests, and saving functions to a module in the workspace
// that later code imports; code_library lists their signatures and docstrings.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executor as code } from '../src/features/actions/executors/code.js';
import { executor as library } from '../src/features/actions/executors/library.js';
import { answers, execContext } from './helpers/executor-context.js';

const FN = 'def double(x: int) -> int:\n    """Twice x."""\n    return 2 * x\n';

describe('library executor', () => {
  it('saves a tested Python function that later code imports', async () => {
    const ctx = execContext({ settings: { op: 'save' } });
    const r = await library.run({ code: FN, tests: 'assert double(2) == 4\nprint("tests ok")' }, ctx);
    expect(r.ok).toBe(true);
    expect(r.result).toBe(
      'Saved to library.py: double(x: int) -> int.\nThe tests passed. Their output:\ntests ok\nLater code can use it with: from library import double\nIts signature and docstring were added to the code_library memory file.',
    );
    expect(readFileSync(join(ctx.ws.root, 'library.py'), 'utf8')).toBe(FN);
    expect(ctx.memory.read('code_library')).toBe('def double(x: int) -> int:\n    """Twice x."""\n\n');
    const use = await code.run({ language: 'python', code: 'from library import double\nprint(double(21))' }, { ...ctx, settings: {} });
    expect(use.result).toContain('stdout:\n42');
    // A second function is appended, the first one stays.
    await library.run({ code: 'def triple(x):\n    return 3 * x\n' }, ctx);
    expect(readFileSync(join(ctx.ws.root, 'library.py'), 'utf8')).toBe(`${FN}\n\ndef triple(x):\n    return 3 * x\n`);
  });

  it('does not save code with a syntax error, failing tests, or no function', async () => {
    const ctx = execContext({ settings: { op: 'save' } });
    const syntax = await library.run({ code: 'def broken(:\n  pass' }, ctx);
    expect(syntax.ok).toBe(false);
    expect(syntax.result).toMatch(/^Nothing was saved: SyntaxError: .* \(line 1\)\. Fix the code and try again\.$/);
    const failing = await library.run({ code: FN, tests: 'assert double(2) == 5, "double(2) should be 5"' }, ctx);
    expect(failing.ok).toBe(false);
    expect(failing.result).toContain('The tests failed, so nothing was saved.\nYour tests: exit code 1.');
    expect(failing.result).toContain('AssertionError: double(2) should be 5');
    const script = await library.run({ code: 'print("hello")' }, ctx);
    expect(script.result).toBe('The code defines no top-level function, so there is nothing to save. Write it as one or more functions.');
    expect(existsSync(join(ctx.ws.root, 'library.py'))).toBe(false);
    expect(ctx.memory.read('code_library')).toBe('');
  });

  it('tests a draft written earlier without saving it', async () => {
    const ctx = execContext({ settings: { op: 'test', draft: 'draft_code' }, memoryFiles: { draft_code: FN, code_library: '' } });
    const r = await library.run({ tests: 'assert double(3) == 6' }, ctx);
    expect(r.ok).toBe(true);
    expect(r.result).toBe('Checked: double(x: int) -> int.\nThe tests passed.');
    expect(existsSync(join(ctx.ws.root, 'library.py'))).toBe(false);
  });

  it("takes tests of the user's own at test_code time (ask_tests), and their feedback on the results (feedback)", async () => {
    const settings = { op: 'test', draft: 'draft_code', ask_tests: true, feedback: true };
    const memoryFiles = { draft_code: FN, code_library: '' };
    // scripted: the user's tests ("tests: ..."), then their feedback on the results ("test feedback: ...")
    const given = execContext({
      settings,
      memoryFiles,
      human: answers(['tests: assert double(5) == 10\nassert double(-1) == -2', 'test feedback: also try zero']),
    });
    const ok = await library.run({ tests: 'assert double(3) == 6' }, given);
    expect(ok.ok).toBe(true);
    expect(ok.result).toBe(
      "Checked: double(x: int) -> int.\nThe tests passed.\nThe user's tests passed: (the tests you gave now).\nThe user's feedback on the test results: also try zero",
    );
    expect(ok.summary).toBe('checked double; tests passed; the user\'s tests passed (1); the user\'s feedback: "also try zero"');
    // a test of theirs that fails stops the draft as the agent's own would
    const failing = execContext({ settings, memoryFiles, human: answers(['tests: assert double(2) == 5, "the user says 5"']) });
    const r = await library.run({ tests: 'assert double(3) == 6' }, failing);
    expect(r.ok).toBe(false);
    expect(r.result).toContain("The user's test file (the tests you gave now): exit code 1.");
    expect(r.result).toContain('AssertionError: the user says 5');
    // untagged answers are not taken for tests or feedback (they belong to other questions)
    const other = execContext({ settings, memoryFiles, human: answers(['ok']) });
    expect((await library.run({ tests: 'assert double(3) == 6' }, other)).result).toBe(
      'Checked: double(x: int) -> int.\nThe tests passed.',
    );
    expect(other.human.consumed).toBe(0);
  });

  it('test_code takes a scripted `run: approve` (or `run: refuse REASON`) for its tests, as run_code does, without --auto-run', async () => {
    const settings = { op: 'test', draft: 'draft_code' };
    const memoryFiles = { draft_code: FN, code_library: '' };
    const approved = execContext({ settings, memoryFiles, autoRun: false, human: answers(['run: approve']) });
    const ok = await library.run({ tests: 'assert double(3) == 6\nprint("tests ok")' }, approved);
    expect(ok.ok, ok.result).toBe(true);
    expect(ok.result).toContain('The tests passed.');
    expect(approved.human.consumed).toBe(1);
    const refused = execContext({ settings, memoryFiles, autoRun: false, human: answers(['run: refuse not now']) });
    const no = await library.run({ tests: 'assert double(3) == 6' }, refused);
    expect(no.ok).toBe(false);
    expect(no.summary).toContain('the user did not approve running the tests');
    expect(no.result).toContain('not now');
    // an untagged answer does not approve code: nobody at a terminal, so the run stops for approval
    const untagged = execContext({ settings, memoryFiles, autoRun: false, human: answers(['ok']) });
    await expect(library.run({ tests: 'assert double(3) == 6' }, untagged)).rejects.toThrow(/--auto-run|autoRun/);
  });

  it('keeps a JavaScript library that node code can require', async () => {
    const ctx = execContext({ settings: { op: 'save', language: 'javascript' } });
    const r = await library.run({ code: '/** Sum of a list. */\nfunction sum(xs) {\n  return xs.reduce((a, b) => a + b, 0);\n}\n' }, ctx);
    expect(r.ok).toBe(true);
    expect(r.result).toContain("const { sum } = require('./library.js');");
    const use = await code.run(
      { language: 'javascript', code: "const { sum } = require('./library.js');\nconsole.log(sum([1, 2, 3]))" },
      { ...ctx, settings: {} },
    );
    expect(use.result).toContain('stdout:\n6');
    const syntax = await library.run({ code: 'function (' }, ctx);
    expect(syntax.result).toMatch(/^Nothing was saved: SyntaxError/);
  });
});
