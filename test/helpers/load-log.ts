// A Node loader hook for tests that list the ES modules a process loads: `--import` the file this
// returns, with SOP_TEST_LOAD_LOG=FILE in the process's environment, and every module's URL is
// appended to FILE as it loads (test/import-startup.test.ts, test/validate-startup.test.ts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

/** Writes the hook into `dir`; returns the path of the module to give `node --import`. */
export function writeLoadLogHook(dir: string): string {
  writeFileSync(
    join(dir, 'hooks.mjs'),
    "import { appendFileSync } from 'node:fs';\n" +
      'export async function load(url, context, next) {\n' +
      "  appendFileSync(process.env.SOP_TEST_LOAD_LOG, url + '\\n');\n" +
      '  return next(url, context);\n' +
      '}\n',
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(join(dir, 'hooks.mjs')).href)});\n`,
  );
  return register;
}
