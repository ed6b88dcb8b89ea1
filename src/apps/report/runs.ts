// The runs `sop report DIR` compares with the targets (docs/validity.md#report): DIR is a run
// folder (its journal) or a sweep's output folder (results.jsonl and runs/). Only runs that are
// done (finished, at their turn limit or stopped by a budget) count; the SOP and its targets are
// the document the runs ran (the first run's journal), not the file as it may be now.
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EngineError } from '../../shared/errors.js';
import { JOURNAL_FILE } from '../../features/journal/writer.js';
import { loadRunRecord, type RunRecord } from '../../features/journal/record.js';
import type { Sop } from '../../format/sop/types.js';
import { RESULTS_FILE, isDone, readResults, type ResultLine } from '../sweep/results.js';
import { loadSopFile } from '../../api/loader/checked-load.js';

export interface ReportRun {
  key: string;
  /** The seed that pairs the arms' runs (a sweep's seed). */
  seed: number;
  /** The seed the run ran with, when it is not `seed` (an arm on independent seeds). */
  runSeed?: number;
  arm?: string;
  dir: string;
  status: string;
}

export interface ReportFolder {
  kind: 'run' | 'sweep';
  dir: string;
  runs: ReportRun[];
  /** Runs of the sweep that are not done (failed, interrupted), left out. */
  left: number;
  sop: Sop;
  /** The SOP file the runs were started from (absolute). */
  sopFile: string;
  /** Where the targets come from: the SOP file as it is now, or (when it cannot be read) the document the runs ran. */
  targetsFrom: 'file' | 'journal';
}

export class ReportError extends EngineError {
  constructor(message: string) {
    super(message, 'RESULTS');
    this.name = 'ReportError';
  }
}

/** A run folder's journal. */
export const runRecord = (dir: string): RunRecord => loadRunRecord(dir);

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** The folder of a sweep's run: OUT/runs/KEY when it is there (a moved sweep), else the path its line gives. */
function runDirOf(out: string, line: ResultLine): string {
  const local = join(out, 'runs', line.key);
  return existsSync(join(local, JOURNAL_FILE)) || line.run_dir === undefined ? local : line.run_dir;
}

/** The runs of DIR, a run folder or a sweep's output folder. */
export function readFolder(given: string): ReportFolder {
  const dir = resolve(given);
  if (!isDir(dir)) throw new ReportError(`${given}: not a folder; give a run folder or a sweep's --out folder`);
  if (existsSync(join(dir, RESULTS_FILE))) {
    const lines = [...readResults(dir).values()];
    const done = lines.filter((l) => isDone(l.status));
    if (done.length === 0)
      throw new ReportError(`${given}: no run of this sweep is done (${lines.length} in results.jsonl); run the sweep first`);
    const runs: ReportRun[] = done.map((l) => ({
      key: l.key,
      seed: l.seed,
      ...(l.run_seed !== undefined ? { runSeed: l.run_seed } : {}),
      ...(l.arm !== undefined ? { arm: l.arm } : {}),
      dir: runDirOf(dir, l),
      status: l.status,
    }));
    const first = runRecord(runs[0]!.dir);
    const sopFile = resolve(first.started.file);
    return {
      kind: 'sweep',
      dir,
      runs,
      left: lines.length - done.length,
      sopFile,
      ...withTargets(documentOf(first, runs[0]!.dir), sopFile),
    };
  }
  if (!existsSync(join(dir, JOURNAL_FILE)))
    throw new ReportError(`${given}: neither a run folder (${JOURNAL_FILE}) nor a sweep's folder (${RESULTS_FILE})`);
  const record = runRecord(dir);
  const run: ReportRun = { key: record.started.run_id, seed: record.started.seed, dir, status: record.status };
  const sopFile = resolve(record.started.file);
  return {
    kind: 'run',
    dir,
    runs: isDone(record.status) ? [run] : [],
    left: isDone(record.status) ? 0 : 1,
    sopFile,
    ...withTargets(documentOf(record, dir), sopFile),
  };
}

/**
 * The document the runs ran, with the targets of the SOP file as it is now: a target says what
 * the runs should reproduce, not how they run, so one moved or added since is compared without
 * running again (sop report --verify tells that the file changed). The journal's targets when the
 * file is gone or no longer valid.
 */
function withTargets(doc: Sop, sopFile: string): { sop: Sop; targetsFrom: 'file' | 'journal' } {
  try {
    const now = loadSopFile(sopFile).sop;
    const { targets: _old, ...rest } = doc;
    return { sop: { ...rest, ...(now.targets !== undefined ? { targets: now.targets } : {}) }, targetsFrom: 'file' };
  } catch {
    return { sop: doc, targetsFrom: 'journal' };
  }
}

function documentOf(record: RunRecord, dir: string): Sop {
  const doc = record.started.document;
  if (typeof doc !== 'object' || doc === null)
    throw new ReportError(`${dir}: its journal does not hold the SOP it ran (a journal of an older sop)`);
  return doc as Sop;
}
