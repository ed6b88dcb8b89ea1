// A synthetic population from declared marginals and a seed. Each column draws from its own
// stream (derived from the seed and the column's name), row after row, so:
// - the same seed gives the same rows on every machine;
// - adding or removing a column leaves the others' values as they were;
// - the first N rows of a larger n are the rows of n = N.
// Columns are independent (the marginals are declared, not their joint distribution).
import type { Rng } from '../../core/runtime/rng.js';
import { normalCdf, rngFor, standardNormal } from './random.js';
import type { SourceRow } from './source.js';
import { PopulationError, type ColumnSpec, type GenerateSpec, type Row, type Value } from './types.js';

/** A normal cut to [min, max] must keep at least this share of its mass (else drawing takes too long). */
export const MIN_NORMAL_MASS = 1e-3;
const MAX_TRIES = 1_000_000;

type Draw = () => Value;

/** The id of the i-th generated row. */
export const generatedId = (i: number): string => `a${i}`;

/** The columns of a generated source: the id column, then the declared ones in order. */
export function generatedColumns(spec: GenerateSpec, idColumn: string): string[] {
  return [idColumn, ...Object.keys(spec.columns)];
}

/** Problems of one column's declaration (empty when it is fine), for validation. */
export function columnProblems(c: ColumnSpec): string[] {
  if ('categorical' in c) {
    const shares = Object.values(c.categorical);
    if (shares.length === 0) return ['declares no category'];
    const sum = shares.reduce((a, b) => a + b, 0);
    if (Math.abs(sum - 1) > 1e-6) return [`the shares add up to ${+sum.toFixed(6)}, not 1`];
    return [];
  }
  if ('choice' in c) return c.choice.length === 0 ? ['lists no value'] : [];
  if ('uniform' in c) {
    const { min, max, round } = c.uniform;
    if (!(min <= max)) return [`min ${min} is above max ${max}`];
    if (round && Math.ceil(min) > Math.floor(max)) return [`no whole number lies between ${min} and ${max}`];
    return [];
  }
  const { mean, sd, min = -Infinity, max = Infinity, round } = c.normal;
  if (!(min <= max)) return [`min ${min} is above max ${max}`];
  if (round && Math.ceil(min) > Math.floor(max)) return [`no whole number lies between ${min} and ${max}`];
  const mass = normalCdf((max - mean) / sd) - normalCdf((min - mean) / sd);
  if (mass < MIN_NORMAL_MASS)
    return [
      `${rangeText(min, max)} holds less than ${MIN_NORMAL_MASS * 100}% of a normal of mean ${mean} and sd ${sd}: widen it or move the mean`,
    ];
  return [];
}

function rangeText(min: number, max: number): string {
  if (min === -Infinity) return `the range up to ${max}`;
  if (max === Infinity) return `the range from ${min} up`;
  return `the range [${min}, ${max}]`;
}

function drawer(name: string, c: ColumnSpec, rng: Rng): Draw {
  if ('categorical' in c) {
    const entries = Object.entries(c.categorical);
    const total = entries.reduce((a, [, s]) => a + s, 0);
    let acc = 0;
    const cumulative = entries.map(([value, share]) => [value, (acc += share / total)] as const);
    return () => {
      const u = rng.next();
      return (cumulative.find(([, upTo]) => u < upTo) ?? cumulative[cumulative.length - 1]!)[0];
    };
  }
  if ('choice' in c) return () => rng.pick(c.choice);
  if ('uniform' in c) {
    const { min, max, round } = c.uniform;
    if (!round) return () => min + (max - min) * rng.next();
    const lo = Math.ceil(min);
    const span = Math.floor(max) - lo + 1;
    return () => lo + Math.floor(rng.next() * span);
  }
  const { mean, sd, min = -Infinity, max = Infinity, round } = c.normal;
  return () => {
    for (let i = 0; i < MAX_TRIES; i++) {
      let x = mean + sd * standardNormal(rng);
      if (round) x = Math.round(x) + 0; // + 0: never -0
      if (x >= min && x <= max) return x;
    }
    throw new PopulationError(`column "${name}": no draw of the normal fell in [${min}, ${max}] in ${MAX_TRIES} tries`);
  };
}

/** The rows of a generated source, in order, with ids "a0".."a(n-1)" under `idColumn`. */
export function* generateRows(spec: GenerateSpec, idColumn = 'id'): Generator<SourceRow> {
  for (const [name, c] of Object.entries(spec.columns)) {
    const [problem] = columnProblems(c);
    if (problem) throw new PopulationError(`column "${name}": ${problem}`);
  }
  const draws = Object.entries(spec.columns).map(([name, c]) => [name, drawer(name, c, rngFor(spec.seed, `column:${name}`))] as const);
  for (let i = 0; i < spec.n; i++) {
    const id = generatedId(i);
    const row: Row = { [idColumn]: id };
    for (const [name, draw] of draws) row[name] = draw();
    yield { id, row, line: i + 1, index: i };
  }
}
