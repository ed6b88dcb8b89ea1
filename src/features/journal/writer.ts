// The journal writer: one JSON line per event, written a step at a time. A step's lines are kept
// in memory and written in one `write` at its checkpoint (the `checkpoint` event ends a turn, at
// any sub-flow depth), so a killed process leaves whole steps and a resume continues from the
// last one. Lines that must be on disk before the run goes on are written at once with whatever
// the step holds so far, and flushed to disk (fsync), waiting for it: a side effect's
// `effect_started` (before the effect happens), its result, a memory file's content, a resume,
// the end. Opening an existing journal first cuts a torn last line (a write the kill
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
import type { RunEvent } from '../../core/runtime/events.js';
import type { Redactor } from '../../shared/util/redact.js';
import { SharedTextWriter } from './shared-text.js';
import { PromptEncoder } from './prompts.js';
import { withLineCount } from './line-count.js';
import { DiskFullError, isDiskFull } from '../../shared/io/disk-full.js';

/**
 * Space kept aside next to the journal while a run writes it: when the disk fills up, deleting
 * it makes room for the run_finished line that records the run as interrupted (resumable).
 */
export const RESERVE_FILE = '.journal-reserve';
const RESERVE_BYTES = 64 * 1024;

export const JOURNAL_FILE = 'journal.jsonl';

/**
 * Events written at once (with the lines of the step before them) and flushed to disk (fsync)
 * before the run goes on: side effects, a resume, the end.
 */
const DURABLE = new Set<string>(['resumed', 'effect_started', 'effect_cancelled', 'effect_finished', 'file_written', 'run_finished']);

/**
 * Events written at once (with the lines of the step before them), without waiting for the disk:
 * a paid LLM call about to be sent, a batch's progress while the run waits for it, and a local
 * model's progress while it thinks (`sop view` shows it as it comes). A kill
 * needs only the write (the operating system keeps it), so a resume knows the call was made even
 * when its reply was lost.
 */
const WRITTEN_AT_ONCE = new Set<string>(['llm_call_started', 'batch', 'llm_progress']);

/**
 * Step boundaries: the step's lines are written in one write, and flushed to disk without
 * waiting (group commit): a killed process needs only the write; the fsync, which only matters
 * if the machine itself goes down, runs in the background, at most one at a time, and any flush
 * above waits for the disk. `run_started` is a boundary of its own, so a run killed during its
 * first turn can start over.
 */
const BOUNDARY = new Set<string>(['checkpoint', 'run_started']);

/**
 * An LLM call that took at least this long is written soon after it returns (at the next turn of
 * the event loop, with whatever else the step holds by then), so a kill later in the step does
 * not make a resume pay for it again. Fast calls (a cassette, a mock) wait for the checkpoint.
 */
export const SLOW_CALL_MS = 100;

/** Background fsyncs at step boundaries begin at most this often (see flushInBackground). */
export const GROUP_COMMIT_MS = 50;

type Obj = Record<string, unknown>;

/** The event itself, or the one `subflow` events wrap (at any depth). */
function innermost(e: RunEvent): Obj {
  let cur = e as unknown as Obj;
  for (let d = 0; d < 32 && cur.type === 'subflow' && typeof cur.event === 'object' && cur.event !== null; d++) cur = cur.event as Obj;
  return cur;
}

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
  /** Lines of the step in progress, not written yet (each ends with a newline). */
  private pending: string[] = [];
  /** Lines given to the file since the last top-level checkpoint, or since it was opened (./line-count.ts). */
  private sinceCheckpoint = 0;
  /** A write of the pending lines is scheduled (after a slow LLM call). */
  private soon: NodeJS.Immediate | undefined;

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

  /** Bytes of whole lines in the file. */
  get bytes(): number {
    return this.size;
  }

  /**
   * Listener: journal every event except streamed deltas. Returns true when this event ended a
   * write (the step's lines are in the file), false while they wait for the step's end.
   */
  readonly append = (event: RunEvent): boolean => {
    if (event.type === 'delta' || this.fd === undefined) return false;
    const final = event.type === 'run_finished';
    if (this.full && !final) return false; // the run is stopping: nothing after the failed line, so no gap
    const inner = innermost(event);
    const kind = inner.type as string;
    const { text, lines } = this.encode(event, kind);
    this.pending.push(event.type === 'checkpoint' ? withLineCount(text, this.sinceCheckpoint) : text);
    this.sinceCheckpoint = event.type === 'checkpoint' ? 0 : this.sinceCheckpoint + lines;
    if (final) {
      this.writeFinal();
      return true;
    }
    if (DURABLE.has(kind)) {
      this.writePending();
      this.syncQuietly();
      return true;
    }
    if (BOUNDARY.has(kind)) {
      this.writePending();
      this.flushInBackground();
      return true;
    }
    if (WRITTEN_AT_ONCE.has(kind)) {
      this.writePending();
      return true;
    }
    if (kind === 'llm_call' && typeof inner.ms === 'number' && inner.ms >= SLOW_CALL_MS) this.writeSoon();
    return false;
  };

  /**
   * The journal lines of one event, redacted, each ending with a newline, and how many there are
   * (JSON never holds a raw newline, nor does redaction put one in).
   */
  private encode(event: RunEvent, kind: string): { text: string; lines: number } {
    if (kind === 'prompt') {
      const prompt = this.prompts.encode(event);
      if (prompt) {
        let text = '';
        for (const l of prompt) text += this.redact(JSON.stringify(l)) + '\n';
        return { text, lines: prompt.length };
      }
    }
    // A long reply is noted (as its line holds it) by both encoders that refer to it.
    return { text: this.lines.line(event, this.prompts) + '\n', lines: 1 };
  }

  /** Write the pending lines in one write; on failure they are cut back and dropped, and the run stops. */
  private writePending(): void {
    if (this.pending.length === 0) return;
    const text = this.pending.length === 1 ? this.pending[0]! : this.pending.join('');
    this.pending = [];
    // files: the disk is full. Every line before this step is whole; the run stops as
    // interrupted, and its run_finished line gets the reserved space.
    this.orStop(() => this.write(text));
  }

  /** The run_finished line, with the step's lines before it: when the disk is full, in the reserved space. */
  private writeFinal(): void {
    const finished = this.pending.pop()!;
    const text = this.pending.join('') + finished;
    this.pending = [];
    if (this.diskFull(() => this.write(text)) !== undefined) {
      this.releaseReserve();
      // The step's lines if they fit, else the run_finished line alone; with no room at all the
      // run reads as killed, and resumes the same way.
      for (const attempt of text === finished ? [finished] : [text, finished]) {
        try {
          this.write(attempt);
          break;
        } catch {
          /* next */
        }
      }
    }
    try {
      fsyncSync(this.fd!);
    } catch (err) {
      if (!isDiskFull(err)) throw err;
    }
  }

  /** Write the pending lines at the next turn of the event loop (a slow LLM call's reply, for one). */
  private writeSoon(): void {
    if (this.soon) return;
    this.soon = setImmediate(() => {
      this.soon = undefined;
      if (this.fd === undefined || this.full || this.pending.length === 0) return;
      const pending = this.pending;
      try {
        this.writePending();
      } catch {
        // Nothing throws to the run from here: the lines stay pending (the failed write was cut
        // back), and the step's next write reports the error.
        this.full = false;
        this.pending = [...pending, ...this.pending];
      }
    });
    this.soon.unref();
  }

  /** Write the text whole, or cut back what part of it was written and throw. */
  private write(text: string): void {
    try {
      this.size += writeAll(this.fd!, text);
    } catch (err) {
      try {
        ftruncateSync(this.fd!, this.size);
      } catch {
        /* the next writer cuts a torn tail anyway */
      }
      throw err;
    }
  }

  private syncQuietly(): void {
    this.orStop(() => fsyncSync(this.fd!));
  }

  /** Run `io`; when the disk is full, set `full` and return the error (any other error is thrown). */
  private diskFull(io: () => void): NodeJS.ErrnoException | undefined {
    try {
      io();
      return undefined;
    } catch (err) {
      if (!isDiskFull(err)) throw err;
      this.full = true;
      return err;
    }
  }

  /** Run `io`; when the disk is full, set `full` and throw DiskFullError (the run stops as interrupted). */
  private orStop(io: () => void): void {
    const err = this.diskFull(io);
    if (err !== undefined) throw new DiskFullError(this.file, err);
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
  /** When the last background fsync began (performance.now()). */
  private flushedAt = -Infinity;
  private flushTimer: NodeJS.Timeout | undefined;
  /**
   * Group commit: one background fsync at a time, and at most one every GROUP_COMMIT_MS; the
   * steps written meanwhile go with the next one. A run whose steps take longer (any real LLM)
   * has each step's fsync begin at its checkpoint.
   */
  private flushInBackground(): void {
    if (this.fd === undefined) return;
    if (this.flushing) {
      this.flushAgain = true;
      return;
    }
    const wait = this.flushedAt + GROUP_COMMIT_MS - performance.now();
    if (wait > 0) {
      this.flushTimer ??= setTimeout(() => {
        this.flushTimer = undefined;
        this.flushInBackground();
      }, wait);
      this.flushTimer.unref();
      return;
    }
    this.flushing = true;
    this.flushedAt = performance.now();
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

  /** Write the pending lines and flush the file to disk. */
  sync(): void {
    if (this.fd === undefined) return;
    this.writePending();
    fsyncSync(this.fd);
  }

  /** Write what the step holds so far (a run stopped between checkpoints), flush and close. */
  close(): void {
    if (this.fd === undefined) return;
    if (this.soon) clearImmediate(this.soon);
    this.soon = undefined;
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    try {
      if (!this.full) this.writePending();
    } catch (err) {
      if (!(err instanceof DiskFullError)) throw err; // the lines before the step are whole
    }
    this.pending = [];
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

/** Write all of `text` (the rest of a short write too); returns its length in bytes. */
export function writeAll(fd: number, text: string): number {
  const written = writeSync(fd, text);
  const bytes = Buffer.byteLength(text, 'utf8');
  if (written < bytes) {
    const buf = Buffer.from(text, 'utf8');
    let off = written;
    while (off < buf.length) off += writeSync(fd, buf, off, buf.length - off);
  }
  return bytes;
}
