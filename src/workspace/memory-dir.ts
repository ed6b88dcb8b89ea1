// A memory folder that lasts across runs (--memory-dir DIR, or the SOP's memory_dir): the
// top-level memory files (plan, logs, code_library...) live there instead of in the run folder,
// and so does the code library (library.py/library.js), copied into each run's workspace at the
// start (so code imports it as before) and back after every save. One run uses a folder at a
// time: a lock file names its process; a lock whose process is gone is taken over. Each run
// appends a header to the logs file, so the runs' lines stay apart.
import { copyFileSync, existsSync, linkSync, mkdirSync, readFileSync, renameSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { EngineError } from '../errors.js';
import { writeNoFollow } from './workspace.js';

export const MEMORY_LOCK = 'memory.lock';
/** The code library modules kept in the memory folder. */
export const LIBRARY_MODULES = ['library.py', 'library.js'];

export class MemoryDirError extends EngineError {
  constructor(message: string) {
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
      `options.memoryDir ${dir}: cannot create it (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
  if (!statSync(dir).isDirectory()) throw new MemoryDirError(`options.memoryDir ${dir}: not a folder`);
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
