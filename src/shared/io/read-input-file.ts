// Reading a file the user named (a SOP, a sub-SOP, an answers file, a cassette, an import
// config, a run folder's journal): it must be a regular file under a size cap. A device
// (/dev/zero, /dev/urandom), a named pipe, a socket or a directory is refused with one clear
// line before anything is read: a FIFO is opened with O_NONBLOCK, so it can never block the
// process, and fstat after open checks the file that was actually opened.
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { EngineError } from '../errors.js';

/** Default cap for input files: SOPs, answers, import configs (16 MiB). */
export const MAX_INPUT_BYTES = 16 * 1024 * 1024;

export class InputFileError extends EngineError {
  constructor(
    readonly file: string,
    readonly reason: string,
    /** The errno code (ENOENT, EACCES, EISDIR...), when there is one. */
    readonly errno?: string,
  ) {
    super(`${file}: ${reason}`, 'INPUT_FILE');
    this.name = 'InputFileError';
  }
}

export interface InputFileOptions {
  /** Refuse files larger than this many bytes (default MAX_INPUT_BYTES). */
  maxBytes?: number;
  /** What the file is, for the directory message (e.g. "a SOP file"): "is a directory, not a SOP file". */
  what?: string;
}

/** "16 MiB", "512 KiB", "300 bytes". */
export function formatBytes(n: number): string {
  if (n >= 1024 * 1024 && n % (1024 * 1024) === 0) return `${n / (1024 * 1024)} MiB`;
  if (n >= 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024} KiB`;
  return `${n} bytes`;
}

/** What a non-regular file is, in words ("a named pipe (FIFO)"), or undefined for a regular file. */
export function fileKind(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a named pipe (FIFO)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSymbolicLink()) return 'a symbolic link';
  return 'not a regular file';
}

function errnoReason(err: unknown, what: string): InputFileError['reason'] {
  const code = (err as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'file not found';
    case 'EISDIR':
      return `is a directory, not ${what}`;
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    case 'ELOOP':
      return 'too many symbolic links in the path';
    case 'ENXIO':
      return 'is a socket or device with nothing behind it, not a regular file';
    default:
      return `cannot read (${code ?? (err as Error).message})`;
  }
}

function refuseKind(file: string, st: Stats, what: string): never {
  const kind = fileKind(st)!;
  if (kind === 'a directory') throw new InputFileError(file, `is a directory, not ${what}`, 'EISDIR');
  throw new InputFileError(file, `is ${kind}, not a regular file`, 'ENOTREG');
}

function refuseSize(file: string, size: number, max: number): never {
  throw new InputFileError(file, `is ${size} bytes, over the limit of ${max} bytes (${formatBytes(max)})`, 'EFBIG');
}

/**
 * Check that `file` is a regular file of at most `maxBytes` (following symbolic links, which a
 * user may use for their own files) without opening it. Throws InputFileError.
 */
export function checkInputFile(file: string, o: InputFileOptions = {}): Stats {
  const max = o.maxBytes ?? MAX_INPUT_BYTES;
  const what = o.what ?? 'a file';
  let st: Stats;
  try {
    st = statSync(file);
  } catch (err) {
    throw new InputFileError(file, errnoReason(err, what), (err as NodeJS.ErrnoException).code);
  }
  if (!st.isFile()) refuseKind(file, st, what);
  if (st.size > max) refuseSize(file, st.size, max);
  return st;
}

/**
 * An open file descriptor (read-only, O_NONBLOCK) of a regular file under the cap, for a caller
 * that streams it (population files, edge lists); InputFileError otherwise. A device is never
 * opened; the file actually opened is checked again (fstat), so a file swapped for a FIFO between
 * the check and the open is refused too. The caller closes it.
 */
export function openInputFile(file: string, o: InputFileOptions = {}): number {
  const max = o.maxBytes ?? MAX_INPUT_BYTES;
  const what = o.what ?? 'a file';
  checkInputFile(file, o);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  } catch (err) {
    throw new InputFileError(file, errnoReason(err, what), (err as NodeJS.ErrnoException).code);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) refuseKind(file, st, what);
    if (st.size > max) refuseSize(file, st.size, max);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/** The bytes of a regular file under the cap; InputFileError otherwise (never blocks, never reads a device). */
export function readInputBuffer(file: string, o: InputFileOptions = {}): Buffer {
  const chunks: Buffer[] = [];
  let total = 0;
  streamInputFile(file, o, (chunk) => {
    chunks.push(Buffer.from(chunk));
    total += chunk.length;
  });
  return Buffer.concat(chunks, total);
}

/**
 * A regular file's bytes handed to `onChunk` a block at a time (the block is reused: copy what
 * is kept), as readInputBuffer checks and reads them; `maxBytes: Infinity` for no cap.
 */
export function streamInputFile(file: string, o: InputFileOptions & { blockBytes?: number }, onChunk: (chunk: Buffer) => void): void {
  const max = o.maxBytes ?? MAX_INPUT_BYTES;
  const what = o.what ?? 'a file';
  // a device is never even opened (opening some has effects); a file swapped for a pipe or device
  // between stat and open is refused
  const fd = openInputFile(file, o);
  try {
    let total = 0;
    const block = Buffer.allocUnsafe(Math.min(Math.max(fstatSync(fd).size + 1, 4096), o.blockBytes ?? 1024 * 1024));
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, block, 0, block.length, null);
      } catch (err) {
        throw new InputFileError(file, errnoReason(err, what), (err as NodeJS.ErrnoException).code);
      }
      if (n === 0) break;
      total += n;
      if (total > max) refuseSize(file, total, max); // grew while being read
      onChunk(block.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
}

/** The text (UTF-8) of a regular file under the cap; InputFileError otherwise. */
export function readInputFile(file: string, o: InputFileOptions = {}): string {
  return readInputBuffer(file, o).toString('utf8');
}
