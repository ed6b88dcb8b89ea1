// RUN/population.duckdb: a run's population states as tables (docs/population.md#results),
// appended step by step from its journal as the run goes (src/api/results-writer.ts,
// results-journal.ts), and brought up to date by `sop query` and `sop export` before they read it
// (the journal's lines since it last read it). A database that is missing, not this module's or
// of another journal is built again from the whole journal, streamed, into a temporary file
// renamed over it, so a reader sees the old database or the new one. Queries open it read-only
// with every file access off (no reading, writing or attaching files, no extensions loaded or
// installed), and that setting locked.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EngineError } from '../shared/errors.js';
import { fileKind } from '../shared/io/read-input-file.js';
import { lockHolder } from '../features/journal/lock.js';
import { JOURNAL_FILE } from '../features/journal/writer.js';
import { isPopulationState } from '../features/population/state-spec.js';
import { catchUp, createTables, firstLine as journalFirstLine, ident, readPosition, type CatchUpOptions } from './results-journal.js';
import type { SopState } from '../format/sop/types.js';
import { boundsProblem, memorySetting, queryBounds, type Bounds, type QueryBounds } from './query-bounds.js';

export const RESULTS_DB = 'population.duckdb';

/** The tables of the database, in the order they are written and exported. */
export const RESULT_TABLES = ['run', 'agents', 'steps', 'actions', 'metrics', 'surveys'] as const;

export class ResultsError extends EngineError {
  constructor(message: string) {
    super(message, 'RESULTS');
    this.name = 'ResultsError';
  }
}

/** A text as a SQL string literal. */
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** Settings of every database this module opens: nothing is fetched, no extension is loaded on demand. */
const BASE_CONFIG = { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' };

/** Whether a SOP document has a population state. */
function hasPopulationStates(document: unknown): boolean {
  const states = (document as { states?: Record<string, SopState> } | undefined)?.states;
  return states !== undefined && Object.values(states).some((s) => isPopulationState(s));
}

const noPopulation = (dir: string) =>
  new ResultsError(`${dir}: this run has no population states, so it has no ${RESULTS_DB} (see docs/population.md#results)`);

export interface BuildResult {
  file: string;
  /** About a damaged journal, or populations that could not be loaded again (without a "warning: " prefix). */
  warnings: string[];
}

/** How a run without an end in its journal reads: running while a process holds its lock, else killed. */
const unfinishedStatus = (dir: string) => (): 'running' | 'killed' => (lockHolder(dir) ? 'running' : 'killed');

/** DuckDB's refusal of a file another process has open (a run appending its steps, a query catching up). */
const locked = (err: unknown) => /lock on file|Conflicting lock/i.test(err instanceof Error ? err.message : String(err));

/**
 * A database opened, tried again for a while when another process holds it (the run writing it
 * holds it only while it appends a step).
 */
async function openWaiting(file: string, config: Record<string, string>): Promise<DuckDBInstance> {
  for (let wait = 20, waited = 0; ; waited += wait, wait = Math.min(wait * 2, 500)) {
    try {
      return await DuckDBInstance.create(file, { ...BASE_CONFIG, ...config });
    } catch (err) {
      if (!locked(err) || waited > 60_000) throw err;
      await new Promise((r) => setTimeout(r, wait));
    }
  }
}

/**
 * Build RUN/population.duckdb from the run's whole journal, streamed (a temporary file renamed
 * into place).
 */
export async function buildResultsDb(dir: string, o: Partial<CatchUpOptions> = {}): Promise<BuildResult> {
  const started = journalFirstLine(dir);
  const file = join(dir, RESULTS_DB);
  refuseLink(file);
  const tmp = join(dir, `.${RESULTS_DB}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const cleanup = () => {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
  };
  let warnings: string[];
  try {
    const db = await DuckDBInstance.create(tmp, { ...BASE_CONFIG, enable_external_access: 'false' });
    try {
      const c = await db.connect();
      try {
        await createTables(c);
        warnings = await catchUp(c, dir, { unfinished: unfinishedStatus(dir), ...o });
        const states = Object.keys((await readPosition(c))?.states ?? {});
        if (states.length === 0 && !hasPopulationStates(started.document)) throw noPopulation(dir);
        await c.run('CHECKPOINT');
      } finally {
        c.closeSync();
      }
    } finally {
      db.closeSync();
    }
    rmSync(`${file}.wal`, { force: true }); // never another database's log beside the new one
    renameSync(tmp, file);
  } catch (err) {
    cleanup();
    throw err;
  }
  cleanup();
  return { file, warnings };
}

/**
 * Bring RUN/population.duckdb up to date with the journal: the lines written since it last read
 * it are read and appended (src/api/results-journal.ts); a database that is missing, not one this
 * module wrote, or of another journal (a shorter one, another run's) is built again whole.
 */
export async function updateResultsDb(dir: string, o: Partial<CatchUpOptions> = {}): Promise<BuildResult> {
  const file = join(dir, RESULTS_DB);
  refuseLink(file);
  let size: number;
  try {
    size = statSync(join(dir, JOURNAL_FILE)).size;
  } catch {
    journalFirstLine(dir); // a folder that is no run folder is told as the journal reader tells it
    throw new ResultsError(`${dir}: no ${JOURNAL_FILE} here; is it a run folder (sop runs lists them)?`);
  }
  if (!existsSync(file)) return buildResultsDb(dir, o);
  const unfinished = o.unfinished ?? unfinishedStatus(dir);
  let db: DuckDBInstance;
  try {
    db = await openWaiting(file, { enable_external_access: 'false' });
  } catch (err) {
    if (locked(err)) throw new ResultsError(`${file}: in use by another process for more than a minute (${firstLine(err)})`);
    return buildResultsDb(dir, o); // not a database at all
  }
  let again = false;
  let warnings: string[] = [];
  try {
    const c = await db.connect();
    try {
      const pos = await readPosition(c);
      const status = pos ? String((await c.runAndReadAll('SELECT status FROM run')).getRowsJS()[0]?.[0]) : '';
      if (!pos || size < pos.bytes || (pos.run && journalFirstLine(dir).run_id !== pos.run.run_id)) again = true;
      else if (size > pos.bytes || (o.retryAgents !== false && !pos.agentsLoaded) || (!pos.finished && status !== unfinished()))
        warnings = await catchUp(c, dir, { ...o, unfinished });
    } finally {
      c.closeSync();
    }
  } finally {
    db.closeSync();
  }
  return again ? buildResultsDb(dir, o) : { file, warnings };
}

/**
 * Opens the database read-only; `locked`: with file access off and the settings locked (for the
 * caller's SQL, under the memory limit of `bounds`).
 */
async function openDb(file: string, locked: boolean, bounds?: Bounds): Promise<{ db: DuckDBInstance; c: DuckDBConnection }> {
  const db = await openWaiting(file, {
    access_mode: 'READ_ONLY',
    ...(bounds ? { memory_limit: memorySetting(bounds) } : {}),
    ...(locked ? { enable_external_access: 'false', lock_configuration: 'true' } : {}),
  });
  try {
    return { db, c: await db.connect() };
  } catch (err) {
    db.closeSync();
    throw err;
  }
}

/** Open a run's database read-only, brought up to date with its journal first. */
async function openRun(
  dir: string,
  locked: boolean,
  bounds?: Bounds,
): Promise<{ db: DuckDBInstance; c: DuckDBConnection; warnings: string[] }> {
  const ready = await updateResultsDb(dir);
  const { db, c } = await openDb(ready.file, locked, bounds);
  return { db, c, warnings: ready.warnings };
}

/** A database file that is a symbolic link (somewhere outside the run folder) is refused. */
function refuseLink(file: string): void {
  try {
    if (lstatSync(file).isSymbolicLink())
      throw new ResultsError(`${file}: is a symbolic link; ${RESULTS_DB} must be a file of the run folder`);
  } catch (err) {
    if (err instanceof ResultsError) throw err;
  }
}

/** A value of a query's result: JSON-safe (a whole number past 2^53 as text, a date as text). */
export type Cell = string | number | boolean | null | Cell[] | { [key: string]: Cell };

export interface QueryResult {
  columns: string[];
  rows: Cell[][];
  warnings: string[];
}

/** The first line of a DuckDB error (its message, without the caret lines). */
function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return text
    .replace(/^Failed to extract statements: /, '')
    .split('\n')[0]!
    .trim();
}

/**
 * Run the caller's SQL on a run's database (read-only); the result of its last statement. The
 * statements run within `bounds` (default 60 s and a quarter of the machine's memory): past
 * either, the query is stopped with a ResultsError of one line.
 */
export async function queryResults(dir: string, sql: string, bounds: QueryBounds = {}): Promise<QueryResult> {
  if (sql.trim() === '') throw new ResultsError('no SQL given');
  const b = queryBounds(bounds);
  const { db, c, warnings } = await openRun(dir, true, b);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    c.interrupt();
  }, b.timeoutMs);
  const failed = (err: unknown) => new ResultsError(boundsProblem(err, b, timedOut) ?? firstLine(err));
  try {
    let statements;
    try {
      statements = await c.extractStatements(sql);
    } catch (err) {
      throw failed(err);
    }
    let reader;
    for (let i = 0; i < statements.count; i++) {
      try {
        reader = await (await statements.prepare(i)).runAndReadAll();
      } catch (err) {
        throw failed(err);
      }
    }
    if (!reader) throw new ResultsError('no SQL statement given');
    const js = reader.getRowsJS();
    const json = reader.getRowsJson();
    const rows = js.map((r, i) => r.map((v, j) => cell(v, json[i]![j])));
    return { columns: reader.columnNames(), rows, warnings };
  } finally {
    clearTimeout(timer);
    c.closeSync();
    db.closeSync();
  }
}

function cell(js: unknown, json: unknown): Cell {
  if (typeof js === 'bigint') return Number.isSafeInteger(Number(js)) ? Number(js) : js.toString();
  if (js === null || typeof js === 'number' || typeof js === 'string' || typeof js === 'boolean') return js;
  return json as Cell;
}

export interface ExportResult {
  files: Array<{ table: string; file: string; rows: number }>;
  warnings: string[];
}

/**
 * The export folder must be a folder of its own or not exist yet: a symbolic link (even to a
 * folder), a file or a device is refused in one line and nothing is written through it.
 */
function checkExportFolder(outDir: string, out: string): void {
  let st;
  try {
    st = lstatSync(out);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // made below
    throw new ResultsError(`${outDir}: cannot use it as the export folder (${(err as NodeJS.ErrnoException).code ?? firstLine(err)})`);
  }
  if (st.isSymbolicLink())
    throw new ResultsError(`${outDir}: is a symbolic link; give the export folder itself (nothing is written through a link)`);
  if (!st.isDirectory())
    throw new ResultsError(
      `${outDir}: is ${fileKind(st) ?? 'not a folder'}, not a folder; give a folder, or a path that does not exist yet`,
    );
}

/**
 * Write one Parquet file per table into `outDir` (each through a temporary file of a random name,
 * renamed into place: a link planted at a table's name is replaced, never written through).
 */
export async function exportParquet(dir: string, outDir: string): Promise<ExportResult> {
  const out = resolve(outDir);
  checkExportFolder(outDir, out);
  // only this module's own statements run here, so file access stays on (COPY writes the files)
  const { db, c, warnings } = await openRun(dir, false);
  const files: ExportResult['files'] = [];
  try {
    try {
      mkdirSync(out, { recursive: true });
    } catch (err) {
      throw new ResultsError(`${outDir}: cannot make the folder (${(err as NodeJS.ErrnoException).code ?? firstLine(err)})`);
    }
    checkExportFolder(outDir, out); // made in the meantime as something else
    for (const table of RESULT_TABLES) {
      const file = join(out, `${table}.parquet`);
      const tmp = join(out, `.${table}.${randomBytes(8).toString('hex')}.tmp`);
      try {
        await c.run(`COPY ${ident(table)} TO ${literal(tmp)} (FORMAT parquet)`);
        renameSync(tmp, file);
      } catch (err) {
        rmSync(tmp, { force: true });
        throw new ResultsError(`${file}: ${firstLine(err)}`);
      }
      const n = await c.runAndReadAll(`SELECT count(*) FROM ${ident(table)}`);
      files.push({ table, file, rows: Number(n.getRowsJS()[0]![0]) });
    }
  } finally {
    c.closeSync();
    db.closeSync();
  }
  return { files, warnings };
}
