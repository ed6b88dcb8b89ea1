// Reading a journal: every line in order (a torn last line is dropped, never fatal), and the
// effective history: when a run was resumed, what the earlier attempt wrote after the
// checkpoint it resumed from is void (it is redone), so the effective history is cut back there.
// A damaged line elsewhere is reported with its line number, not thrown: readers continue from
// the last good checkpoint before it (src/features/journal/record.ts).
import { EngineError } from '../../shared/errors.js';
import { closeSync, existsSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { RunEvent } from '../../core/runtime/events.js';
import { InputFileError, openInputFile } from '../../shared/io/read-input-file.js';
import { JOURNAL_FILE } from './writer.js';
import { SharedTextReader } from './shared-text.js';
import { PromptDecoder } from './prompts.js';
import { LineCounter, type Miscount } from './line-count.js';
import { describeJsonProblem } from '../../shared/util/json-syntax.js';

export class JournalError extends EngineError {
  constructor(message: string) {
    super(message, 'JOURNAL');
    this.name = 'JournalError';
  }
}

/** A line that is not a journal event (damaged on disk, edited by hand). */
export interface DamagedLine {
  /** 1-based line number in the file. */
  line: number;
  reason: string;
  /** Number of events read before it (its place among `events`). */
  at: number;
}

export interface JournalRead {
  file: string;
  /** Every complete, well-formed line, in order. */
  events: RunEvent[];
  /** Line number (1-based) of each event. */
  lines: number[];
  /** Complete lines that are not journal events, in order. */
  damaged: DamagedLine[];
  /** Checkpoints whose count of the lines before them differs from the file: a line duplicated or deleted. */
  miscounts: Miscount[];
  /** A torn last line (the process was killed while writing it) was dropped. */
  torn: boolean;
}

/** The journal file of a run folder (or the journal file itself). */
export function journalPath(dirOrFile: string): string {
  if (existsSync(dirOrFile) && statSync(dirOrFile).isDirectory()) return join(dirOrFile, JOURNAL_FILE);
  return dirOrFile;
}

class LineParser {
  readonly events: RunEvent[] = [];
  readonly lines: number[] = [];
  readonly damaged: DamagedLine[] = [];
  private readonly shared = new SharedTextReader(); // long texts written once
  private readonly prompts = new PromptDecoder(); // prompts written as deltas
  /** Lines between checkpoints, counted again (./line-count.ts). */
  readonly counter = new LineCounter();
  add(line: string, n: number): void {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      this.counter.add(undefined, n);
      this.damaged.push({
        line: n,
        reason: `damaged line (${describeJsonProblem(line, err).replace(/^line 1, /, '')})`, // never the line's text
        at: this.events.length,
      });
      return;
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value) || typeof (value as { type?: unknown }).type !== 'string') {
      this.counter.add(undefined, n);
      this.damaged.push({ line: n, reason: 'not a journal event (no "type")', at: this.events.length });
      return;
    }
    this.counter.add(value as Record<string, unknown>, n); // a checkpoint's count of the lines before it is taken off
    if (this.prompts.part(value as Record<string, unknown>)) return; // a system prompt, not an event
    this.prompts.read(value as Record<string, unknown>);
    try {
      this.shared.read(value as Record<string, unknown>);
    } catch (err) {
      this.damaged.push({ line: n, reason: (err as Error).message, at: this.events.length });
      return;
    }
    this.events.push(value as RunEvent);
    this.lines.push(n);
  }
}

export function parseJournal(text: string, file = JOURNAL_FILE): JournalRead {
  const p = new LineParser();
  const lines = text.split('\n');
  // A journal ends with a newline; anything after the last one is a write cut short.
  const tail = lines.pop()!;
  lines.forEach((line, i) => p.add(line, i + 1));
  return { file, events: p.events, lines: p.lines, damaged: p.damaged, miscounts: p.counter.miscounts, torn: tail !== '' };
}

/** The longest journal line: about V8's longest string (a whole save of a million agents is about 100 MB). */
const MAX_LINE_BYTES = 0x1fffffe8;

/** Where a stretch of the journal read by streamJournalLines ended. */
export interface JournalStretch {
  file: string;
  /** Byte offset just past the last whole line read (where the next read continues). */
  end: number;
  /** Whole lines read. */
  lines: number;
  /** The file goes on past `end` with a line not ended yet (torn by a kill, or being written). */
  torn: boolean;
}

/**
 * The lines of a journal file from byte `from` (a line start) to `until` (default: its end), a
 * block at a time: never read whole (it may exceed the memory a process has, or the longest
 * string), with no limit on its size. `onLine` gets each whole line (without its newline), its
 * 1-based number counted from `from`, and the offset just past it; it returns false to stop there.
 */
export function streamJournalLines(
  dir: string,
  o: { from?: number; until?: number },
  onLine: (line: string, n: number, end: number) => boolean | void,
): JournalStretch {
  const file = journalPath(dir);
  let fd: number;
  try {
    // files: the journal must be a regular file (a FIFO or device given as a run folder is refused)
    fd = openInputFile(file, { maxBytes: Infinity, what: 'a journal' });
  } catch (err) {
    if (!(err instanceof InputFileError)) throw err;
    throw new JournalError(
      err.errno === 'ENOENT'
        ? `${dir}: no ${JOURNAL_FILE} here; is it a run folder (sop runs lists them)?`
        : err.errno === 'EACCES'
          ? `${file}: cannot read (${err.errno})`
          : `${file}: ${err.reason}`,
    );
  }
  let n = 0;
  let pos = o.from ?? 0;
  let end = pos;
  const until = o.until ?? Infinity;
  /** The start of a line the block ended in (copied: the block is reused), and its bytes. */
  let carry: Buffer[] = [];
  let carried = 0;
  const block = Buffer.allocUnsafe(4 * 1024 * 1024);
  try {
    read: while (pos < until) {
      let got: number;
      try {
        got = readSync(fd, block, 0, Math.min(block.length, until - pos), pos);
      } catch (err) {
        throw new JournalError(`${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
      }
      if (got === 0) break;
      const base = pos;
      pos += got;
      let start = 0;
      for (;;) {
        const nl = block.indexOf(10, start);
        if (nl === -1 || nl >= got) {
          if (start < got) {
            carry.push(Buffer.from(block.subarray(start, got)));
            carried += got - start;
            // a line longer than the longest string cannot be an event: refused before it fills the memory
            if (carried > MAX_LINE_BYTES)
              throw new JournalError(
                `${file}:${n + 1}: the line is longer than ${MAX_LINE_BYTES >> 20} MiB, the longest a journal line can be`,
              );
          }
          break;
        }
        const line =
          carry.length > 0 ? Buffer.concat([...carry, block.subarray(start, nl)]).toString('utf8') : block.toString('utf8', start, nl);
        carry = [];
        carried = 0;
        end = base + nl + 1;
        start = nl + 1;
        if (onLine(line, ++n, end) === false) break read;
      }
    }
  } finally {
    closeSync(fd);
  }
  return { file, end, lines: n, torn: carried > 0 };
}

/**
 * The journal's first line, its run_started event (the SOP document the run ran), read alone:
 * the rest of the journal is not read.
 */
export function readRunStarted(dir: string): Extract<RunEvent, { type: 'run_started' }> {
  let text: string | undefined;
  streamJournalLines(dir, {}, (line) => {
    text = line;
    return false;
  });
  let e: unknown;
  try {
    e = text === undefined ? undefined : JSON.parse(text);
  } catch {
    e = undefined;
  }
  if ((e as { type?: unknown } | undefined)?.type !== 'run_started')
    throw new JournalError(`${journalPath(dir)}:1: the journal does not start with run_started, so there is nothing to continue`);
  return e as Extract<RunEvent, { type: 'run_started' }>;
}

/**
 * A checkpoint line at least this long (a population visit's whole save: about 113 MB at 1,000,000
 * agents) keeps its snapshot's `extensions` on disk, not in memory (see lazyField).
 */
export const LAZY_CHECKPOINT_BYTES = 1024 * 1024;
/** With `lazySteps`, a population_step line at least this long keeps its `actions` on disk. */
export const LAZY_STEP_BYTES = 64 * 1024;

/**
 * A long line's bulky field, as a getter that reads the line of the journal again each time it is
 * read, so a reader holding the whole history holds one of them at a time at most, not every one
 * the run wrote: a checkpoint's `snapshot.extensions` (what plugins saved: a population's whole
 * save), a population_step's `actions` (with `steps`). The journal is only appended to, so the
 * line stays where it was; if it is not there any more, a clear error.
 */
function lazyField(file: string, e: RunEvent, start: number, end: number, steps: boolean): void {
  const bytes = end - start - 1;
  let holder: Record<string, unknown>;
  let key: string;
  let pick: (again: Record<string, unknown>) => Record<string, unknown> | undefined;
  if (e.type === 'checkpoint' && bytes >= LAZY_CHECKPOINT_BYTES) {
    holder = e.snapshot as unknown as Record<string, unknown>;
    key = 'extensions';
    pick = (again) => (again.type === 'checkpoint' && again.turn === e.turn ? (again.snapshot as Record<string, unknown>) : undefined);
  } else if (steps && e.type === 'population_step' && bytes >= LAZY_STEP_BYTES) {
    holder = e;
    key = 'actions';
    pick = (again) =>
      again.type === 'population_step' && again.state === e.state && again.visit === e.visit && again.step === e.step ? again : undefined;
  } else return;
  if (typeof holder !== 'object' || holder === null || !(key in holder)) return;
  const what = e.type === 'checkpoint' ? `the checkpoint of turn ${e.turn}` : `step ${e.step} of population state "${e.state}"`;
  Object.defineProperty(holder, key, {
    enumerable: true,
    configurable: true,
    get(): unknown {
      let again: unknown;
      streamJournalLines(file, { from: start, until: end }, (line) => {
        try {
          again = JSON.parse(line);
        } catch {
          again = undefined;
        }
        return false;
      });
      const found = typeof again === 'object' && again !== null ? pick(again as Record<string, unknown>) : undefined;
      if (typeof found !== 'object' || found === null)
        throw new JournalError(`${file}: ${what} is no longer where it was read; the journal was rewritten`);
      return found[key];
    },
  });
}

/**
 * A journal file read a block at a time, one line at a time (streamJournalLines), every event
 * kept: for the readers that need the whole history at once. `lazy`: a long checkpoint's
 * extensions are read again from the file when used, not kept; `lazySteps`: so are a long
 * population step's actions (for readers that do not use them: a transcript, a summary).
 */
export function readJournal(dir: string, o: { lazy?: boolean; lazySteps?: boolean } = {}): JournalRead {
  const p = new LineParser();
  let start = 0;
  const file = journalPath(dir);
  const read = streamJournalLines(dir, {}, (line, n, end) => {
    const before = p.events.length;
    p.add(line, n);
    if (o.lazy && p.events.length > before) lazyField(file, p.events[before]!, start, end, o.lazySteps === true);
    start = end;
  });
  return {
    file: read.file,
    events: p.events,
    lines: p.lines,
    damaged: p.damaged,
    miscounts: p.counter.miscounts,
    torn: read.torn,
  };
}

/**
 * The history that counts: each `resumed` event cuts the events back to the checkpoint it
 * continued from (what followed it was an unfinished attempt, redone by the resume), or to the
 * run_started of a run killed before its first checkpoint. The `resumed` markers themselves
 * are left out.
 */
export function effectiveEvents(events: readonly RunEvent[]): RunEvent[] {
  return effectiveHistory({ events, lines: events.map((_, i) => i + 1), damaged: [] }).events;
}

export interface EffectiveHistory {
  events: RunEvent[];
  /** Line number of each event. */
  lines: number[];
  /** Damaged lines not voided by a later resume, each with its place in `events`. */
  damaged: Array<DamagedLine & { index: number }>;
}

/** effectiveEvents, keeping line numbers and the damaged lines that still count. */
export function effectiveHistory(read: {
  events: readonly RunEvent[];
  lines: readonly number[];
  damaged: readonly DamagedLine[];
}): EffectiveHistory {
  const out: RunEvent[] = [];
  const lines: number[] = [];
  let damaged: EffectiveHistory['damaged'] = [];
  let d = 0;
  const { events } = read;
  for (let k = 0; k <= events.length; k++) {
    // A damaged line sits before the k-th event: it is at this place of the effective history.
    while (d < read.damaged.length && read.damaged[d]!.at <= k) damaged.push({ ...read.damaged[d++]!, index: out.length });
    if (k === events.length) break;
    const e = events[k]!;
    if (e.type !== 'resumed') {
      out.push(e);
      lines.push(read.lines[k]!);
      continue;
    }
    let i = out.length - 1;
    while (i >= 0) {
      const c = out[i]!;
      if (c.type === 'checkpoint' && c.turn === e.from_turn) break;
      i--;
    }
    if (i < 0 && e.from_turn === 0 && out[0]?.type === 'run_started') i = 0; // killed before its first checkpoint: start over
    if (i < 0)
      throw new JournalError(`the journal says a run resumed from turn ${e.from_turn}, but has no checkpoint at that turn before it`);
    out.length = i + 1;
    lines.length = i + 1;
    // Damage after the checkpoint was in the attempt this resume redid: it no longer counts.
    damaged = damaged.filter((x) => x.index <= i);
  }
  return { events: out, lines, damaged };
}
