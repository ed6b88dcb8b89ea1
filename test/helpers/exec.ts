// A command as a child process, awaited: tests never wait for a child process synchronously
// (spawnSync, execFileSync) when it may take more than a moment. A synchronous wait blocks the test
// file's event loop, and vitest's worker, whose calls to its runner time out after 60 s of that,
// then fails the whole run though every test passed (test/helpers/event-loop-guard.ts). The built
// CLI has its own wrapper of this, spawnCliAsync (test/helpers/cli.ts).
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { scaled } from './time.js';

export interface ExecOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Written to its stdin, which is then closed (without it, stdin is empty, or /dev/null with `stdin: 'ignore'`). */
  input?: string | Buffer;
  stdin?: 'pipe' | 'ignore';
  /** Milliseconds before it is killed, scaled by SOP_TEST_TIME_SCALE (test/helpers/time.ts). */
  timeout?: number;
  /** The signal a timeout sends (SIGTERM, as spawnSync's). */
  killSignal?: NodeJS.Signals;
  /** Its output as text (the default) or as the bytes it wrote ('buffer'). */
  encoding?: 'utf8' | 'buffer';
}

export interface ExecResult<Out = string> {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: Out;
  stderr: Out;
}

/** `cmd ARGS`, resolved when it has exited and its output is read, with its exit code or signal and its output. */
export function execAsync(cmd: string, args: readonly string[], options: ExecOptions & { encoding: 'buffer' }): Promise<ExecResult<Buffer>>;
export function execAsync(cmd: string, args: readonly string[], options?: ExecOptions & { encoding?: 'utf8' }): Promise<ExecResult>;
export function execAsync(cmd: string, args: readonly string[], options: ExecOptions = {}): Promise<ExecResult<string | Buffer>> {
  const { input, stdin = 'pipe', timeout, killSignal = 'SIGTERM', encoding = 'utf8', ...o } = options;
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { ...o, stdio: [stdin, 'pipe', 'pipe'] }) as ChildProcessByStdio<Writable | null, Readable, Readable>;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    const text = (chunks: Buffer[]) => (encoding === 'buffer' ? Buffer.concat(chunks) : Buffer.concat(chunks).toString('utf8'));
    const timer = timeout === undefined ? undefined : setTimeout(() => child.kill(killSignal), scaled(timeout));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout: text(out), stderr: text(err) });
    });
    if (child.stdin) {
      child.stdin.on('error', () => {}); // a child that exits without reading its input: EPIPE, not a failure
      child.stdin.end(input ?? '');
    }
  });
}
