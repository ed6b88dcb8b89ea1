// Three tiers of tests (test/README.md):
//   unit  - everything that runs in the test's own process (the engine through its API, executors,
//           contracts); `npm run test:unit`, no build needed.
//   cli   - the files that start the built CLI (dist/src/apps/cli/main.js) as child processes;
//           `npm run test:cli` (builds first).
//   model - in-process files that run the real local test model (test/helpers/local-model.ts):
//           minutes of CPU, skipped where the model is absent; `npm run test:model`. `npm test`
//           runs it first, as a vitest process of its own with a deadline (scripts/test.mjs): a
//           local model stuck in native code, or one that aborts its process, fails that tier,
//           never the runner of the others.
// Every time limit scales with SOP_TEST_TIME_SCALE (test/helpers/time.ts). No test file may leave
// a process it started running (test/helpers/leftovers-file.ts, leftovers-run.ts), nor block its
// event loop for long (test/helpers/event-loop-guard.ts: vitest's worker RPC times out after 60 s).
// A file is in the cli tier when it imports test/helpers/cli.ts, directly or through another test
// helper, or names the built CLI's path; the list is computed here on every run, so a new test file
// lands in its tier by what it does, with nothing to register.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vitest/config';
import { scaled } from './test/helpers/time.js';

const ROOT = import.meta.dirname;
const TEST = join(ROOT, 'test');
const CLI_HELPER = join(TEST, 'helpers', 'cli.ts');
const MODEL_HELPER = join(TEST, 'helpers', 'local-model.ts');

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === 'fixtures' || e.name === 'node_modules') return [];
    const path = join(dir, e.name);
    if (e.isDirectory()) return testFiles(path);
    return e.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The test-folder modules a file imports (static and dynamic imports with a relative path). */
function localImports(file: string, text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = resolve(dirname(file), m[1]!).replace(/\.js$/, '.ts');
    if (target.startsWith(TEST + '/') && existsSync(target)) out.push(target);
  }
  return out;
}

const spawnsCli = new Map<string, boolean>();
/** Whether a test file (or a helper it imports) starts the built CLI. */
function startsCli(file: string): boolean {
  const known = spawnsCli.get(file);
  if (known !== undefined) return known;
  spawnsCli.set(file, false); // an import cycle between helpers ends here
  const text = readFileSync(file, 'utf8');
  const yes = file === CLI_HELPER || text.includes('dist/src/apps/cli/main.js') || localImports(file, text).some(startsCli);
  spawnsCli.set(file, yes);
  return yes;
}

/** Whether a test file (or a helper it imports) runs the real local test model. */
function runsModel(file: string, seen = new Set<string>()): boolean {
  if (file === MODEL_HELPER) return true;
  if (seen.has(file)) return false;
  seen.add(file);
  return localImports(file, readFileSync(file, 'utf8')).some((f) => runsModel(f, seen));
}

const files = testFiles(TEST).map((f) => relative(ROOT, f));
const cliFiles = files.filter((f) => startsCli(join(ROOT, f)));
const modelFiles = files.filter((f) => !cliFiles.includes(f) && runsModel(join(ROOT, f)));

// Two pools run side by side, each with its own number of workers: the unit tier in worker
// threads, one per core (vitest's default is one fewer, a single worker on two cores); the cli
// tier in child processes, one more than the cores, as its files spend part of their time waiting
// for the CLI processes they start (more only makes timing-sensitive tests slow on a busy
// machine). vitest sizes a pool from the root options, not a project's.
const cores = availableParallelism();

// Tags the processes of this run's test files (test/helpers/processes.ts); set here, in vitest's
// own process, so that its workers inherit it.
process.env.SOP_TEST_RUN_ID ??= `${process.pid}-${Date.now().toString(36)}`;

// How long a test or hook may take before it is called hung, before SOP_TEST_TIME_SCALE: enough
// for the slowest test files of the cli tier on a 2-core machine at a load of 16 (two suites side
// by side), where a CLI process that takes a second alone takes ten.
const TEST_TIMEOUT = 180_000;

/**
 * The timeout a test file gives a test or hook as a number after its function, on the line that
 * closes the function (`}, 300_000);`) or alone between that line (`},`) and the call's `);`, is
 * at least TEST_TIMEOUT and is scaled by SOP_TEST_TIME_SCALE, as the file is loaded: the file
 * keeps the plain number (Prettier lays out a test call only with a number there). Numbers under
 * 1000 are left alone (the end of a setInterval or a reduce, not a timeout). Every other limit a
 * test gives is written `scaled(ms)` (test/helpers/time.ts).
 */
function scaleTestTimeouts(): Plugin {
  return {
    name: 'sop-scale-test-timeouts',
    enforce: 'pre',
    transform(code, id) {
      if (!id.startsWith(TEST + '/') || !id.endsWith('.test.ts')) return null;
      const timeout = (line: string, head: string, n: string, tail: string) => {
        const ms = Number(n.replaceAll('_', ''));
        return ms >= 1000 ? `${head}${scaled(Math.max(ms, TEST_TIMEOUT))}${tail}` : line;
      };
      const out = code
        .replace(/^(\s*\}\)?, )(\d[\d_]*)(\);?[ \t]*(?:\/\/.*)?)$/gm, timeout)
        .replace(/(?<=^[ \t]*\},[ \t]*\n)([ \t]+)(\d[\d_]*)(,[ \t]*\n[ \t]*\);?)$/gm, timeout);
      return { code: out, map: null };
    },
  };
}

export default defineConfig({
  plugins: [scaleTestTimeouts()],
  test: {
    // Many tests start the real CLI as a child process; give them room on a busy 2-core machine.
    testTimeout: scaled(TEST_TIMEOUT),
    hookTimeout: scaled(TEST_TIMEOUT),
    teardownTimeout: scaled(60_000),
    setupFiles: ['test/helpers/leftovers-file.ts', 'test/helpers/event-loop-guard.ts'],
    globalSetup: ['test/helpers/leftovers-run.ts'],
    // the user's own sop settings (an allow file of MCP servers) never reach a test: a folder that does not exist
    env: { SOP_CONFIG_DIR: resolve('test/fixtures/no-user-config') },
    poolOptions: {
      // The unit tier's files share their worker thread's modules: `src/` is loaded once per
      // thread, not once per file (over half the tier's CPU time). So a unit test file puts back
      // what it changes of the process (an environment variable, a spy) when it ends. Only the unit
      // tier runs in threads; vitest reads this from the root options, not a project's `isolate`.
      threads: { maxThreads: cores, minThreads: 1, isolate: false },
      forks: { maxForks: cores + 1, minForks: 1 },
    },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['test/**/*.test.ts'],
          exclude: [...cliFiles, ...modelFiles],
          pool: 'threads', // isolate: false, in poolOptions.threads above
        },
      },
      {
        extends: true,
        test: {
          name: 'model',
          include: modelFiles.length > 0 ? modelFiles : ['test/no-model-tier-files'],
          pool: 'forks', // each file in a process of its own: the native model's state goes with it
        },
      },
      { extends: true, test: { name: 'cli', include: cliFiles.length > 0 ? cliFiles : ['test/no-cli-tier-files'], pool: 'forks' } },
    ],
  },
});
