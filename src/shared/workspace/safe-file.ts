// Opening files inside the run folder (workspace files, memory files) for an executor or the
// engine: only a regular file with a single link is read or written. A symbolic link
// (O_NOFOLLOW), a hard link (planted by code, it may be a file outside the folder), a named
// pipe, a socket or a device is refused; opens use O_NONBLOCK so a FIFO can never block the
// engine, and fstat after open checks the file actually opened. Reads are capped.
import {
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileKind, formatBytes } from '../io/read-input-file.js';
import { writeFailure } from '../io/disk-full.js';
import { EngineError } from '../errors.js';

/** At most this much of a file is read for an executor (1 MiB): more would not fit a prompt anyway. */
export const MAX_FILE_READ_BYTES = 1024 * 1024;

/** A file refused because of what it is (a link, a pipe, a device, too large). */
export class UnsafeFileError extends EngineError {
  constructor(
    readonly path: string,
    readonly reason: string,
  ) {
    super(`file "${path}" refused: ${reason}`, 'UNSAFE_FILE');
    this.name = 'UnsafeFileError';
  }
}

const DESCRIPTIONS: Record<string, string> = {
  ENOENT: 'no such file or folder',
  ENAMETOOLONG: 'the name is too long',
  ENOTDIR: 'a part of the path is a file, not a folder',
  EEXIST: 'a part of the path already exists as a file',
  EISDIR: 'it is a folder',
  ENOTEMPTY: 'the folder is not empty',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  EFBIG: 'the file is too large',
  EMLINK: 'too many links',
  ETXTBSY: 'the file is busy',
  EBUSY: 'the file is busy',
  EINVAL: 'invalid file name',
  ELOOP: 'it is a symbolic link',
  ENXIO: 'it is a named pipe or socket, not a regular file',
};

/** An ordinary error on a path (ENAMETOOLONG, ENOTDIR, ...), with the path as the agent gave it. */
export class FileAccessError extends EngineError {
  constructor(
    readonly path: string,
    /** The errno code, e.g. "ENOENT". */
    readonly errno: string,
    verb: string,
  ) {
    super(`cannot ${verb} "${path}": ${DESCRIPTIONS[errno] ?? errno} (${errno})`, 'FILE_ACCESS');
    this.name = 'FileAccessError';
  }
}

/**
 * The error to throw for a failure on `file` (shown as `label`): refusals and full disks as
 * they are, symbolic links (ELOOP from O_NOFOLLOW) and pipes without a reader (ENXIO) as
 * refusals, other errno errors as FileAccessError.
 */
export function fileFailure(err: unknown, file: string, label: string, verb: string): unknown {
  if (err instanceof UnsafeFileError || err instanceof FileAccessError) return err;
  const full = writeFailure(err, file);
  if (full !== err) return full;
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ELOOP') return new UnsafeFileError(label, 'it is a symbolic link');
  if (code === 'ENXIO') return new UnsafeFileError(label, 'it is a named pipe or socket, not a regular file');
  if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return new FileAccessError(label, code, verb);
  return err;
}

function checkPlain(st: Stats, label: string): void {
  const kind = fileKind(st);
  if (kind) throw new UnsafeFileError(label, `it is ${kind}, not a regular file`);
  if (st.nlink > 1) throw new UnsafeFileError(label, `it has ${st.nlink} hard links (a hard link may be a file outside the folder)`);
}

/** lstat, or undefined when nothing is there yet. */
function lstatIfAny(file: string): Stats | undefined {
  try {
    return lstatSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** Open `file` with O_NOFOLLOW | O_NONBLOCK and check, before and after opening, that it is a plain file. */
function openPlain(file: string, flags: number, label: string): number {
  const before = lstatIfAny(file);
  if (before) checkPlain(before, label); // a device or pipe is never even opened
  const fd = openSync(file, flags | constants.O_NOFOLLOW | constants.O_NONBLOCK, 0o644);
  try {
    checkPlain(fstatSync(fd), label); // swapped between lstat and open
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

function writeAll(fd: number, text: string): void {
  const buf = Buffer.from(text, 'utf8');
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}

/** Read a plain file (at most `maxBytes`). */
export function readPlainFile(file: string, label = basename(file), maxBytes = MAX_FILE_READ_BYTES): string {
  try {
    const fd = openPlain(file, constants.O_RDONLY, label);
    try {
      const size = fstatSync(fd).size;
      if (size > maxBytes) throw new UnsafeFileError(label, `it is ${size} bytes; at most ${formatBytes(maxBytes)} is read`);
      const chunks: Buffer[] = [];
      let total = 0;
      const block = Buffer.allocUnsafe(Math.min(Math.max(size + 1, 4096), 256 * 1024));
      for (;;) {
        const n = readSync(fd, block, 0, block.length, null);
        if (n === 0) break;
        total += n;
        if (total > maxBytes)
          throw new UnsafeFileError(label, `it is more than ${formatBytes(maxBytes)}; at most ${formatBytes(maxBytes)} is read`);
        chunks.push(Buffer.from(block.subarray(0, n)));
      }
      return Buffer.concat(chunks, total).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw fileFailure(err, file, label, 'read');
  }
}

/** Write (or append to) a plain file, creating it if missing; never truncates before the checks. */
export function writePlainFile(file: string, text: string, append: boolean, label = basename(file)): void {
  try {
    const fd = openPlain(file, constants.O_WRONLY | constants.O_CREAT | (append ? constants.O_APPEND : 0), label);
    try {
      if (!append) ftruncateSync(fd, 0);
      writeAll(fd, text);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    throw fileFailure(err, file, label, 'write');
  }
}

/**
 * Replace a file of the engine's own (a memory file put back from the journal) by a new plain
 * file: written next to it, then renamed over whatever is there (a link or pipe code planted is
 * replaced, never written through).
 */
export function replacePlainFile(file: string, text: string, label = basename(file)): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    try {
      unlinkSync(tmp);
    } catch {
      /* none left over */
    }
    const fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, 0o644);
    try {
      writeAll(fd, text);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      /* not created */
    }
    throw fileFailure(err, file, label, 'write');
  }
}
