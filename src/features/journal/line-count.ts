// Duplicated and deleted journal lines: each top-level checkpoint line carries how many lines the
// writer wrote since the previous one (or since it opened the file: a resume's journal goes on
// after a `resumed` line), as `"lines": N`. A reader counts the lines between them again; a line
// duplicated or deleted by hand, or by a copy gone wrong, makes the two differ, and readers warn
// (sop resume, sop show, sop fork, sop view). The field is the file's, not the event's: readers
// take it off, so the events are the same as without it.

export const LINE_COUNT_FIELD = 'lines';

/** A checkpoint's line (a JSON object and its newline) with the count of the lines before it added. */
export function withLineCount(line: string, count: number): string {
  const end = line.lastIndexOf('}');
  return end === -1 ? line : `${line.slice(0, end)},"${LINE_COUNT_FIELD}":${count}${line.slice(end)}`;
}

/** A checkpoint whose count of lines before it is not what the journal holds. */
export interface Miscount {
  /** 1-based line number of the checkpoint. */
  line: number;
  /** What the writer counted. */
  written: number;
  /** What the journal holds. */
  found: number;
}

/** Counts lines between checkpoints as a journal is read, and notes checkpoints whose count differs. */
export class LineCounter {
  readonly miscounts: Miscount[] = [];
  /** `since`: lines already read since the last checkpoint (a reader that goes on where another stopped). */
  constructor(private since = 0) {}

  /** Lines read since the last checkpoint (or resume). */
  get sinceCheckpoint(): number {
    return this.since;
  }

  /** A line was read (`value`: its JSON object, when it is one); the count field is taken off a checkpoint. */
  add(value: Record<string, unknown> | undefined, line: number): void {
    if (value?.type === 'resumed') this.since = 0; // a resume's writer counts from its own first line
    if (value?.type !== 'checkpoint') {
      this.since++;
      return;
    }
    const written = value[LINE_COUNT_FIELD];
    delete value[LINE_COUNT_FIELD];
    if (typeof written === 'number' && written !== this.since) this.miscounts.push({ line, written, found: this.since });
    this.since = 0;
  }
}

/** The warning readers print about a checkpoint whose count of lines differs. */
export function miscountWarning(file: string, m: Miscount): string {
  const what = m.found > m.written ? `${m.found - m.written} more` : `${m.written - m.found} fewer`;
  return (
    `warning: ${file}:${m.line}: the journal holds ${what} line${Math.abs(m.found - m.written) === 1 ? '' : 's'} before this checkpoint ` +
    `than were written (${m.found}, written ${m.written}): a line was duplicated or deleted since the run wrote it`
  );
}
