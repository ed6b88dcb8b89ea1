// The run folder: journal.jsonl (every event; src/features/journal), transcript.jsonl and transcript.md
// (derived from the events), usage.json (calls and tokens). Files are appended as the run goes,
// so a killed run keeps everything said up to that point; every line passes through the secret
// redactor. One process writes a run folder at a time (run.lock; a resume takes it before it
// reads the journal, and hands it over here).
import { closeSync, mkdirSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RunEvent } from '../../core/runtime/events.js';
import { makeRedactor, type Redactor } from '../../shared/util/redact.js';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';
import { acquireRunLock } from './lock.js';
import { markdownPiece, jsonlPiece, renderTranscript } from './transcript.js';
import { usageFileText } from './predicted.js';
import { GROUP_COMMIT_MS, JOURNAL_FILE, JournalWriter, writeAll } from './writer.js';
import { isDiskFull, writeFailure } from '../../shared/io/disk-full.js';

export function newRunId(sopName: string, now = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, '')
    .replace('T', '-');
  const slug =
    sopName
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .slice(0, 40) || 'sop';
  const rand = Math.random().toString(36).slice(2, 6);
  return `${stamp}-${slug}-${rand}`;
}

export class RunFolder {
  readonly dir: string;
  private readonly journal: JournalWriter;
  private readonly redact: Redactor;
  private readonly unlock: () => void;

  /**
   * A new run folder, or (with `existing`) a run folder being continued by `sop resume`: its
   * journal's torn last line is cut and its transcripts are rebuilt from the journal's
   * effective history before new events are appended.
   */
  constructor(
    outDir: string,
    readonly runId: string,
    redact: Redactor = makeRedactor(),
    existing?: { events: readonly RunEvent[]; unlock?: () => void },
  ) {
    this.dir = resolve(outDir, runId);
    try {
      mkdirSync(this.dir, { recursive: true });
    } catch (err) {
      throw writeFailure(err, this.dir);
    }
    this.redact = redact;
    // a resume took the lock before it read the journal; it is this folder's now
    this.unlock = existing?.unlock ?? acquireRunLock(this.dir);
    try {
      this.journal = new JournalWriter(join(this.dir, JOURNAL_FILE), redact);
    } catch (err) {
      this.unlock();
      throw err;
    }
    try {
      const { markdown, jsonl } = renderTranscript(existing?.events ?? []);
      replaceFile(this.path('transcript.md'), this.redact(markdown));
      replaceFile(this.path('transcript.jsonl'), this.redact(jsonl));
      // Kept open for the run: one write per message, not an open and a close.
      this.markdown = openSync(this.path('transcript.md'), 'a');
      this.jsonl = openSync(this.path('transcript.jsonl'), 'a');
    } catch (err) {
      this.journal.close(); // files: a full disk here leaves no lock or reserve behind
      this.unlock();
      throw err;
    }
  }

  private readonly markdown: number;
  private readonly jsonl: number;

  /** Bytes of whole lines in the journal (what it held when opened, before this run wrote to it). */
  get journalBytes(): number {
    return this.journal.bytes;
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  /** Transcript text not written yet. */
  private pendingMarkdown = '';
  private pendingJsonl = '';
  /** When the transcripts were last written (performance.now()), and the write scheduled since. */
  private transcriptsAt = -Infinity;
  private transcriptsTimer: NodeJS.Timeout | undefined;
  /** A scheduled write failed: thrown at the next event (its journal line written). */
  private failed: unknown;

  /**
   * Listener: journal every event (except streamed deltas) and derive the transcripts. The
   * journal is written a step at a time (src/features/journal/writer.ts); the transcripts follow its
   * writes, at most every GROUP_COMMIT_MS (a run of fast steps writes them a few steps at a time).
   */
  readonly onEvent = (event: RunEvent): void => {
    if (event.type === 'delta') return;
    const written = this.journal.append(event);
    const final = event.type === 'run_finished';
    if (this.failed !== undefined && !final) {
      const err = this.failed;
      this.failed = undefined;
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the write's own failure, as it was
      throw err;
    }
    const md = markdownPiece(event);
    if (md) this.pendingMarkdown += this.redact(md);
    const line = jsonlPiece(event);
    if (line) this.pendingJsonl += this.redact(line);
    if (written) {
      const wait = this.transcriptsAt + GROUP_COMMIT_MS - performance.now();
      if (final || wait <= 0) this.writeTranscripts(final);
      else
        this.transcriptsTimer ??= setTimeout(() => {
          this.transcriptsTimer = undefined;
          try {
            this.writeTranscripts(false);
          } catch (err) {
            this.failed = err;
          }
        }, wait).unref();
    }
    if (final)
      this.derived(this.path('usage.json'), true, () => writeFileSync(this.path('usage.json'), usageFileText(this.dir, event.usage)));
  };

  /**
   * The transcripts and usage.json are derived from the journal (sop resume and sop show write
   * them again), so a full disk here loses nothing: it stops the run, but not its last line.
   */
  private derived(file: string, final: boolean, write: () => void): void {
    try {
      write();
    } catch (err) {
      if (final && isDiskFull(err)) return;
      throw writeFailure(err, file);
    }
  }

  private writeTranscripts(final: boolean): void {
    if (this.transcriptsTimer) clearTimeout(this.transcriptsTimer);
    this.transcriptsTimer = undefined;
    this.transcriptsAt = performance.now();
    const md = this.pendingMarkdown;
    const jsonl = this.pendingJsonl;
    this.pendingMarkdown = '';
    this.pendingJsonl = '';
    if (md) this.derived(this.path('transcript.md'), final, () => writeAll(this.markdown, md));
    if (jsonl) this.derived(this.path('transcript.jsonl'), final, () => writeAll(this.jsonl, jsonl));
  }

  private closed = false;

  /** Flush and close (idempotent: Ctrl-C and the normal end may both close). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.journal.close();
    try {
      this.writeTranscripts(true); // a run stopped between checkpoints
    } catch {
      /* derived: sop show and sop resume write them again */
    }
    closeSync(this.markdown);
    closeSync(this.jsonl);
    this.unlock();
  }

  /** A new run refused before it started (nothing journaled): the folder goes, rather than stay as an empty, damaged run. */
  discard(): void {
    this.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Write a file whole, through a temporary file, so a kill leaves the old or the new one; a full disk names the file. */
function replaceFile(file: string, content: string): void {
  try {
    writeFileAtomic(file, content);
  } catch (err) {
    throw writeFailure(err, file);
  }
}
