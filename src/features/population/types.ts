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

/** "a, b, c" with at most `max` names, then "... (N more)". */
export function listColumns(columns: readonly string[], max = 12): string {
  if (columns.length <= max) return columns.join(', ');
  return `${columns.slice(0, max).join(', ')}, ... (${columns.length - max} more)`;
}
