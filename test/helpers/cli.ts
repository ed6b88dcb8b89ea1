// The one way tests start the built CLI (dist/src/apps/cli/main.js, made by `npm run build`) or use
// the built package: every test file that does imports this module, which also puts the file in
// the cli tier of the test suite (vitest.config.ts; test/README.md).
// There is no synchronous variant (a spawnSync of the CLI): a test waiting that way blocks its
// file's event loop for the whole run, and vitest's worker, whose calls to its runner time out
// after 60 s of a blocked loop, then fails the whole `npm test` though every test passed (a run of
// seconds on a quiet machine takes ten times longer on a loaded one). Await spawnCliAsync instead
// (test/helpers/event-loop-guard.ts fails a file that blocks its loop for long).
import { spawn, type ChildProcessWithoutNullStreams, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execAsync, type ExecOptions, type ExecResult } from './exec.js';
import { withFileTag } from './processes.js';

export const CLI = join(process.cwd(), 'dist/src/apps/cli/main.js');

/** Fails with the fix when the CLI has not been built (call it in a beforeAll). */
export function requireBuiltCli(): void {
  if (!existsSync(CLI)) throw new Error('dist/src/apps/cli/main.js is missing: run `npm run build` first');
}

/**
 * Fails with the fix when the package has not been built: for a test of the package as a user
 * imports it (`import ... from 'sop'`, its self-reference, resolves to dist/). Such a test
 * imports this module, which puts it in the cli tier, the tier `npm run test:cli` builds for.
 */
export function requireBuiltPackage(): void {
  if (!existsSync(join(process.cwd(), 'dist/src/index.js')) || !existsSync(join(process.cwd(), 'dist/src/index.d.ts')))
    throw new Error('dist/src/index.js is missing: run `npm run build` first');
}

/** Options of a spawn, plus Node options given before the CLI's path (e.g. ['--import', hook]). */
type WithNodeArgs<O> = O & { nodeArgs?: string[] };

function argv(args: readonly string[], nodeArgs: readonly string[] = []): string[] {
  return [...nodeArgs, CLI, ...args];
}

/** `sop ARGS` as a child process (as child_process.spawn, with node and the CLI's path put first). */
export function spawnCli(args: readonly string[], options: WithNodeArgs<SpawnOptions> = {}): ChildProcessWithoutNullStreams {
  const { nodeArgs, ...o } = options;
  return spawn(process.execPath, argv(args, nodeArgs), {
    ...o,
    ...(o.env && { env: withFileTag(o.env) }),
  }) as ChildProcessWithoutNullStreams;
}

/**
 * `sop ARGS`, awaited without blocking this test's event loop. Takes a spawn's cwd and env, and
 * the `input` to write to its stdin (or `stdin: 'ignore'`), a `timeout` (scaled by
 * SOP_TEST_TIME_SCALE) and its `killSignal` (test/helpers/exec.ts); resolves with its exit code or
 * signal and the text of its stdout and stderr.
 */
export function spawnCliAsync(
  args: readonly string[],
  options: WithNodeArgs<ExecOptions & { encoding?: 'utf8' }> = {},
): Promise<ExecResult> {
  const { nodeArgs, ...o } = options;
  return execAsync(process.execPath, argv(args, nodeArgs), { ...o, ...(o.env && { env: withFileTag(o.env) }) });
}

/**
 * `sop ARGS` (with `env` over this process's environment), awaited without blocking: tests whose
 * LLM server answers from the test's own process. Resolves when it exits.
 */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawnCli(args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}

/**
 * `sop ARGS` with `env` as its whole environment, awaited; `onSpawn` is handed a function that
 * SIGKILLs it (kill tests call it on a readiness signal). Resolves with its exit code or signal.
 */
export function runCliKillable(
  args: string[],
  env: NodeJS.ProcessEnv,
  onSpawn?: (kill: () => void) => void,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(args, { stdio: ['ignore', 'ignore', 'pipe'], env });
    let stderr = '';
    onSpawn?.(() => child.kill('SIGKILL'));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stderr }));
  });
}
