// Running a piece of Python, JavaScript or shell in a child process: the code goes in on stdin,
// the working directory is the workspace, the whole process group and every process carrying the
// run's tag are killed at the timeout (and when the script ends, so nothing it started in the
// background outlives it, even after setsid; one with a cleared environment is found by the
// output pipes it holds), and each of stdout and stderr is capped. At the timeout the run
// returns even if something it cannot kill still holds the pipes: sop closes its ends.
import { spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { SECCOMP_FD, sandboxArgv, sandboxFilter } from '../../../shared/sandbox/sandbox.js';
import { RUN_TAG_VAR, killHolders, killTagged, newRunTag, outputEnds } from './process-tag.js';
import { isSecretName, urlCredentials } from '../../../shared/util/redact.js';

export const LANGUAGES = ['python', 'javascript', 'bash'] as const;
export type Language = (typeof LANGUAGES)[number];

export const CODE_DEFAULTS = { timeoutMs: 60_000, maxOutput: 20_000 } as const;

export interface CodeRequest {
  language: Language;
  code: string;
  cwd: string;
  timeoutMs?: number;
  /** Bytes kept of each of stdout and stderr. */
  maxOutput?: number;
  sandbox?: boolean;
  /** With the sandbox: network inside it (an explicit opt-in). */
  network?: boolean;
  env?: Record<string, string>;
  signal?: AbortSignal;
}

export interface CodeOutcome {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  /** Bytes dropped beyond the cap, per stream. */
  dropped: { stdout: number; stderr: number };
  sandboxed: boolean;
  /** Set when the interpreter could not be started. */
  startError?: string;
  pid?: number;
}

function interpreter(language: Language): string[] {
  switch (language) {
    case 'python':
      return ['python3', '-u', '-'];
    case 'javascript':
      return [process.execPath, '-'];
    case 'bash':
      return ['bash', '-s'];
  }
}

/**
 * Variables that look like secrets are not handed to code written by a model: by their name,
 * named with --redact, or holding a URL with a credential in it.
 */
const SECRET = /(KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|AUTH)/i;

export function codeEnvironment(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || SECRET.test(k) || isSecretName(k)) continue;
    if (v.includes('://') && urlCredentials(v).length > 0) continue;
    env[k] = v;
  }
  env.PYTHONUNBUFFERED = '1';
  env.PYTHONDONTWRITEBYTECODE = '1';
  return { ...env, ...extra };
}

/**
 * With network in the sandbox, what code installs goes to the workspace, the one folder it may
 * write: `pip install yfinance` installs for the user, whose base is the workspace's .python
 * (where Python finds it), with pip's cache there too.
 */
export function installsInWorkspace(workspace: string): Record<string, string> {
  return {
    PYTHONUSERBASE: `${workspace}/.python`,
    PIP_USER: '1',
    PIP_CACHE_DIR: `${workspace}/.cache/pip`,
    npm_config_cache: `${workspace}/.cache/npm`,
  };
}

export class Capped {
  private readonly parts: Buffer[] = [];
  private kept = 0;
  dropped = 0;
  constructor(private readonly cap: number) {}
  push(chunk: Buffer): void {
    const room = this.cap - this.kept;
    if (room > 0) {
      const part = chunk.length > room ? chunk.subarray(0, room) : chunk;
      this.parts.push(part);
      this.kept += part.length;
    }
    this.dropped += Math.max(0, chunk.length - Math.max(0, room));
  }
  text(): string {
    return Buffer.concat(this.parts).toString('utf8');
  }
}

/** How long after a kill sop waits for the output pipes to close before closing its own ends. */
export const PIPE_CLOSE_GRACE_MS = 500;

/**
 * Stop reading a child's stdout and stderr (something outside its reach holds their other ends),
 * so that its 'close' fires once it has exited.
 */
export function closePipes(child: { stdout: Readable | null; stderr: Readable | null }): void {
  child.stdout?.destroy();
  child.stderr?.destroy();
}

export function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Kill functions of the code runs under way: `sop` exiting (a second Ctrl-C) kills them too. */
const running = new Set<() => void>();
let exitHook = false;
export function track(kill: () => void): () => void {
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const k of running) k();
    });
  }
  running.add(kill);
  return () => running.delete(kill);
}

export function runCode(req: CodeRequest): Promise<CodeOutcome> {
  const timeoutMs = req.timeoutMs ?? CODE_DEFAULTS.timeoutMs;
  const cap = req.maxOutput ?? CODE_DEFAULTS.maxOutput;
  let argv = interpreter(req.language);
  const sandboxed = req.sandbox === true;
  if (sandboxed) argv = sandboxArgv(req.cwd, argv, [], { network: req.network });
  // files: every process of this run carries the tag, so one that left the process group
  // (setsid) is found and killed too, at the timeout and when the script ends
  const tag = newRunTag();
  let ends: string[] = [];
  const killAll = (pid: number | undefined) => {
    killGroup(pid);
    killTagged(tag);
    killHolders(ends);
  };
  return new Promise((resolve) => {
    const stdout = new Capped(cap);
    const stderr = new Capped(cap);
    let timedOut = false;
    let settled = false;
    let exit: { code: number | null; signal: string | null } | undefined;
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: req.cwd,
      env: { ...codeEnvironment(req.env), ...(sandboxed && req.network ? installsInWorkspace(req.cwd) : {}), [RUN_TAG_VAR]: tag },
      detached: true,
      // --sandbox: bwrap reads its seccomp filter from fd 3
      stdio: sandboxed ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
    });
    // before the code is written to it, so these are still sop's pipes
    ends = outputEnds(child.pid);
    if (sandboxed) {
      const fd = child.stdio[SECCOMP_FD] as Writable | null;
      fd?.on('error', () => {
        /* bwrap failed to start; reported below */
      });
      fd?.end(sandboxFilter()!); // sandboxArgv succeeded, so the filter exists here
    }
    const untrack = track(() => killAll(child.pid));
    const finish = (o: Partial<CodeOutcome>) => {
      if (settled) return;
      settled = true;
      untrack();
      clearTimeout(timer);
      clearTimeout(grace);
      req.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode: null,
        signal: null,
        stdout: stdout.text(),
        stderr: stderr.text(),
        timedOut,
        sandboxed,
        dropped: { stdout: stdout.dropped, stderr: stderr.dropped },
        pid: child.pid,
        ...o,
      });
    };
    let grace: NodeJS.Timeout | undefined;
    const timer = setTimeout(() => {
      // a script that already ended is not "killed at the timeout": only what it left holding
      // its output is (and whatever of that could not be killed is cut off)
      if (!exit) timedOut = true;
      killAll(child.pid);
      grace = setTimeout(() => closePipes(child), PIPE_CLOSE_GRACE_MS);
    }, timeoutMs);
    const onAbort = () => killAll(child.pid);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (c: Buffer) => stdout.push(c));
    child.stderr.on('data', (c: Buffer) => stderr.push(c));
    child.stdin.on('error', () => {
      /* the script may exit without reading all of its code */
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      finish({ startError: err.code === 'ENOENT' ? `${argv[0]} is not installed or not on PATH` : err.message });
    });
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // Background processes the script left behind are killed with it (in its group or not);
      // this also closes the pipes they hold, so 'close' below can fire.
      killAll(child.pid);
    });
    child.on('close', () => finish({ exitCode: exit?.code ?? null, signal: exit?.signal ?? null }));
    child.stdin.end(req.code);
  });
}

/** A short description of how a run ended, e.g. "exit code 1" or "killed after the 5 s timeout". */
export function describeExit(o: CodeOutcome, timeoutMs: number): string {
  if (o.startError) return `could not start: ${o.startError}`;
  if (o.timedOut) return `killed after the ${Math.round(timeoutMs / 100) / 10} s timeout`;
  if (o.exitCode !== null) return `exit code ${o.exitCode}`;
  return `killed by ${o.signal ?? 'a signal'}`;
}
