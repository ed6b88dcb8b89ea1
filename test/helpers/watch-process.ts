// A child process whose output (stdout and stderr together) a test reads as it comes, and waits
// on: a worker's or a server's readiness line, a line it prints when it takes a job. The wait is
// for the output, never for time; its limit only calls the test hung, and it fails at once,
// with the output, when the process ends without printing what was awaited.
import { spawn, type ChildProcess } from 'node:child_process';
import { scaled } from './time.js';

export interface WatchedProcess {
  child: ChildProcess;
  /** Everything it has printed so far, stdout and stderr in the order they came. */
  out: string;
  /** Its exit code (null when a signal ended it). */
  exited: Promise<number | null>;
  /**
   * Resolves with the first match of `re` in its output, as soon as there is one; rejects with
   * the output's end when it exits without one, or after `ms` (default 120 s, scaled).
   */
  waitFor(re: RegExp, ms?: number): Promise<RegExpMatchArray>;
}

/** Starts `cmd args` in `cwd` with `env` (default: this process's), its output watched. */
export function watchProcess(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env, cwd?: string): WatchedProcess {
  const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  // each waiter is asked after every chunk, and once more (told so) when the output has ended
  const waiters = new Set<(ended: boolean) => boolean>();
  let ended = false;
  const p: WatchedProcess = {
    child,
    out: '',
    exited: new Promise((r) => {
      child.on('exit', (code) => r(code));
      // it could not be started (no such command): there is no 'exit' to wait for
      child.on('error', () => child.pid === undefined && r(null));
    }),
    waitFor: (re, ms = 120_000) =>
      new Promise((resolve, reject) => {
        const fail = (why: string) => new Error(`no ${re} ${why} in the output of ${cmd}:\n${p.out.slice(-3000)}`);
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(fail(`within ${scaled(ms)} ms`));
        }, scaled(ms));
        const check = (done: boolean): boolean => {
          const m = p.out.match(re);
          if (m) resolve(m);
          else if (done) reject(fail(`before it exited (${child.exitCode ?? child.signalCode})`));
          else return false;
          clearTimeout(timer);
          return true;
        };
        if (!check(ended)) waiters.add(check);
      }),
  };
  const tell = (done: boolean) => {
    for (const check of waiters) if (check(done)) waiters.delete(check);
  };
  const onData = (d: Buffer) => {
    p.out += d.toString();
    tell(false);
  };
  child.stdout.on('data', onData);
  child.stderr.on('data', onData);
  // 'close': the process has exited and its output has been read to the end
  child.on('close', () => {
    ended = true;
    tell(true);
  });
  child.on('error', (e) => void (p.out += `\n${e.message}\n`));
  return p;
}
