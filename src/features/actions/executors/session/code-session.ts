// A stateful interpreter for the code executor: one long-lived Python or JavaScript process per
// run and language, in which cells run one after the other in one namespace (python_session.py,
// js-session.ts). The code goes in as one JSON line on stdin; what the cell prints comes back on
// stdout and stderr, up to a random marker, and the marker on stdout is followed by the reply
// line (the exception, the exit code of sys.exit/process.exit, the files written). The session
// runs in the workspace, under the sandbox when it is on, with the same environment, timeout and
// output caps as a one-off run (code-runner.ts); at the timeout the whole session is killed and
// the next cell starts an empty one.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import {
  Capped,
  CODE_DEFAULTS,
  PIPE_CLOSE_GRACE_MS,
  closePipes,
  codeEnvironment,
  installsInWorkspace,
  killGroup,
  track,
  type CodeOutcome,
} from '../code-runner.js';
import { RUN_TAG_VAR, killHolders, killTagged, newRunTag, outputEnds } from '../process-tag.js';
import { SECCOMP_FD, sandboxArgv, sandboxFilter } from '../../../../shared/sandbox/sandbox.js';
import { packageRoot } from '../../../../shared/util/package-root.js';
import { EngineError } from '../../../../shared/errors.js';
import { contextVar } from '../../../../shared/util/context-vars.js';

export const SESSION_LANGUAGES = ['python', 'javascript'] as const;
export type SessionLanguage = (typeof SESSION_LANGUAGES)[number];

export function isSessionLanguage(language: string): language is SessionLanguage {
  return (SESSION_LANGUAGES as readonly string[]).includes(language);
}

/** How long to wait for the stderr marker once the reply is in (the cell may have closed stderr). */
const STDERR_GRACE_MS = 2000;
/** A reply line longer than this is not the driver's: the session is broken. */
const MAX_REPLY_BYTES = 1024 * 1024;

export interface CellOutcome extends CodeOutcome {
  /** The exception the cell raised (a traceback), if any. */
  error?: string;
  /** Files under the workspace the cell created or changed. */
  files: string[];
  /** The session's process ended during the cell (timeout, Ctrl-C, os._exit): what it held is gone. */
  sessionEnded: boolean;
  /** The cell's number in its session (1: the session was started for it). */
  cell: number;
}

interface Reply {
  error: string | null;
  exit: number | null;
  files: string[];
}

/** The driver program of a language, shipped with the package. */
export function driverArgv(language: SessionLanguage): string[] {
  const root = packageRoot();
  const file =
    language === 'python'
      ? join(root, 'src', 'features', 'actions', 'executors', 'session', 'python_session.py')
      : join(root, 'dist', 'src', 'features', 'actions', 'executors', 'session', 'js-session.js');
  if (!existsSync(file)) throw new EngineError(`the ${language} session driver ${file} is missing (run npm run build)`, 'INTERNAL');
  return language === 'python' ? ['python3', '-u', file] : [process.execPath, file];
}

/** Splits a stream at the marker: data before it is output, and on stdout the line after it is the reply. */
class Framer {
  private pending: Buffer = Buffer.alloc(0);
  private inReply = false;
  constructor(
    private readonly mark: Buffer,
    private readonly withReply: boolean,
    private readonly onData: (b: Buffer) => void,
    private readonly onEnd: (reply?: string) => void,
  ) {}
  push(chunk: Buffer): void {
    this.pending = this.pending.length ? Buffer.concat([this.pending, chunk]) : chunk;
    for (;;) {
      if (this.inReply) {
        const nl = this.pending.indexOf(10);
        if (nl < 0) {
          if (this.pending.length > MAX_REPLY_BYTES) {
            this.inReply = false;
            this.pending = Buffer.alloc(0);
            this.onEnd('');
          }
          return;
        }
        const line = this.pending.subarray(0, nl).toString('utf8');
        this.pending = this.pending.subarray(nl + 1);
        this.inReply = false;
        this.onEnd(line);
        continue;
      }
      const i = this.pending.indexOf(this.mark);
      if (i < 0) break;
      if (i > 0) this.onData(this.pending.subarray(0, i));
      this.pending = this.pending.subarray(i + this.mark.length);
      if (this.withReply) this.inReply = true;
      else this.onEnd();
    }
    // keep what may be the start of a marker (only that: output is not held back, or split
    // between two cells when the next begins before the rest comes)
    const keep = markPrefixAtEnd(this.pending, this.mark);
    if (this.pending.length > keep) {
      this.onData(this.pending.subarray(0, this.pending.length - keep));
      this.pending = this.pending.subarray(this.pending.length - keep);
    }
  }
  /** The stream ended: what is left is output. */
  flush(): void {
    if (!this.inReply && this.pending.length) this.onData(this.pending);
    this.pending = Buffer.alloc(0);
  }
}

/** The length of the longest end of `buf` that is the start of `mark` (shorter than the mark). */
function markPrefixAtEnd(buf: Buffer, mark: Buffer): number {
  for (let k = Math.min(mark.length - 1, buf.length); k > 0; k--) {
    if (buf.subarray(buf.length - k).equals(mark.subarray(0, k))) return k;
  }
  return 0;
}

interface Waiter {
  reply: (line: string) => void;
  stderrMark: () => void;
  ended(code: number | null, signal: string | null, startError?: string): void;
}

export interface CodeSessionOptions {
  language: SessionLanguage;
  cwd: string;
  sandbox: boolean;
  /** With the sandbox: network inside it (an explicit opt-in). */
  network?: boolean;
  /** Added to the environment code gets (codeEnvironment: secrets left out). */
  env?: Record<string, string>;
}

export interface CellRequest {
  timeoutMs?: number;
  maxOutput?: number;
  signal?: AbortSignal;
}

export class CodeSession {
  private child?: ChildProcessWithoutNullStreams;
  private tag = '';
  private ends: string[] = [];
  private grace?: NodeJS.Timeout;
  private out = new Capped(CODE_DEFAULTS.maxOutput);
  private err = new Capped(CODE_DEFAULTS.maxOutput);
  private waiter?: Waiter;
  private untrack?: () => void;
  private cells = 0;
  private closed = false;

  constructor(private readonly o: CodeSessionOptions) {}

  /** Whether the session's process is running (it holds what earlier cells defined). */
  get alive(): boolean {
    return this.child !== undefined;
  }

  /** Cells run in the current process. */
  get cellCount(): number {
    return this.cells;
  }

  private start(): void {
    let argv = driverArgv(this.o.language);
    if (this.o.sandbox) argv = sandboxArgv(this.o.cwd, argv, [], { network: this.o.network });
    const mark = Buffer.from(`\u001eSOP-CELL-END-${randomBytes(12).toString('hex')}\u001e`);
    this.tag = newRunTag();
    this.cells = 0;
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: this.o.cwd,
      env: {
        ...codeEnvironment(this.o.env),
        ...(this.o.sandbox && this.o.network ? installsInWorkspace(this.o.cwd) : {}),
        [RUN_TAG_VAR]: this.tag,
        SOP_SESSION_MARK: mark.toString('utf8'),
      },
      detached: true,
      stdio: this.o.sandbox ? ['pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    // before any cell is written to it, so these are still sop's pipes
    const ends = outputEnds(child.pid);
    this.ends = ends;
    if (this.o.sandbox) {
      const fd = child.stdio[SECCOMP_FD] as Writable | null;
      fd?.on('error', () => {});
      fd?.end(sandboxFilter()!);
    }
    const tag = this.tag;
    this.untrack = track(() => {
      killGroup(child.pid);
      killTagged(tag);
      killHolders(ends);
    });
    const outFramer = new Framer(
      mark,
      true,
      (b) => this.out.push(b),
      (line) => this.waiter?.reply(line ?? ''),
    );
    const errFramer = new Framer(
      mark,
      false,
      (b) => this.err.push(b),
      () => this.waiter?.stderrMark(),
    );
    child.stdout.on('data', (c: Buffer) => outFramer.push(c));
    child.stderr.on('data', (c: Buffer) => errFramer.push(c));
    child.stdin.on('error', () => {
      /* the session ended; reported by 'close' */
    });
    let startError: string | undefined;
    child.on('error', (e: NodeJS.ErrnoException) => {
      startError = e.code === 'ENOENT' ? `${argv[0]} is not installed or not on PATH` : e.message;
    });
    let exit: { code: number | null; signal: string | null } | undefined;
    child.on('exit', (code, signal) => {
      exit = { code, signal };
      // what the session left running goes with it, which also closes the pipes it holds
      killGroup(child.pid);
      killTagged(tag);
      killHolders(ends);
    });
    child.on('close', () => {
      clearTimeout(this.grace);
      outFramer.flush();
      errFramer.flush();
      if (this.child === child) this.forget();
      this.waiter?.ended(exit?.code ?? null, exit?.signal ?? null, startError);
    });
  }

  private forget(): void {
    this.untrack?.();
    this.untrack = undefined;
    this.child = undefined;
  }

  /** Kill the session's process and everything it started; the next cell starts an empty one. */
  stop(): void {
    const child = this.child;
    if (!child) return;
    killGroup(child.pid);
    killTagged(this.tag);
    killHolders(this.ends);
    // what could not be killed may still hold the output: stop reading it, so the session ends
    clearTimeout(this.grace);
    this.grace = setTimeout(() => closePipes(child), PIPE_CLOSE_GRACE_MS);
  }

  /** End the session for good (the run is over). */
  close(): void {
    this.closed = true;
    this.stop();
  }

  /** Run one cell. Never rejects for the cell's own failures (they are in the outcome). */
  run(code: string, req: CellRequest = {}): Promise<CellOutcome> {
    if (this.closed) throw new EngineError(`the ${this.o.language} session is closed`, 'INTERNAL');
    if (this.waiter) throw new EngineError(`the ${this.o.language} session is already running a cell`, 'INTERNAL');
    const timeoutMs = req.timeoutMs ?? CODE_DEFAULTS.timeoutMs;
    const cap = req.maxOutput ?? CODE_DEFAULTS.maxOutput;
    // output that came between cells (from something the last cell left running) counts for this one
    const early = { out: this.out.text(), err: this.err.text() };
    this.out = new Capped(cap);
    this.err = new Capped(cap);
    if (early.out) this.out.push(Buffer.from(early.out));
    if (early.err) this.err.push(Buffer.from(early.err));
    if (!this.child) this.start();
    const child = this.child!;
    this.cells++;
    const cell = this.cells;
    return new Promise((resolve) => {
      let timedOut = false;
      let reply: Reply | undefined;
      let grace: NodeJS.Timeout | undefined;
      const done = (o: Partial<CellOutcome>) => {
        if (this.waiter !== waiter) return;
        this.waiter = undefined;
        clearTimeout(timer);
        clearTimeout(grace);
        req.signal?.removeEventListener('abort', onAbort);
        const out = this.out;
        const err = this.err;
        this.out = new Capped(cap);
        this.err = new Capped(cap);
        resolve({
          exitCode: null,
          signal: null,
          stdout: out.text(),
          stderr: err.text(),
          timedOut,
          sandboxed: this.o.sandbox,
          dropped: { stdout: out.dropped, stderr: err.dropped },
          pid: child.pid,
          files: [],
          sessionEnded: false,
          cell,
          ...o,
        });
      };
      const fromReply = (r: Reply): Partial<CellOutcome> => ({
        exitCode: r.exit ?? (r.error ? 1 : 0),
        ...(r.error ? { error: r.error } : {}),
        files: Array.isArray(r.files) ? r.files.filter((f) => typeof f === 'string') : [],
      });
      const waiter: Waiter = {
        reply: (line) => {
          try {
            reply = JSON.parse(line) as Reply;
          } catch {
            reply = { error: 'the session sent a reply it could not read', exit: null, files: [] };
          }
          grace = setTimeout(() => done(fromReply(reply!)), STDERR_GRACE_MS);
        },
        stderrMark: () => {
          if (reply) done(fromReply(reply));
          else {
            // the marker on stderr came first: wait for the reply
            waiter.stderrMark = () => {};
            const prev = waiter.reply;
            waiter.reply = (line) => {
              prev(line);
              done(fromReply(reply!));
            };
          }
        },
        ended: (code, signal, startError) =>
          done({
            exitCode: code,
            signal,
            sessionEnded: true,
            ...(startError ? { startError } : {}),
            ...(reply ? { files: fromReply(reply).files } : {}),
          }),
      };
      this.waiter = waiter;
      const timer = setTimeout(() => {
        timedOut = true;
        this.stop();
      }, timeoutMs);
      const onAbort = () => this.stop();
      req.signal?.addEventListener('abort', onAbort, { once: true });
      child.stdin.write(JSON.stringify({ code }) + '\n');
    });
  }
}

/** The run's code sessions, shared through the run's context (the actions set it; the code executor reads it). */
export const CODE_SESSIONS = contextVar<CodeSessions>('codeSessions');

/**
 * The sessions of a run, one per language, started at the first cell. A sub-flow shares its
 * caller's unless its command says `"session": "own"`. `cells` counts the cells run in the
 * run (journaled in checkpoints): a resumed run whose earlier cells are gone says so once.
 */
export class CodeSessions {
  private readonly sessions = new Map<SessionLanguage, CodeSession>();
  private cells: Record<string, number> = {};
  private readonly lost = new Set<string>();

  constructor(private readonly o: Omit<CodeSessionOptions, 'language'>) {}

  session(language: SessionLanguage): CodeSession {
    let s = this.sessions.get(language);
    if (!s) {
      s = new CodeSession({ ...this.o, language });
      this.sessions.set(language, s);
    }
    return s;
  }

  /** A cell ran (or a resumed run reused its journaled result without running it). */
  counted(language: string, reused = false): void {
    this.cells[language] = (this.cells[language] ?? 0) + 1;
    if (reused && !this.sessions.get(language as SessionLanguage)?.alive) this.lost.add(language);
  }

  /** Whether the next cell must be told that what earlier cells defined is gone (told once). */
  takeLost(language: string): boolean {
    if (this.sessions.get(language as SessionLanguage)?.alive) return false;
    const lost = this.lost.delete(language);
    return lost;
  }

  checkpoint(): Record<string, number> {
    return { ...this.cells };
  }

  /** A resumed run: cells counted before the checkpoint ran in a process that is gone. */
  restore(cells: Record<string, number> | undefined): void {
    this.cells = { ...(cells ?? {}) };
    for (const [language, n] of Object.entries(this.cells))
      if (n > 0 && !this.sessions.get(language as SessionLanguage)?.alive) this.lost.add(language);
  }

  close(): void {
    for (const s of this.sessions.values()) s.close();
    this.sessions.clear();
  }
}
