// The journal writer: one JSON line per event, appended with a synchronous write before the run
// takes its next step, and flushed to disk (fsync) at each turn boundary (in the background)
// and around side effects (waiting for the disk). Opening an existing journal first cuts a torn last line (a write the kill
// interrupted), so appended lines never glue onto a fragment.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsync,
  fsyncSync,
  ftruncateSync,
  openSync,
  readSync,
  fstatSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import type { RunEvent } from '../runtime/events.js';
import type { Redactor } from '../util/redact.js';
import { SharedTextWriter } from './shared-text.js';
import { PromptEncoder } from './prompts.js';
import { DiskFullError, isDiskFull } from '../io/disk-full.js';

/**
 * Space kept aside next to the journal while a run writes it: when the disk fills up, deleting
 * it makes room for the run_finished line that records the run as interrupted (resumable).
 */
export const RESERVE_FILE = '.journal-reserve';
const RESERVE_BYTES = 64 * 1024;

export const JOURNAL_FILE = 'journal.jsonl';

/**
 * Events after which the journal is flushed to disk before the run goes on: turn boundaries and
 * side effects. Every other line is written (so it survives the process being killed) and
 * reaches the disk with the next flush.
 */
const DURABLE = new Set<RunEvent['type']>([
  'resumed',
  'effect_started',
  'effect_cancelled',
  'effect_finished',
  'file_written',
  'run_finished',
]);

/**
 * Turn boundaries are flushed without waiting (group commit): every line is already written to
 * the file, which is all a killed process needs; the fsync, which only matters if the machine
 * itself goes down, runs in the background, at most one at a time, and any flush above (before
 * a side effect, at the end) waits for the disk.
 */
const FLUSHED_IN_BACKGROUND = new Set<RunEvent['type']>(['checkpoint']);

/**
 * Cut everything after the last newline (a torn line). Returns the number of bytes removed.
 * Reads backwards in blocks, so a large journal is not read whole.
 */
export function cutTornTail(fd: number): number {
  const size = fstatSync(fd).size;
  if (size === 0) return 0;
  const block = Buffer.alloc(64 * 1024);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - block.length);
    const n = readSync(fd, block, 0, end - start, start);
    const at = block.subarray(0, n).lastIndexOf(10);
    if (at !== -1) {
      const keep = start + at + 1;
      if (keep < size) ftruncateSync(fd, keep);
      return size - keep;
    }
    end = start;
  }
  ftruncateSync(fd, 0);
  return size;
}

export class JournalWriter {
  private fd: number | undefined;
  /** Bytes of a torn last line cut when the journal was opened. */
  readonly cut: number;

  /** Long message texts are written once (see shared-text.ts). */
  private readonly lines: SharedTextWriter;
  /** Prompts are written as deltas, system prompts once (see prompts.ts). */
  private readonly prompts: PromptEncoder;
  private readonly redact: Redactor;
  /** Bytes of whole lines in the file (a failed write is cut back to this). */
  private size: number;
  private readonly reserve: string;
  private hasReserve = false;
  /** The disk filled up: only the run_finished line is still written. */
  private full = false;

  constructor(
    readonly file: string,
    redact: Redactor = (t) => t,
  ) {
    this.lines = new SharedTextWriter(redact);
    this.prompts = new PromptEncoder(redact);
    this.redact = redact;
    const existed = existsSync(file);
    this.fd = openSync(file, existed ? 'r+' : 'a');
    this.cut = existed ? cutTornTail(this.fd) : 0;
    if (existed) {
      // Reopen in append mode now that the tail is clean.
      closeSync(this.fd);
      this.fd = openSync(file, 'a');
    }
    this.size = fstatSync(this.fd).size;
    this.reserve = join(dirname(file), RESERVE_FILE);
    try {
      // Random bytes: a compressing file system would keep zeros in no space at all.
      writeFileSync(this.reserve, randomBytes(RESERVE_BYTES));
      this.hasReserve = true;
    } catch {
      // no room even for that: a full disk then ends the run without its run_finished line
    }
  }

  /** Listener: journal every event except streamed deltas. */
  readonly append = (event: RunEvent): void => {
    if (event.type === 'delta' || this.fd === undefined) return;
    const final = event.type === 'run_finished';
    if (this.full && !final) return; // the run is stopping: nothing after the failed line, so no gap
    const prompt = this.prompts.encode(event);
    const text = prompt ? prompt.map((l) => this.redact(JSON.stringify(l)) + '\n').join('') : this.lines.line(event) + '\n';
    const line = Buffer.from(text, 'utf8');
    try {
      this.write(line);
    } catch (err) {
      if (!isDiskFull(err)) throw err;
      this.full = true;
      // files: the disk is full. Every line before this one is whole; the run stops as
      // interrupted, and its run_finished line gets the reserved space.
      if (!final) throw new DiskFullError(this.file, err);
      this.releaseReserve();
      try {
        this.write(line);
      } catch {
        return; // no room at all: the run reads as killed, and resumes the same way
      }
    }
    if (DURABLE.has(event.type)) this.syncQuietly(final);
    else if (FLUSHED_IN_BACKGROUND.has(event.type)) this.flushInBackground();
  };

  /** Write one whole line, or cut back what part of it was written and throw. */
  private write(line: Buffer): void {
    try {
      writeAll(this.fd!, line);
      this.size += line.length;
    } catch (err) {
      try {
        ftruncateSync(this.fd!, this.size);
      } catch {
        /* the next writer cuts a torn tail anyway */
      }
      throw err;
    }
  }

  private syncQuietly(final: boolean): void {
    try {
      fsyncSync(this.fd!);
    } catch (err) {
      if (!isDiskFull(err)) throw err;
      if (final) return;
      this.full = true;
      throw new DiskFullError(this.file, err);
    }
  }

  private releaseReserve(): void {
    if (!this.hasReserve) return;
    this.hasReserve = false;
    try {
      unlinkSync(this.reserve);
    } catch {
      /* already gone */
    }
  }

  private flushing = false;
  private flushAgain = false;
  private flushInBackground(): void {
    if (this.fd === undefined) return;
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    this.flushing = true;
    const fd = this.fd;
    fsync(fd, () => {
      // Errors (e.g. the writer closed meanwhile, after its own synchronous flush) need nothing.
      this.flushing = false;
      if (this.flushAgain) {
        this.flushAgain = false;
        this.flushInBackground();
      }
    });
  }

  sync(): void {
    if (this.fd !== undefined) fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd === undefined) return;
    try {
      fsyncSync(this.fd);
    } catch (err) {
      if (!isDiskFull(err)) throw err; // every line was written; the disk will have it when it can
    }
    closeSync(this.fd);
    this.fd = undefined;
    this.releaseReserve();
  }
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}
