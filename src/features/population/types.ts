// The population spec of a SOP state (schemas/population.schema.json, definitions.population) and
// the one error population code throws on purpose. A row is flat: column name -> string, number or
// true/false.
import { EngineError } from '../../shared/errors.js';

export type Value = string | number | boolean;
export type Row = Record<string, Value>;

/** One generated column: a declared marginal. */
export type ColumnSpec =
  | { categorical: Record<string, number> }
  | { choice: Array<string | number> }
  | { uniform: { min: number; max: number; round?: boolean } }
  | { normal: { mean: number; sd: number; min?: number; max?: number; round?: boolean } };

export interface GenerateSpec {
  /** How many rows. */
  n: number;
  /** Seed of every draw: the same seed gives the same rows. */
  seed: number;
  /** Columns in order (the id column comes first, before these). */
  columns: Record<string, ColumnSpec>;
}

export type SourceSpec = { file: string; format?: 'csv' | 'jsonl' } | { generate: GenerateSpec };

export interface StratifySpec {
  /** Columns whose values (joined by "|", in this order) name a stratum. */
  by: string[];
  /** Target share of each stratum (summing to 1); strata not named are left out. */
  shares: Record<string, number>;
  n: number;
  seed: number;
}

export type SampleSpec = { n: number; seed: number } | { stratify: StratifySpec };

export interface PopulationSpec {
  source: SourceSpec;
  /** The id column (default "id"); a generated source writes "a0".."aN-1" under it. */
  id?: string;
  /** Handlebars over the row: the agent's persona text. */
  persona?: string;
  sample?: SampleSpec;
  /** Members people play from a web page: a count (the first members) or their ids (docs/seats.md). */
  seats?: number | string[];
  /** A seat's deadline per step, in seconds (never past the straggler deadline). */
  seat_timeout_s?: number;
}

/** Separator of the values of several `stratify.by` columns in a `shares` key. */
export const STRATUM_SEPARATOR = '|';

export class PopulationError extends EngineError {
  constructor(message: string) {
    super(message, 'POPULATION');
    this.name = 'PopulationError';
  }
}

export const idColumnOf = (spec: PopulationSpec): string => spec.id ?? 'id';

/**
 * A column name or value from a data file as a message may show it: quoted when it is a plain name
 * (letters, digits, spaces and _ . - @ +, at most 64 characters), else undefined. An error never
 * quotes a line of a file it refused (/etc/passwd as a population: its first line would be the
 * one "column"), so anything else is described, never shown.
 */
export function plainName(s: string): string | undefined {
  return /^[\p{L}\p{N}_][\p{L}\p{N}_ .@+-]{0,63}$/u.test(s) ? `"${s}"` : undefined;
}

/** A name from a data file, quoted when it is plain (see plainName), else `what` (e.g. "a key that is not a plain name"). */
export const shownName = (s: string, what: string): string => plainName(s) ?? what;

/**
 * "columns: a, b, c" with at most `max` names, then "... (N more)"; when the header holds anything
 * but plain names (a file that is not a table with a header row), how many columns and no bytes.
 */
export function listColumns(columns: readonly string[], max = 12): string {
  if (columns.some((c) => plainName(c) === undefined))
    return `${columns.length} column${columns.length === 1 ? '' : 's'}, not all plain names: is the first row a header?`;
  if (columns.length <= max) return `columns: ${columns.join(', ')}`;
  return `columns: ${columns.slice(0, max).join(', ')}, ... (${columns.length - max} more)`;
}
