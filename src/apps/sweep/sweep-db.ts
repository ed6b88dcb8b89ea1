// OUT/sweep.duckdb: a sweep as tables (docs/sweep.md#results), written at the end of `sop sweep`
// from results.jsonl: `sweep` (one row per run: its key, seed, arm, inputs, status) and
// `sweep_metrics` (each run's final population metrics, one row per state and metric); `sop
// report` adds `validity` (docs/validity.md). The sweep's tables are written into a temporary
// file renamed over the old one; a table added later (validity) is replaced in place.
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { EngineError } from '../../shared/errors.js';
import type { ResultLine } from './results.js';

export const SWEEP_DB = 'sweep.duckdb';

export type SqlType = 'VARCHAR' | 'BIGINT' | 'INTEGER' | 'DOUBLE' | 'BOOLEAN' | 'JSON';
export interface TableSpec {
  name: string;
  columns: ReadonlyArray<readonly [string, SqlType]>;
  rows: ReadonlyArray<ReadonlyArray<unknown>>;
}

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const CONFIG = { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false', enable_external_access: 'false' };

async function writeTable(c: DuckDBConnection, t: TableSpec): Promise<void> {
  await c.run(`CREATE OR REPLACE TABLE ${ident(t.name)} (${t.columns.map(([n, ty]) => `${ident(n)} ${ty}`).join(', ')})`);
  if (t.rows.length === 0) return;
  const a = await c.createAppender(t.name);
  try {
    for (const r of t.rows) {
      t.columns.forEach(([, type], j) => {
        const v = r[j];
        if (v === null || v === undefined) a.appendNull();
        else if (type === 'BIGINT') a.appendBigInt(BigInt(Math.trunc(Number(v))));
        else if (type === 'INTEGER') a.appendInteger(Math.trunc(Number(v)));
        else if (type === 'DOUBLE') a.appendDouble(Number(v));
        else if (type === 'BOOLEAN') a.appendBoolean(v === true);
        else a.appendVarchar(typeof v === 'string' ? v : JSON.stringify(v));
      });
      a.endRow();
    }
    a.flushSync();
  } finally {
    a.closeSync();
  }
}

/** Writes (or replaces) tables in a DuckDB file, made when missing. */
export async function writeTables(file: string, tables: readonly TableSpec[]): Promise<void> {
  try {
    const db = await DuckDBInstance.create(file, CONFIG);
    try {
      const c = await db.connect();
      try {
        for (const t of tables) await writeTable(c, t);
        await c.run('CHECKPOINT');
      } finally {
        c.closeSync();
      }
    } finally {
      db.closeSync();
    }
  } catch (err) {
    if (err instanceof EngineError) throw err;
    throw new EngineError(
      `${file}: cannot write the tables ${tables.map((t) => t.name).join(', ')} (${(err as Error).message.split('\n')[0]})`,
      'RESULTS',
    );
  }
}

/** The sweep's tables from its result lines. */
export function sweepTables(lines: readonly ResultLine[]): TableSpec[] {
  const sweep: TableSpec = {
    name: 'sweep',
    columns: [
      ['key', 'VARCHAR'],
      ['seed', 'BIGINT'],
      ['arm', 'VARCHAR'],
      ['run_seed', 'BIGINT'],
      ['repeat', 'INTEGER'],
      ['row', 'INTEGER'],
      ['model', 'VARCHAR'],
      ['inputs', 'JSON'],
      ['status', 'VARCHAR'],
      ['turns', 'INTEGER'],
      ['final_state', 'VARCHAR'],
      ['error', 'VARCHAR'],
      ['run_dir', 'VARCHAR'],
      ['duration_ms', 'BIGINT'],
    ],
    rows: lines.map((r) => [
      r.key,
      r.seed,
      r.arm ?? null,
      r.run_seed ?? r.seed,
      r.repeat,
      r.row ?? null,
      r.model ?? null,
      r.inputs ?? {},
      r.status,
      r.turns,
      r.final_state ?? null,
      r.error ?? null,
      r.run_dir ?? null,
      r.duration_ms,
    ]),
  };
  const metrics: TableSpec = {
    name: 'sweep_metrics',
    columns: [
      ['key', 'VARCHAR'],
      ['seed', 'BIGINT'],
      ['arm', 'VARCHAR'],
      ['state', 'VARCHAR'],
      ['name', 'VARCHAR'],
      ['value', 'DOUBLE'],
    ],
    rows: lines.flatMap((r) =>
      Object.entries(r.metrics ?? {}).flatMap(([state, m]) =>
        Object.entries(m).map(([name, v]) => [r.key, r.seed, r.arm ?? null, state, name, v]),
      ),
    ),
  };
  return [sweep, metrics];
}

/** Writes OUT/sweep.duckdb from the sweep's lines (a temporary file renamed into place; `sop report` adds its validity table again). */
export async function writeSweepDb(out: string, lines: readonly ResultLine[]): Promise<string> {
  const file = join(out, SWEEP_DB);
  const tmp = join(out, `.${SWEEP_DB}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    await writeTables(tmp, sweepTables(lines));
    rmSync(`${file}.wal`, { force: true });
    renameSync(tmp, file);
  } finally {
    rmSync(tmp, { force: true });
    rmSync(`${tmp}.wal`, { force: true });
  }
  return file;
}
