// The user's own test suites for the code library (`sop run --tests DIR`, or the library
// executor's `tests_dir` setting): test files in a folder, each run with the function being
// tested or saved defined first. Python files `test_*.py` / `*_test.py`: their top-level code
// runs, then every function named `test*` they define is called (pytest style, no fixtures).
// JavaScript files `test_*.js` / `*.test.js`: their top-level code runs (e.g. with node:assert).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { EngineError } from '../../../shared/errors.js';

export const MAX_TEST_FILE_BYTES = 1024 * 1024;
export const MAX_TEST_FILES = 100;

/** The user's test folder cannot be used (missing, not a folder, unreadable, too large). */
export class UserTestsError extends EngineError {
  constructor(message: string) {
    super(message, 'USER_TESTS');
    this.name = 'UserTestsError';
  }
}

export interface UserTestFile {
  name: string;
  content: string;
}

const PATTERNS: Record<'python' | 'javascript', RegExp> = {
  python: /^(test_.*|.*_test)\.py$/,
  javascript: /^(test_.*\.js|.*\.test\.js)$/,
};

/** The folder the user's tests are in: relative paths are from the folder sop was started from. */
export function userTestsDir(dir: string, launchDir: string): string {
  return isAbsolute(dir) ? dir : resolve(launchDir, dir);
}

/** The test files of `dir` for `language`, sorted by name. */
export function readUserTests(dir: string, language: 'python' | 'javascript'): UserTestFile[] {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new UserTestsError(`the tests folder ${dir} is not a folder`);
    names = readdirSync(dir);
  } catch (err) {
    if (err instanceof UserTestsError) throw err;
    throw new UserTestsError(`cannot read the tests folder ${dir}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  const files = names.filter((n) => PATTERNS[language].test(n)).sort();
  if (files.length > MAX_TEST_FILES)
    throw new UserTestsError(`the tests folder ${dir} has ${files.length} test files; at most ${MAX_TEST_FILES} are run`);
  return files.map((name) => {
    const path = join(dir, name);
    const size = statSync(path).size;
    if (size > MAX_TEST_FILE_BYTES) throw new UserTestsError(`test file ${path} is ${size} bytes; at most 1 MiB is read`);
    return { name, content: readFileSync(path, 'utf8') };
  });
}

// Not a prompt: the Python lines that call every test function a test file defined.
const PY_CALL_TESTS = [
  'def _sop_call_tests():',
  '    import sys, traceback',
  '    failed = 0',
  '    for name, fn in list(globals().items()):',
  '        if name.startswith("test") and callable(fn) and getattr(fn, "__module__", None) == "__main__" and name not in _sop_defined:',
  '            try:',
  '                fn()',
  '                print("passed: %s" % name)',
  '            except Exception:',
  '                failed += 1',
  '                print("FAILED: %s" % name, file=sys.stderr)',
  '                traceback.print_exc()',
  '    if failed:',
  '        sys.exit(1)',
  '_sop_call_tests()',
].join('\n');

/** The script that runs one test file with `code` defined first. */
export function userTestScript(code: string, file: UserTestFile, language: 'python' | 'javascript'): string {
  if (language === 'javascript') return `${code}\n\n// the user's test file ${file.name}\n${file.content}\n`;
  // Names the code itself defines are not tests, even when they start with "test".
  return `${code}\n\n_sop_defined = set(globals())\n# the user's test file ${file.name}\n${file.content}\n\n${PY_CALL_TESTS}\n`;
}

/** A short fingerprint of a draft, to know whether a failed test was of this very code. */
export function codeHash(code: string): string {
  return createHash('sha256').update(code.trim()).digest('hex').slice(0, 16);
}
