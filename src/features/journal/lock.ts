// One writer per run folder: a lock file names the process writing the journal. A lock whose
// process is gone (killed, crashed) is stale and taken over; a live one stops a second writer.
import { hostname } from 'node:os';
import { join } from 'node:path';
import { renameSync, unlinkSync, writeFileSync, linkSync } from 'node:fs';
import { readInputFile } from '../../shared/io/read-input-file.js';
import { JournalError } from './reader.js';
import { writeFailure } from '../../shared/io/disk-full.js';

export const LOCK_FILE = 'run.lock';

export interface LockInfo {
  pid: number;
  host: string;
  time: string;
}

function readLock(dir: string): LockInfo | undefined {
  return readLockFile(join(dir, LOCK_FILE));
}

function readLockFile(file: string): LockInfo | undefined {
  try {
    const info = JSON.parse(readInputFile(file, { maxBytes: 64 * 1024 })) as Partial<LockInfo>;
    if (typeof info.pid !== 'number') return undefined;
    return { pid: info.pid, host: String(info.host ?? ''), time: String(info.time ?? '') };
  } catch {
    return undefined;
  }
}

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The process holding the run folder, if it still runs (a lock from another host counts as held). */
export function lockHolder(dir: string): LockInfo | undefined {
  const info = readLock(dir);
  if (!info) return undefined;
  if (info.host !== hostname()) return info;
  if (info.pid === process.pid) return info;
  return processAlive(info.pid) ? info : undefined;
}

/** Take the run folder's lock; returns the function that releases it. */
export function acquireRunLock(dir: string): () => void {
  const file = join(dir, LOCK_FILE);
  const mine: LockInfo = { pid: process.pid, host: hostname(), time: new Date().toISOString() };
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, JSON.stringify(mine) + '\n');
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // not created
    }
    throw writeFailure(err, tmp); // files: a full disk names the file
  }
  try {
    linkSync(tmp, file); // atomic: fails if a lock exists
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
      unlinkSync(tmp);
      throw err;
    }
    const holder = lockHolder(dir);
    if (holder && holder.pid !== process.pid) {
      unlinkSync(tmp);
      throw inUse(dir, file, holder);
    }
    // A stale lock of a killed process is taken over by one process at a time (two resumes
    // started together both find it stale): under a second lock, checking again under it.
    const takeover = `${file}.takeover`;
    const other = grab(tmp, takeover, mine);
    if (other) {
      unlinkSync(tmp);
      throw inUse(dir, file, other);
    }
    try {
      const now = lockHolder(dir);
      if (now && now.pid !== process.pid) {
        unlinkSync(tmp);
        throw inUse(dir, file, now);
      }
      renameSync(tmp, file);
    } finally {
      unlinkSync(takeover);
    }
    return release(file);
  }
  unlinkSync(tmp);
  return release(file);
}

/** The run folder is another live process's. */
export class RunInUseError extends JournalError {
  constructor(
    message: string,
    readonly holder: LockInfo,
  ) {
    super(message);
  }
}

function inUse(dir: string, file: string, holder: LockInfo): RunInUseError {
  return new RunInUseError(
    `${dir} is in use by process ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''} (since ${holder.time}); ` +
      `wait for it to finish, or delete ${file} if you are sure it is gone`,
    holder,
  );
}

/** Take `lock` (a hard link to `tmp`); the process holding it when it is live, else undefined (taken). */
function grab(tmp: string, lock: string, mine: LockInfo): LockInfo | undefined {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      linkSync(tmp, lock);
      return undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const info = readLockFile(lock);
    if (info && info.pid !== mine.pid && (info.host !== mine.host || processAlive(info.pid))) return info;
    try {
      unlinkSync(lock); // left by a process killed while taking over
    } catch {
      // gone meanwhile
    }
  }
  return readLockFile(lock) ?? mine;
}

function release(file: string): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    try {
      const info = JSON.parse(readInputFile(file, { maxBytes: 64 * 1024 })) as LockInfo;
      if (info.pid === process.pid) unlinkSync(file);
    } catch {
      // already gone
    }
  };
}
