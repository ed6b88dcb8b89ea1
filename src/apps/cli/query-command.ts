// sop query RUN "SQL": the user's SQL over a run's population tables (RUN/population.duckdb, built
// from the journal when missing or stale; src/api/results-db.ts), printed as an aligned table,
// CSV (--csv) or JSON (--json). The database is opened read-only with file access off, and the
// query stopped past --timeout SECONDS (default 60) or --memory-limit SIZE (src/api/query-bounds.ts).
import { queryResults, type Cell } from '../../api/results-db.js';
import { terminalSafe } from '../../shared/util/terminal-text.js';

export interface QueryCommandOptions {
  dir: string;
  sql: string;
  format: 'table' | 'csv' | 'json';
  /** Milliseconds the query may run (default 60 s). */
  timeoutMs?: number;
  /** Memory the query may use, such as "2GB" (default a quarter of the machine's memory). */
  memoryLimit?: string;
}

export async function queryCommand(o: QueryCommandOptions): Promise<number> {
  const r = await queryResults(o.dir, o.sql, {
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    ...(o.memoryLimit !== undefined ? { memoryLimit: o.memoryLimit } : {}),
  });
  for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
  const out =
    o.format === 'json' ? jsonText(r.columns, r.rows) : o.format === 'csv' ? csvText(r.columns, r.rows) : tableText(r.columns, r.rows);
  process.stdout.write(out);
  return 0;
}

/** A cell as text: NULL for null, JSON for lists and structs. */
function text(c: Cell, nullText: string): string {
  if (c === null) return nullText;
  if (typeof c === 'string') return c;
  if (typeof c === 'number' || typeof c === 'boolean') return String(c);
  return JSON.stringify(c);
}

/** Columns aligned (numbers to the right), a rule under the header, then the row count. */
export function tableText(columns: readonly string[], rows: readonly Cell[][]): string {
  // one line per row: line breaks and tabs in a cell are shown as \n and \t, control characters made visible
  const flat = (s: string) => terminalSafe(s.replace(/\r?\n/g, '\\n').replace(/\t/g, '\\t'));
  const head = columns.map(flat);
  const body = rows.map((r) => r.map((c) => flat(text(c, 'NULL'))));
  const numeric = columns.map((_, j) => rows.length > 0 && rows.every((r) => r[j] === null || typeof r[j] === 'number'));
  const width = columns.map((_, j) => Math.max(head[j]!.length, ...body.map((r) => r[j]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, j) => (numeric[j] ? c.padStart(width[j]!) : c.padEnd(width[j]!)))
      .join('  ')
      .trimEnd();
  const rule = width.map((w) => '-'.repeat(w)).join('  ');
  return [line(head), rule, ...body.map(line), `(${rows.length} row${rows.length === 1 ? '' : 's'})`].join('\n') + '\n';
}

/** RFC 4180: a header row, fields quoted when they hold a comma, a quote or a line break; NULL is empty. */
export function csvText(columns: readonly string[], rows: readonly Cell[][]): string {
  const field = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s);
  return [columns, ...rows.map((r) => r.map((c) => text(c, '')))].map((r) => r.map(field).join(',')).join('\r\n') + '\r\n';
}

/** One JSON array of row objects (a repeated column name gets ":1", ":2"...). */
export function jsonText(columns: readonly string[], rows: readonly Cell[][]): string {
  const seen = new Map<string, number>();
  const keys = columns.map((c) => {
    const n = seen.get(c) ?? 0;
    seen.set(c, n + 1);
    return n === 0 ? c : `${c}:${n}`;
  });
  return JSON.stringify(rows.map((r) => Object.fromEntries(keys.map((k, j) => [k, r[j]!])))) + '\n';
}
