// `sop report DIR` (docs/validity.md#report): the SOP's targets against a run or a sweep. Each
// target is measured in every run that is done (./measure.ts) and compared across seeds by the
// validity feature (src/features/validity); the report is printed, written to DIR/report.md and
// to a `validity` table: in OUT/sweep.duckdb for a sweep, in RUN/population.duckdb for a run.
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';
import { RESULTS_DB, queryResults } from '../../api/results-db.js';
import { evaluateTarget } from '../../features/validity/evaluate.js';
import type { TargetResult } from '../../features/validity/types.js';
import { readResults } from '../sweep/results.js';
import { SWEEP_DB, sweepTables, writeTables } from '../sweep/sweep-db.js';
import { measureTarget } from './measure.js';
import { readFolder, type ReportFolder } from './runs.js';
import { reportMarkdown, reportText, validityTable } from './render.js';

export const REPORT_FILE = 'report.md';

export interface Report {
  folder: ReportFolder;
  results: TargetResult[];
  /** The terminal's text. */
  text: string;
  /** Files written (report.md, the database). */
  written: string[];
  warnings: string[];
}

/** Compares the folder's runs with its SOP's targets. */
export async function evaluateFolder(folder: ReportFolder): Promise<TargetResult[]> {
  const results: TargetResult[] = [];
  for (const [name, t] of Object.entries(folder.sop.targets ?? {})) {
    const { observation, notes } = await measureTarget(folder, t);
    const r = evaluateTarget(name, t, observation);
    const all = [...(r.note ? [r.note] : []), ...new Set(notes)];
    results.push({
      ...r,
      note: all.length === 0 ? null : all.slice(0, 5).join('; ') + (all.length > 5 ? `; and ${all.length - 5} more` : ''),
    });
  }
  return results;
}

/** Builds, prints and writes the report of DIR. */
export async function report(dir: string, o: { write?: boolean } = {}): Promise<Report> {
  const folder = readFolder(dir);
  const warnings: string[] = [];
  const targets = Object.keys(folder.sop.targets ?? {});
  if (targets.length === 0) warnings.push(`${folder.sop.name} declares no "targets": nothing to compare (docs/validity.md#targets)`);
  if (folder.runs.length === 0)
    warnings.push(`${dir}: the run is not done (status ${folder.left > 0 ? 'not finished' : 'unknown'}); nothing measured`);
  if (folder.left > 0 && folder.kind === 'sweep') warnings.push(`${folder.left} runs of the sweep are not done and are left out`);
  const results = await evaluateFolder(folder);
  const arms = [...new Set(folder.runs.map((r) => r.arm).filter((a) => a !== undefined))];
  const independent = folder.runs.some((r) => r.runSeed !== undefined);
  const about = [
    `${folder.kind === 'sweep' ? 'sweep' : 'run'} ${folder.dir}`,
    `SOP ${folder.sop.name} (${folder.sopFile}); targets from ${folder.targetsFrom === 'file' ? 'the SOP file as it is now' : "the runs' journal (the SOP file cannot be read now)"}`,
    `${folder.runs.length} run${folder.runs.length === 1 ? '' : 's'} done, seeds ${seedList(folder.runs.map((r) => r.seed))}`,
    ...(arms.length > 0 ? [`arms ${arms.join(', ')} on ${independent ? 'independent seeds' : 'common random numbers'}`] : []),
  ];
  const text = reportText(results, about.join('\n'));
  const written: string[] = [];
  if (o.write !== false) {
    const md = join(folder.dir, REPORT_FILE);
    writeFileAtomic(md, reportMarkdown(results, folder.sop.name, about));
    written.push(md);
    const db = await writeValidity(folder, results, warnings);
    if (db) written.push(db);
  }
  return { folder, results, text, written, warnings };
}

/** The validity table: in the sweep's database (made from results.jsonl when missing) or the run's. */
async function writeValidity(folder: ReportFolder, results: TargetResult[], warnings: string[]): Promise<string | undefined> {
  if (folder.kind === 'sweep') {
    const file = join(folder.dir, SWEEP_DB);
    await writeTables(file, [...sweepTables([...readResults(folder.dir).values()]), validityTable(results)]);
    return file;
  }
  try {
    await queryResults(folder.dir, 'SELECT 1'); // built when missing or stale
  } catch (err) {
    warnings.push(`no validity table: ${(err as Error).message}`);
    return undefined;
  }
  const file = join(folder.dir, RESULTS_DB);
  await writeTables(file, [validityTable(results)]);
  return file;
}

/** Seeds as ranges: 1-20, 25. */
function seedList(seeds: readonly number[]): string {
  const s = [...new Set(seeds)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    parts.push(j > i ? `${s[i]}-${s[j]}` : String(s[i]));
    i = j + 1;
  }
  return parts.join(', ') || 'none';
}
