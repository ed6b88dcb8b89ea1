// The bounds of a query over a run's tables (`sop query --timeout --memory-limit`, the API's
// queryResults): the SQL is the user's own, so an endless or huge query is a hang, not an escape,
// but a viewer or a script that runs queries needs it to end. A query past its deadline is
// interrupted (DuckDB's connection.interrupt()), and one that needs more memory than its limit
// (DuckDB's memory_limit, set when the database is opened and locked with its other settings)
// fails; each ends in one line.
import { totalmem } from 'node:os';
import { EngineError } from '../shared/errors.js';
import { parseByteSize, showBytes } from '../shared/util/byte-size.js';

/** Seconds a query may run unless told. */
export const DEFAULT_QUERY_TIMEOUT_S = 60;

export interface QueryBounds {
  /** Milliseconds the query may run (default 60 s). */
  timeoutMs?: number;
  /** Memory DuckDB may use: bytes, or a size such as "2GB" (default a quarter of the machine's memory). */
  memoryLimit?: number | string;
}

export interface Bounds {
  timeoutMs: number;
  memoryBytes: number;
}

/** A quarter of the memory this process may have (the machine's, or its cgroup's when that is less). */
export function defaultQueryMemory(): number {
  const constrained = (process as { constrainedMemory?: () => number }).constrainedMemory?.() ?? 0;
  const total = constrained > 0 ? Math.min(constrained, totalmem()) : totalmem();
  return Math.floor(total / 4);
}

/** The bounds given, checked, with the defaults for those not given. */
export function queryBounds(o: QueryBounds = {}): Bounds {
  const timeoutMs = o.timeoutMs ?? DEFAULT_QUERY_TIMEOUT_S * 1000;
  if (!(Number.isFinite(timeoutMs) && timeoutMs > 0))
    throw new EngineError(`--timeout must be a number of seconds above 0 (got ${timeoutMs / 1000})`, 'OPTION');
  const memoryBytes = o.memoryLimit === undefined ? defaultQueryMemory() : parseByteSize(o.memoryLimit, '--memory-limit');
  return { timeoutMs, memoryBytes };
}

/** DuckDB's memory_limit setting for these bounds (in KiB: DuckDB reads the unit). */
export const memorySetting = (b: Bounds): string => `${Math.max(1, Math.floor(b.memoryBytes / 1024))}KiB`;

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

/** The one line of a query stopped by its bounds, or undefined for any other failure. */
export function boundsProblem(err: unknown, b: Bounds, timedOut: boolean): string | undefined {
  const text = err instanceof Error ? err.message : String(err);
  if (timedOut || /^INTERRUPT Error/.test(text))
    return `the query was stopped after ${seconds(b.timeoutMs)}, its deadline (--timeout SECONDS; default ${DEFAULT_QUERY_TIMEOUT_S})`;
  if (/^Out of Memory Error/.test(text))
    return `the query was stopped: it needs more memory than its limit of ${showBytes(b.memoryBytes)} (--memory-limit SIZE, such as 2GB; default a quarter of the machine's memory)`;
  return undefined;
}
