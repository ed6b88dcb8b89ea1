// The run folders a viewer serves, found once when it starts (a run folder, or every run folder
// under an output folder), and what the list page says about each.
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { loadRunRecord, type RunStatusName } from '../../features/journal/record.js';
import { readJournal } from '../../features/journal/reader.js';
import { JOURNAL_FILE } from '../../features/journal/writer.js';
import type { RunEvent } from '../../core/runtime/events.js';

export interface ServedRun {
  /** The folder's name: the only run name a URL may carry. */
  id: string;
  /** Its real path. */
  dir: string;
}

/** The run folder itself (when it holds a journal), or the run folders under it. */
export function findRuns(target: string, single: boolean): ServedRun[] {
  if (single) {
    const root = realpathSync(resolve(target));
    return [{ id: basename(root), dir: root }];
  }
  let root: string;
  let entries;
  try {
    root = realpathSync(resolve(target));
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return []; // the output folder went away (or is not there yet): no runs
  }
  const out: ServedRun[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue; // symlinks to folders elsewhere are not served
    const dir = join(root, entry.name);
    if (existsSync(join(dir, JOURNAL_FILE))) out.push({ id: entry.name, dir });
  }
  return out;
}

export interface RunInfo {
  id: string;
  sop: string;
  status: RunStatusName | 'damaged';
  turns: number;
  started: string;
  tokens: { prompt: number; completion: number; calls: number };
  /** Cost in dollars, when the journal or usage.json knows it. */
  cost?: number;
  /** Models of the run without a price: its cost is unknown (a run with neither is not priced: the mock). */
  unpriced?: boolean;
  /** The run it was forked from, and at which turn. */
  forkedFrom?: { run_id: string; turn: number };
  error?: string;
  /** The effective history (what the run page shows). */
  events: RunEvent[];
  /** How often it was resumed (a resume rewrites the history a page shows: the page reloads). */
  resumes: number;
}

/** The run as its journal tells it; a journal the record cannot load is shown as far as it reads. */
export function runInfo(run: ServedRun): RunInfo {
  let events: RunEvent[];
  let status: RunInfo['status'];
  let turns: number;
  let error: string | undefined;
  let resumes = 0;
  try {
    const r = loadRunRecord(run.dir);
    events = r.effective;
    resumes = r.all.filter((e) => e.type === 'resumed').length;
    status = r.status;
    turns = r.turns;
    error = r.finished?.error ?? (r.damage ? r.damage.reason : r.lineWarnings[0]?.replace(/^warning: /, ''));
  } catch (err) {
    try {
      const all = readJournal(run.dir, { lazy: true }).events; // a whole save stays on disk until the page uses it
      resumes = all.filter((e) => e.type === 'resumed').length;
      events = all.filter((e) => e.type !== 'resumed');
    } catch {
      events = [];
    }
    status = 'damaged';
    turns = 0;
    error = (err as Error).message;
  }
  const started = events[0]?.type === 'run_started' ? events[0] : undefined;
  const tokens = { prompt: 0, completion: 0, calls: 0 };
  for (const e of events) {
    if (e.type !== 'llm_call') continue;
    tokens.calls++;
    tokens.prompt += e.usage?.promptTokens ?? 0;
    tokens.completion += e.usage?.completionTokens ?? 0;
  }
  return {
    id: run.id,
    sop: started?.sop ?? '?',
    status,
    turns,
    started: started?.time ?? '',
    tokens,
    ...costOf(run.dir, events),
    ...(started?.forked_from ? { forkedFrom: { run_id: started.forked_from.run_id, turn: started.forked_from.turn } } : {}),
    error,
    events,
    resumes,
  };
}

/** The cost recorded with the usage (`cost` in dollars), and whether some model had no price, as `sop runs` reads them. */
function costOf(dir: string, events: readonly RunEvent[]): { cost?: number; unpriced?: boolean } {
  const of = (u: unknown): { cost?: number; unpriced?: boolean } => {
    const usage = (u ?? {}) as { cost?: unknown; unpriced_models?: unknown };
    return {
      ...(typeof usage.cost === 'number' ? { cost: usage.cost } : {}),
      ...(Array.isArray(usage.unpriced_models) && usage.unpriced_models.length > 0 ? { unpriced: true } : {}),
    };
  };
  const last = events[events.length - 1];
  if (last?.type === 'run_finished' && typeof (last.usage as { cost?: unknown }).cost === 'number') return of(last.usage);
  if (last?.type !== 'run_finished') {
    // a running or killed run: its cost so far, from its last checkpoint
    for (let i = events.length - 1; i >= 0; i--) {
      const e = events[i]!;
      if (e.type === 'checkpoint') return of(e.snapshot.usage);
    }
  }
  if (last?.type === 'run_finished') {
    const fromJournal = of(last.usage);
    if (fromJournal.unpriced) return fromJournal;
  }
  try {
    const file = join(dir, 'usage.json');
    if (statSync(file).size > 1024 * 1024) return {};
    return of(JSON.parse(readFileSync(file, 'utf8')));
  } catch {
    return {};
  }
}
