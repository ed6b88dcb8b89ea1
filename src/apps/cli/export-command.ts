// sop export RUN --parquet DIR: one Parquet file per table of a run's population database
// (RUN/population.duckdb, built from the journal when missing or stale; src/api/results-db.ts).
import { exportParquet } from '../../api/results-db.js';

export interface ExportCommandOptions {
  dir: string;
  parquet: string;
}

export async function exportCommand(o: ExportCommandOptions): Promise<number> {
  const r = await exportParquet(o.dir, o.parquet);
  for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
  for (const f of r.files) process.stdout.write(`${f.file}  ${f.rows} row${f.rows === 1 ? '' : 's'}\n`);
  return 0;
}
