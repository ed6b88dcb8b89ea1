// The processes a test file starts, found again by a tag in their environment: no test leaves one
// behind (test/helpers/leftovers-file.ts checks each file as it ends, test/helpers/leftovers-run.ts
// the whole run). A test file's worker sets SOP_TEST_FILE=RUN:FILE in its environment, which every
// child it starts inherits (and its children in turn), unless it is given an environment of its
// own: the CLI helpers of test/helpers/cli.ts add the tag to such an environment too.
import { readdirSync, readFileSync } from 'node:fs';
import type { ChildProcess } from 'node:child_process';
import { until } from './until.js';

/** The variable that tags a test file's processes. */
export const FILE_TAG = 'SOP_TEST_FILE';

export interface Tagged {
  pid: number;
  /** The tag's value: RUN:FILE. */
  tag: string;
  /** Its command line, shortened. */
  command: string;
}

/** The live processes (not zombies) whose environment has a SOP_TEST_FILE value that starts with `prefix`. */
export function taggedProcesses(prefix: string): Tagged[] {
  if (process.platform !== 'linux') return []; // /proc: Linux only
  const out: Tagged[] = [];
  const want = `${FILE_TAG}=${prefix}`;
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === process.pid) continue;
    try {
      const env = readFileSync(`/proc/${pid}/environ`, 'latin1');
      const at = env.indexOf(want);
      if (at < 0 || (at > 0 && env[at - 1] !== '\0')) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
      if (/^\d+ \(.*\) [ZX] /s.test(stat)) continue; // ended, not yet reaped
      const end = env.indexOf('\0', at);
      const tag = env.slice(at + FILE_TAG.length + 1, end < 0 ? undefined : end);
      const command = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').filter(Boolean).join(' ');
      out.push({ pid, tag, command: command.length > 160 ? `${command.slice(0, 157)}...` : command });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return out;
}

/**
 * Waits until no process of `prefix` is left (they may be ending: a SIGTERM just sent), up to
 * `timeoutMs` (scaled); then kills the ones left with SIGKILL and returns them.
 */
export async function reapLeftovers(prefix: string, timeoutMs = 10_000): Promise<Tagged[]> {
  if (await until(() => taggedProcesses(prefix).length === 0, { timeoutMs, intervalMs: 100 })) return [];
  const left = taggedProcesses(prefix);
  for (const p of left) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // ended meanwhile
    }
  }
  return left;
}

/** `env` with this test file's tag added (for a child given an environment of its own). */
export function withFileTag(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const tag = process.env[FILE_TAG];
  return tag === undefined || env[FILE_TAG] !== undefined ? env : { ...env, [FILE_TAG]: tag };
}

/**
 * Sends `signal` to a child and waits for it to exit; if it has not after `graceMs` (scaled), kills
 * it with SIGKILL. Resolves to whether it exited on the signal alone (for a test that asserts so).
 */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 20_000): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  child.kill(signal);
  let done = false;
  void exited.then(() => (done = true));
  if (await until(() => done, { timeoutMs: graceMs, intervalMs: 20 })) return true;
  child.kill('SIGKILL');
  await exited;
  return false;
}
