// The built CLI (dist/src/cli/main.js) in a child process with no terminal, awaited without
// blocking: tests whose LLM server answers from the test's own process cannot use spawnSync.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const CLI = join(process.cwd(), 'dist/src/cli/main.js');

/** Run `sop ARGS` (with `env` over this process's environment); resolves when it exits, with its exit code and stderr. */
export function runCli(args: string[], env: Record<string, string | undefined> = {}): Promise<{ status: number | null; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ...env } });
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('close', (status) => resolve({ status, stderr }));
  });
}
