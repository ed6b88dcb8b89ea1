// The journal writer: one JSON line per event, appended with a synchronous write before the run
// takes its next step, and flushed to disk (fsync) at each turn boundary (in the background)
// and around side effects (waiting for the disk). Opening an existing journal first cuts a torn last line (a write the kill
// interrupted), so appended lines never glue onto a fragment.
import { closeSync, existsSync, fsync, fsyncSync, ftruncateSync, openSync, readSync, fstatSync, writeSync } from 'node:fs';
import type { RunEvent } from '../runtime/events.js';
import type { Redactor } from '../util/redact.js';
import { SharedTextWriter } from './shared-text.js';

export const JOURNAL_FILE = 'journal.jsonl';

/**
 * Events after which the journal is flushed to disk before the run goes on: turn boundaries and
 * side effects. Every other line is written (so it survives the process being killed) and
 * reaches the disk with the next flush.
 */
const DURABLE = new Set<RunEvent['type']>(['resumed', 'effect_started', 'effect_finished', 'file_written', 'run_finished']);

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

  constructor(readonly file: string, redact: Redactor = (t) => t) {
    this.lines = new SharedTextWriter(redact);
    const existed = existsSync(file);
    this.fd = openSync(file, existed ? 'r+' : 'a');
    this.cut = existed ? cutTornTail(this.fd) : 0;
    if (existed) {
      // Reopen in append mode now that the tail is clean.
      closeSync(this.fd);
      this.fd = openSync(file, 'a');
    }
  }

  /** Listener: journal every event except streamed deltas. */
  readonly append = (event: RunEvent): void => {
    if (event.type === 'delta' || this.fd === undefined) return;
    writeAll(this.fd, Buffer.from(this.lines.line(event) + '\n', 'utf8'));
    if (DURABLE.has(event.type)) fsyncSync(this.fd);
    else if (FLUSHED_IN_BACKGROUND.has(event.type)) this.flushInBackground();
  };

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
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = undefined;
  }
}

function writeAll(fd: number, buf: Buffer): void {
  let off = 0;
  while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
}
