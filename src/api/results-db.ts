// RUN/population.duckdb: a run's population states as tables (docs/population.md#results), built
// from its journal's effective history (a resumed run's voided lines never count), so it can
// always be built again: it is written at the end of a run with population states, and again
// by `sop query` and `sop export` when it is missing or older than the journal. A build writes a
// temporary file beside it and renames it over it, so a reader sees the old database or the new
// one. Queries open it read-only with every file access off (no reading, writing or attaching
// files, no extensions loaded or installed), and that setting locked.
import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection } from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { EngineError } from '../shared/errors.js';
import { fileKind } from '../shared/io/read-input-file.js';
import { damageWarning, loadRunRecord } from '../features/journal/record.js';
import { JOURNAL_FILE } from '../features/journal/writer.js';
import { agentsTable, populationResults } from '../features/population/results.js';
import { isPopulationState } from '../features/population/state-spec.js';
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

type SqlType = 'VARCHAR' | 'INTEGER' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN' | 'JSON';
interface Column {
  name: string;
  type: SqlType;
}

const cols = (spec: string): Column[] =>
  spec.split(',').map((c) => {
    const [name, type] = c.trim().split(' ');
    return { name: name!, type: type as SqlType };
  });

/** The fixed tables' columns (agents has the population's columns besides `state` and `id`). */
const SCHEMA = {
  run: cols(
    'run_id VARCHAR, sop VARCHAR, seed BIGINT, status VARCHAR, turns INTEGER, journal_bytes BIGINT, agents_loaded BOOLEAN, built VARCHAR',
  ),
  steps: cols('state VARCHAR, visit INTEGER, step INTEGER, turn INTEGER, clock VARCHAR, minute INTEGER, active INTEGER'),
  actions: cols(
    'state VARCHAR, visit INTEGER, step INTEGER, turn INTEGER, seq INTEGER, agent VARCHAR, name VARCHAR, args JSON, ok BOOLEAN, output VARCHAR, tier VARCHAR',
  ),
  metrics: cols('state VARCHAR, visit INTEGER, step INTEGER, name VARCHAR, value DOUBLE'),
  surveys: cols('state VARCHAR, visit INTEGER, step INTEGER, survey VARCHAR, agent VARCHAR, question VARCHAR, answer VARCHAR'),
};

/** A name as a SQL identifier. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
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

/** Build RUN/population.duckdb from the run's journal (a temporary file renamed into place). */
export async function buildResultsDb(dir: string): Promise<BuildResult> {
  const journal = join(dir, JOURNAL_FILE);
  let journalBytes = 0;
  try {
    journalBytes = statSync(journal).size;
  } catch {
    // loadRunRecord says what is wrong with the folder
  }
  const record = loadRunRecord(dir);
  const warnings = [...(record.damage ? [damageWarning(record.damage)] : []), ...record.lineWarnings].map((w) =>
    w.replace(/^warning: /, ''),
  );
  const results = populationResults(record.effective);
  if (results.states.size === 0 && !hasPopulationStates(record.started.document)) throw noPopulation(dir);
  const agents = await agentsTable(record.started.document, resolve(record.started.file), results.states);
  warnings.push(...agents.warnings);
  const file = join(dir, RESULTS_DB);
  refuseLink(file);
  const tmp = join(dir, `.${RESULTS_DB}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const cleanup = () => {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
  };
  try {
    const db = await DuckDBInstance.create(tmp, { ...BASE_CONFIG, enable_external_access: 'false' });
    try {
      const c = await db.connect();
      try {
        const run = [
          [
            record.started.run_id,
            record.started.sop,
            record.started.seed,
            record.status,
            record.turns,
            journalBytes,
            agents.missing.length === 0,
            new Date().toISOString(),
          ],
        ];
        await writeTable(c, 'run', SCHEMA.run, run);
        await writeTable(c, 'agents', agents.columns, agents.rows);
        const row =
          <T extends object>(schema: Column[]) =>
          (r: T) =>
            schema.map((col) => (r as Record<string, unknown>)[col.name]);
        await writeTable(c, 'steps', SCHEMA.steps, results.steps.map(row(SCHEMA.steps)));
        await writeTable(c, 'actions', SCHEMA.actions, results.actions.map(row(SCHEMA.actions)));
        await writeTable(c, 'metrics', SCHEMA.metrics, results.metrics.map(row(SCHEMA.metrics)));
        await writeTable(c, 'surveys', SCHEMA.surveys, results.surveys.map(row(SCHEMA.surveys)));
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

async function writeTable(c: DuckDBConnection, table: string, columns: Column[], rows: ReadonlyArray<ReadonlyArray<unknown>>) {
  await c.run(`CREATE TABLE ${ident(table)} (${columns.map((col) => `${ident(col.name)} ${col.type}`).join(', ')})`);
  if (rows.length === 0) return;
  const a = await c.createAppender(table);
  try {
    for (const r of rows) {
      columns.forEach((col, j) => append(a, col.type, r[j]));
      a.endRow();
    }
    a.flushSync();
  } finally {
    a.closeSync();
  }
}

function append(a: DuckDBAppender, type: SqlType, v: unknown): void {
  if (v === null || v === undefined) return a.appendNull();
  switch (type) {
    case 'INTEGER':
      return a.appendInteger(Number(v));
    case 'BIGINT':
      return a.appendBigInt(BigInt(v as number));
    case 'DOUBLE':
      return a.appendDouble(Number(v));
    case 'BOOLEAN':
      return a.appendBoolean(v === true);
    default:
      return a.appendVarchar(String(v));
  }
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

/** Whether the database must be built (again): missing, or older than the journal (openRun checks the rest). */
function stale(dir: string): boolean {
  try {
    return statSync(join(dir, RESULTS_DB)).mtimeMs < statSync(join(dir, JOURNAL_FILE)).mtimeMs;
  } catch {
    return true;
  }
}

/** The database of a run folder, built when it is missing or older than the journal. */
async function readyDb(dir: string): Promise<BuildResult & { journalBytes: number; built: boolean }> {
  let journalBytes: number;
  try {
    journalBytes = statSync(join(dir, JOURNAL_FILE)).size;
  } catch {
    loadRunRecord(dir); // a folder that is no run folder is told as the journal reader tells it
    throw new ResultsError(`${dir}: no ${JOURNAL_FILE} here; is it a run folder (sop runs lists them)?`);
  }
  const file = join(dir, RESULTS_DB);
  refuseLink(file);
  // the journal is read only to build: a fresh database answers at once, whatever the journal's size
  if (stale(dir)) return { ...(await buildResultsDb(dir)), journalBytes, built: true };
  return { file, warnings: [], journalBytes, built: false };
}

/**
 * Opens the database read-only; `locked`: with file access off and the settings locked (for the
 * caller's SQL, under the memory limit of `bounds`).
 */
async function openDb(file: string, locked: boolean, bounds?: Bounds): Promise<{ db: DuckDBInstance; c: DuckDBConnection }> {
  const db = await DuckDBInstance.create(file, {
    ...BASE_CONFIG,
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

/**
 * Open a run's database read-only, built first when it is missing or stale: older than the
 * journal, or built from another size of journal than there is now (a resume went on meanwhile).
 */
async function openRun(
  dir: string,
  locked: boolean,
  bounds?: Bounds,
): Promise<{ db: DuckDBInstance; c: DuckDBConnection; warnings: string[] }> {
  const ready = await readyDb(dir);
  let { db, c } = await openDb(ready.file, locked, bounds);
  let fresh = false;
  try {
    const [bytes, loaded] = (await c.runAndReadAll('SELECT journal_bytes, agents_loaded FROM run')).getRowsJS()[0] ?? [];
    // a population that could not be loaded (run from another folder) is tried, and told, again
    fresh = Number(bytes) === ready.journalBytes && (loaded === true || ready.built);
  } catch {
    // not a database this module wrote: built again
  }
  if (fresh) return { db, c, warnings: ready.warnings };
  c.closeSync();
  db.closeSync();
  const again = await buildResultsDb(dir);
  ({ db, c } = await openDb(again.file, locked, bounds));
  return { db, c, warnings: [...ready.warnings, ...again.warnings] };
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
