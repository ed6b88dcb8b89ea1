// A memory folder that lasts across runs (--memory-dir DIR, or the SOP's memory_dir): the
// top-level memory files (plan, logs, code_library...) live there instead of in the run folder,
// and so does the code library (library.py/library.js), copied into each run's workspace at the
// start (so code imports it as before) and back after every save. One run uses a folder at a
// time: a lock file names its process; a lock whose process is gone is taken over. Each run
// appends a header to the logs file, so the runs' lines stay apart. A memory file made from the
// inputs (the mission from --goal) follows a new run's inputs; the old content goes to the logs.
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { EngineError, type MessagePart, opt, say } from '../../shared/errors.js';
import { readNoFollow, writeNoFollow } from './workspace.js';
import { replacePlainFile } from '../../shared/workspace/safe-file.js';
import { MAX_MEMORY_FILE_BYTES } from './memory-files.js';

export const MEMORY_LOCK = 'memory.lock';
/** The code library modules kept in the memory folder. */
export const LIBRARY_MODULES = ['library.py', 'library.js'];

export class MemoryDirError extends EngineError {
  constructor(message: string | readonly MessagePart[]) {
    super(message, 'MEMORY_DIR');
    this.name = 'MemoryDirError';
  }
}

/** The folder a --memory-dir or memory_dir value names (relative to `base`, ~ for the home folder). */
export function resolveMemoryDir(dir: string, base = process.cwd()): string {
  const expanded = dir === '~' ? homedir() : dir.startsWith('~/') ? join(homedir(), dir.slice(2)) : dir;
  return resolve(base, expanded);
}

interface LockInfo {
  pid: number;
  host: string;
  time: string;
  run?: string;
}

function readLock(file: string): LockInfo | undefined {
  try {
    const info = JSON.parse(readFileSync(file, 'utf8')) as Partial<LockInfo>;
    if (typeof info.pid !== 'number') return undefined;
    return { pid: info.pid, host: String(info.host ?? ''), time: String(info.time ?? ''), run: info.run };
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Folders locked by runs of this process (a second run in the same process is refused too). */
const heldHere = new Set<string>();

/** Take the memory folder for one run (creating it); returns the function that releases it. */
export function lockMemoryDir(dir: string, runId: string): () => void {
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new MemoryDirError(
      say`${opt('memoryDir')} ${dir}: cannot create it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  if (!statSync(dir).isDirectory()) throw new MemoryDirError(say`${opt('memoryDir')} ${dir}: not a folder`);
  const file = join(dir, MEMORY_LOCK);
  const busy = (h: LockInfo) =>
    new MemoryDirError(
      `memory folder ${dir} is in use by ${h.run ? `run ${h.run}, ` : ''}process ${h.pid}${h.host !== hostname() ? ` on ${h.host}` : ''} (since ${h.time}); ` +
        `wait for it to finish, or delete ${file} if you are sure it is gone`,
    );
  if (heldHere.has(dir)) throw busy(readLock(file) ?? { pid: process.pid, host: hostname(), time: '' });
  const mine: LockInfo = { pid: process.pid, host: hostname(), time: new Date().toISOString(), run: runId };
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(mine) + '\n');
  try {
    linkSync(tmp, file); // atomic: fails when a lock exists
    unlinkSync(tmp);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      unlinkSync(tmp);
      throw err;
    }
    const holder = readLock(file);
    if (holder && (holder.host !== hostname() || alive(holder.pid))) {
      unlinkSync(tmp);
      throw busy(holder);
    }
    renameSync(tmp, file); // a stale lock (its process is gone, or unreadable): taken over
  }
  heldHere.add(dir);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    heldHere.delete(dir);
    const info = readLock(file);
    if (info && info.pid === process.pid && info.run === runId) {
      try {
        unlinkSync(file);
      } catch {
        // already gone
      }
    }
  };
}

/** Append the run's header to the logs file of the memory folder. */
export function appendRunHeader(dir: string, header: string): void {
  const file = join(dir, 'logs.md');
  let before = '';
  try {
    before = readFileSync(file, 'utf8');
  } catch {
    // a first run
  }
  writeNoFollow(file, `${before.trim() === '' ? '' : '\n'}${header}\n`, true, 'logs.md');
}

/** Copy the code library of the memory folder into a new run's workspace. */
export function libraryIntoWorkspace(dir: string, workspace: string): void {
  for (const m of LIBRARY_MODULES) {
    const from = join(dir, m);
    const to = join(workspace, m);
    if (existsSync(from) && statSync(from).isFile() && !existsSync(to)) {
      mkdirSync(workspace, { recursive: true });
      copyFileSync(from, to);
    }
  }
}

/** Copy a saved module of the code library from the workspace back to the memory folder. */
export function libraryToMemoryDir(workspace: string, dir: string, module: string): void {
  if (!LIBRARY_MODULES.includes(module)) return;
  const from = join(workspace, module);
  if (!existsSync(from)) return;
  writeNoFollow(join(dir, module), readFileSync(from, 'utf8'), false, module);
}

/** The initial contents that input-made memory files of the folder were last given (see followInputs). */
export const MEMORY_INITIAL = 'memory-initial.json';

/** A memory file whose initial content is made from the run's inputs (e.g. "mission": "{{goal}}"). */
export interface InputMadeFile {
  name: string;
  file: string;
  /** Its initial content, rendered with this run's inputs. */
  initial: string;
}

/** A memory file a new run's inputs replaced, and what it held before. */
export interface ReplacedFile {
  name: string;
  file: string;
  previous: string;
}

function readInitialRecord(dir: string): Record<string, string> {
  try {
    const parsed = JSON.parse(readNoFollow(join(dir, MEMORY_INITIAL), MEMORY_INITIAL)) as unknown;
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === 'string'));
  } catch {
    return {};
  }
}

function readIfThere(file: string): string | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return readNoFollow(file, undefined, MAX_MEMORY_FILE_BYTES);
  } catch {
    return undefined; // not a plain file: MemoryFiles refuses it when read, and it is left alone here
  }
}

/**
 * A memory file made from the inputs (the scientist's mission from --goal) follows a new run's
 * inputs: when they give it a new initial content, the file is replaced by it and its previous
 * content is appended to the logs file under a header saying so; the same initial content
 * leaves the file alone, with whatever the runs wrote to it. The folder records the initial
 * contents it gave (memory-initial.json); a folder without a record compares with the file.
 * Call before the memory files are created. Returns the files replaced.
 */
export function followInputs(dir: string, files: InputMadeFile[], logsFile: string, run: { id: string; time: string }): ReplacedFile[] {
  if (files.length === 0) return [];
  const record = readInitialRecord(dir);
  const replaced: ReplacedFile[] = [];
  for (const f of files) {
    const current = readIfThere(f.file);
    if (current === undefined) continue; // a first run: created with the initial content as before
    const given = Object.prototype.hasOwnProperty.call(record, f.name) ? record[f.name] : current;
    if (given === f.initial) continue;
    replacePlainFile(f.file, f.initial);
    replaced.push({ name: f.name, file: f.file, previous: current });
  }
  if (replaced.length > 0) {
    let before = '';
    try {
      before = readNoFollow(logsFile, undefined, MAX_MEMORY_FILE_BYTES);
    } catch {
      // no logs yet
    }
    const entries = replaced.map(
      (r) =>
        `### ${r.name} replaced by run ${run.id}, ${run.time}: new inputs gave it new content; the previous ${r.name} was:\n\n` +
        `${r.previous.trimEnd()}\n`,
    );
    writeNoFollow(logsFile, `${before === '' || before.endsWith('\n') ? '' : '\n'}${entries.join('\n')}`, true, 'logs.md');
  }
  const next = { ...record, ...Object.fromEntries(files.map((f) => [f.name, f.initial])) };
  replacePlainFile(join(dir, MEMORY_INITIAL), JSON.stringify(next, null, 2) + '\n');
  return replaced;
}
