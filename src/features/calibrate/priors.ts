// The parameters of a calibration (the SOP's `calibrate.parameters`, docs/calibrate.md) and their
// priors. A continuous parameter lives in an internal coordinate where its prior is simple: the
// value itself for `uniform` and `normal`, its logarithm for `log_uniform` (so the perturbation
// kernel moves it by factors, and its prior is uniform there). Densities are in that coordinate,
// up to a constant (importance weights are normalised, so constants cancel). A `values` parameter
// is discrete: an index into its list, uniform over it. Pure: no I/O.
import { EngineError } from '../../shared/errors.js';
import type { Rng } from '../../core/runtime/rng.js';

export type ParameterValue = number | string | boolean;

export type PriorSpec =
  { uniform: [number, number] } | { log_uniform: [number, number] } | { normal: { mean: number; sd: number; bounds?: [number, number] } };

/** One entry of `calibrate.parameters`, as the SOP writes it. */
export interface ParameterSpec {
  /** The SOP input the value is given as (a string, as inputs are). */
  input?: string;
  /** A JSON pointer into the SOP where the value is set. */
  path?: string;
  prior?: PriorSpec;
  values?: ParameterValue[];
}

export class CalibrateError extends EngineError {
  constructor(message: string) {
    super(message, 'CALIBRATE');
    this.name = 'CalibrateError';
  }
}

interface Common {
  name: string;
  /** Where the value goes: an input, or a JSON pointer of the SOP. */
  input?: string;
  path?: string;
}

export interface ContinuousParameter extends Common {
  kind: 'continuous';
  prior: 'uniform' | 'log_uniform' | 'normal';
  /** Bounds of the internal coordinate (±Infinity for an unbounded normal). */
  lo: number;
  hi: number;
  /** The value from the internal coordinate, and back. */
  value(u: number): number;
  internal(x: number): number;
  /** Log prior density at u, up to a constant (-Infinity outside the support). */
  logDensity(u: number): number;
  /** A draw from the prior (internal coordinate). */
  sample(rng: Rng): number;
  /** The prior's range in the parameter's own units (its bounds; an unbounded normal's 90% interval). */
  range: [number, number];
  /** A spread of the prior in the internal coordinate, the floor of the kernel's variance is a small part of it. */
  scale: number;
}

export interface DiscreteParameter extends Common {
  kind: 'discrete';
  values: ParameterValue[];
}

export type Parameter = ContinuousParameter | DiscreteParameter;

/** A standard normal draw (Box-Muller; 1 - u keeps the logarithm finite). */
export function gaussian(rng: Rng): number {
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

const Z90 = 1.6448536269514722; // the 95th percentile of the standard normal

function finite(name: string, ...xs: number[]): void {
  if (xs.some((x) => typeof x !== 'number' || !Number.isFinite(x)))
    throw new CalibrateError(`parameter "${name}": its prior's numbers must be finite`);
}

function rangeOf(name: string, kind: string, r: [number, number]): [number, number] {
  finite(name, ...r);
  if (!(r[0] < r[1])) throw new CalibrateError(`parameter "${name}": ${kind} [${r[0]}, ${r[1]}] must go from low to high`);
  return r;
}

const identity = (x: number) => x;

/** A prior uniform on [lo, hi] of the internal coordinate, whose value is `value(u)` (`internal` is its inverse). */
function uniformPrior(
  common: Common,
  prior: 'uniform' | 'log_uniform',
  [lo, hi]: [number, number],
  range: [number, number],
  value: (u: number) => number,
  internal: (x: number) => number,
): ContinuousParameter {
  return {
    ...common,
    kind: 'continuous',
    prior,
    lo,
    hi,
    value,
    internal,
    logDensity: (u) => (u >= lo && u <= hi ? 0 : -Infinity),
    sample: (rng) => lo + (hi - lo) * rng.next(),
    range,
    scale: hi - lo,
  };
}

/** A parameter from its SOP entry; CalibrateError says what is wrong with it. */
export function parameterOf(name: string, spec: ParameterSpec): Parameter {
  const common: Common = {
    name,
    ...(spec.input !== undefined ? { input: spec.input } : {}),
    ...(spec.path !== undefined ? { path: spec.path } : {}),
  };
  if ((spec.input === undefined) === (spec.path === undefined))
    throw new CalibrateError(`parameter "${name}": give one of "input" (an input's name) or "path" (a JSON pointer into the SOP)`);
  if ((spec.values === undefined) === (spec.prior === undefined))
    throw new CalibrateError(`parameter "${name}": give one of "prior" or "values"`);
  if (spec.values !== undefined) {
    if (spec.values.length === 0) throw new CalibrateError(`parameter "${name}": "values" is empty`);
    return { ...common, kind: 'discrete', values: [...spec.values] };
  }
  const p = spec.prior!;
  if ('uniform' in p) {
    const [lo, hi] = rangeOf(name, 'uniform', p.uniform);
    return uniformPrior(common, 'uniform', [lo, hi], [lo, hi], identity, identity);
  }
  if ('log_uniform' in p) {
    const [a, b] = rangeOf(name, 'log_uniform', p.log_uniform);
    if (a <= 0) throw new CalibrateError(`parameter "${name}": log_uniform [${a}, ${b}] must be above 0`);
    return uniformPrior(
      common,
      'log_uniform',
      [Math.log(a), Math.log(b)],
      [a, b],
      (u) => Math.min(b, Math.max(a, Math.exp(u))),
      (x) => Math.log(x),
    );
  }
  const { mean, sd, bounds } = p.normal;
  finite(name, mean, sd);
  if (!(sd > 0)) throw new CalibrateError(`parameter "${name}": normal sd must be above 0`);
  const [lo, hi] = bounds ? rangeOf(name, 'normal bounds', bounds) : [-Infinity, Infinity];
  if (bounds && (mean + 8 * sd < lo || mean - 8 * sd > hi))
    throw new CalibrateError(`parameter "${name}": normal bounds [${lo}, ${hi}] are far outside mean ${mean} ± 8 sd`);
  return {
    ...common,
    kind: 'continuous',
    prior: 'normal',
    lo,
    hi,
    value: identity,
    internal: identity,
    logDensity: (u) => (u >= lo && u <= hi ? -0.5 * ((u - mean) / sd) ** 2 : -Infinity),
    sample: (rng) => {
      for (let i = 0; i < 100_000; i++) {
        const x = mean + sd * gaussian(rng);
        if (x >= lo && x <= hi) return x;
      }
      throw new CalibrateError(`parameter "${name}": no draw of its normal prior fell inside its bounds`);
    },
    range: bounds ? [lo, hi] : [mean - Z90 * sd, mean + Z90 * sd],
    scale: bounds ? Math.min(hi - lo, 2 * Z90 * sd) : 2 * Z90 * sd,
  };
}

/** The width of a parameter's prior in its own units (--json's prior_width): its range; a list's numbers' span (or its length). */
export function priorWidth(p: Parameter): number {
  if (p.kind === 'continuous') return p.range[1] - p.range[0];
  const nums = p.values.filter((v): v is number => typeof v === 'number');
  return nums.length === p.values.length ? Math.max(...nums) - Math.min(...nums) : p.values.length;
}
