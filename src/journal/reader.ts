// Reading a journal: every line in order (a torn last line is dropped, never fatal), and the
// effective history: when a run was resumed, what the earlier attempt wrote after the
// checkpoint it resumed from is void (it is redone), so the effective history is cut back there.
import { EngineError } from '../errors.js';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { RunEvent } from '../runtime/events.js';
import { JOURNAL_FILE } from './writer.js';

export class JournalError extends EngineError {
  constructor(message: string) {
    super(message, 'JOURNAL');
    this.name = 'JournalError';
  }
}

export interface JournalRead {
  file: string;
  /** Every complete line, in order. */
  events: RunEvent[];
  /** A torn last line (the process was killed while writing it) was dropped. */
  torn: boolean;
}

/** The journal file of a run folder (or the journal file itself). */
export function journalPath(dirOrFile: string): string {
  if (existsSync(dirOrFile) && statSync(dirOrFile).isDirectory()) return join(dirOrFile, JOURNAL_FILE);
  return dirOrFile;
}

export function parseJournal(text: string, file = JOURNAL_FILE): JournalRead {
  const events: RunEvent[] = [];
  let torn = false;
  const lines = text.split('\n');
  // A journal ends with a newline; anything after the last one is a write cut short.
  const tail = lines.pop()!;
  if (tail !== '') torn = true;
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new JournalError(`${file}:${i + 1}: damaged line (${(err as Error).message}); only the last line of a journal may be incomplete`);
    }
    if (typeof value !== 'object' || value === null || typeof (value as { type?: unknown }).type !== 'string') {
      throw new JournalError(`${file}:${i + 1}: not a journal event (no "type")`);
    }
    events.push(value as RunEvent);
  });
  return { file, events, torn };
}

export function readJournal(dir: string): JournalRead {
  const file = journalPath(dir);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new JournalError(code === 'ENOENT'
      ? `${dir}: no ${JOURNAL_FILE} here; is it a run folder (sop runs lists them)?`
      : `${file}: cannot read (${code ?? (err as Error).message})`);
  }
  return parseJournal(text, file);
}

/**
 * The history that counts: each `resumed` event cuts the events back to the checkpoint it
 * continued from (what followed it was an unfinished attempt, redone by the resume), or to the
 * run_started of a run killed before its first checkpoint. The `resumed` markers themselves
 * are left out.
 */
export function effectiveEvents(events: readonly RunEvent[]): RunEvent[] {
  const out: RunEvent[] = [];
  for (const e of events) {
    if (e.type !== 'resumed') {
      out.push(e);
      continue;
    }
    let i = out.length - 1;
    while (i >= 0) {
      const c = out[i]!;
      if (c.type === 'checkpoint' && c.turn === e.from_turn) break;
      i--;
    }
    if (i < 0 && e.from_turn === 0 && out[0]?.type === 'run_started') i = 0; // killed before its first checkpoint: start over
    if (i < 0) throw new JournalError(`the journal says a run resumed from turn ${e.from_turn}, but has no checkpoint at that turn before it`);
    out.length = i + 1;
  }
  return out;
}
