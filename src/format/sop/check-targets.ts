// Checks of the `targets`, `experiment` and `calibrate` blocks that the schema cannot express
// (docs/validity.md): which fields a target's kind needs, what it measures (a population metric of
// a population state, or a query), the arms an effect names, the targets a calibration names, and
// each calibrated parameter's one place and one prior.
import type { Diagnostic } from './diagnostics.js';
import { pointerOf } from './json-source.js';
import type { Sop } from './types.js';

type Path = Array<string | number>;

const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** The names of a SOP's population states. */
function populationStates(sop: Sop): string[] {
  return Object.entries(sop.states)
    .filter(([, s]) => s.population !== undefined)
    .map(([n]) => n);
}

export function targetDiagnostics(sop: Sop): Diagnostic[] {
  const out: Diagnostic[] = [];
  const err = (path: Path, message: string) => out.push({ severity: 'error', pointer: pointerOf(path), message });
  const warn = (path: Path, message: string) => out.push({ severity: 'warning', pointer: pointerOf(path), message });
  const arms = Object.keys(sop.experiment?.arms ?? {});
  const populations = populationStates(sop);
  const declaredInputs = new Set(Object.keys(sop.inputs ?? {}));

  for (const [name, t] of Object.entries(sop.targets ?? {})) {
    const at = (...rest: Path): Path => ['targets', name, ...rest];
    const kind = t.kind ?? 'value';
    // what it measures
    if (t.metric !== undefined && t.query !== undefined) err(at('query'), 'a target measures a "metric" or a "query", not both');
    else if (t.metric === undefined && t.query === undefined)
      err(at(), `target "${name}" measures nothing; give a population "metric" or a DuckDB "query"`);
    if (t.state !== undefined && t.metric === undefined) err(at('state'), '"state" names the population state of a "metric"');
    if (t.metric !== undefined) {
      if (t.state !== undefined) {
        if (!has(sop.states, t.state)) err(at('state'), `state "${t.state}" is not defined in "states"`);
        else if (!populations.includes(t.state)) err(at('state'), `state "${t.state}" is not a population state, so it has no metrics`);
      } else if (populations.length === 0)
        err(at('metric'), 'this SOP has no population state, so it has no metrics; measure it with a "query"');
      else if (populations.length > 1)
        err(at('metric'), `this SOP has ${populations.length} population states (${populations.join(', ')}); say which one in "state"`);
    }
    if (t.arm !== undefined) {
      if (kind === 'effect') err(at('arm'), 'an effect names its two arms in "arms"');
      else if (!arms.includes(t.arm))
        err(
          at('arm'),
          arms.length === 0
            ? 'this SOP declares no experiment arms'
            : `arm "${t.arm}" is not declared in experiment.arms (${arms.join(', ')})`,
        );
    }
    if (t.at !== undefined && kind === 'curve')
      err(at('at'), 'a curve covers every step of its points; "at" is for value, distribution and effect targets');
    // fields of other kinds
    const fieldsOf: Record<string, readonly string[]> = {
      value: ['value', 'tolerance', 'interval', 'sd'],
      distribution: ['shares', 'histogram', 'quantiles', 'samples', 'max_divergence'],
      curve: ['points', 'band', 'relative_band'],
      effect: ['arms', 'value', 'tolerance', 'interval', 'null', 'sd'],
    };
    const mine = new Set(fieldsOf[kind]);
    for (const f of [
      'value',
      'tolerance',
      'interval',
      'sd',
      'shares',
      'histogram',
      'quantiles',
      'samples',
      'max_divergence',
      'points',
      'band',
      'relative_band',
      'arms',
      'null',
    ])
      if (has(t, f) && !mine.has(f)) err(at(f), `"${f}" is not a field of a ${kind} target (${[...mine].join(', ')})`);
    const interval = (): void => {
      if (t.interval !== undefined && t.interval[0]! > t.interval[1]!)
        err(at('interval'), `interval [${t.interval.join(', ')}] has lo > hi`);
    };
    if (kind === 'value') {
      if (t.value === undefined && t.interval === undefined)
        err(at(), `value target "${name}" needs "value" (with "tolerance") or "interval"`);
      if (t.value !== undefined && t.tolerance === undefined && t.interval === undefined)
        err(at(), `value target "${name}" needs "tolerance" or "interval" to say what passes`);
      if (t.tolerance !== undefined && t.interval !== undefined) err(at('interval'), 'give "tolerance" or "interval", not both');
      if (t.tolerance !== undefined && t.value === undefined) err(at('tolerance'), '"tolerance" is around a "value"; give the value');
      interval();
    } else if (kind === 'distribution') {
      const given = (['shares', 'histogram', 'quantiles', 'samples'] as const).filter((f) => t[f] !== undefined);
      if (given.length !== 1)
        err(at(), `distribution target "${name}" needs exactly one of "shares", "histogram", "quantiles", "samples" (has ${given.length})`);
      if (t.max_divergence === undefined) err(at(), `distribution target "${name}" needs "max_divergence"`);
      if (t.histogram !== undefined) {
        const { edges, shares } = t.histogram;
        if (shares.length !== edges.length - 1)
          err(at('histogram', 'shares'), `${edges.length} edges make ${edges.length - 1} bins, but ${shares.length} shares are given`);
        for (let i = 1; i < edges.length; i++)
          if (!(edges[i]! > edges[i - 1]!)) {
            err(at('histogram', 'edges', i), 'histogram edges must increase');
            break;
          }
      }
      if (t.shares !== undefined && Object.values(t.shares).every((v) => v === 0)) err(at('shares'), 'shares are all 0');
      if (t.quantiles !== undefined) {
        const qs = Object.entries(t.quantiles)
          .map(([p, v]) => [Number(p), v] as const)
          .sort((a, b) => a[0] - b[0]);
        for (let i = 1; i < qs.length; i++)
          if (qs[i]![1] < qs[i - 1]![1]) {
            err(at('quantiles'), 'quantile values must not decrease as the probability increases');
            break;
          }
      }
    } else if (kind === 'curve') {
      if (t.points === undefined) err(at(), `curve target "${name}" needs "points"`);
      if ((t.band === undefined) === (t.relative_band === undefined))
        err(at(), `curve target "${name}" needs one of "band" (absolute) or "relative_band" (a fraction)`);
    } else {
      if (t.arms === undefined) err(at(), `effect target "${name}" needs "arms": [treatment, control]`);
      else {
        if (arms.length === 0) err(at('arms'), 'an effect compares arms of "experiment", and this SOP declares none');
        for (const [i, arm] of t.arms.entries())
          if (arms.length > 0 && !arms.includes(arm))
            err(at('arms', i), `arm "${arm}" is not declared in experiment.arms (${arms.join(', ')})`);
        if (t.arms[0] === t.arms[1]) err(at('arms'), 'an effect compares two different arms');
      }
      if (t.null === true) {
        if (t.value !== undefined || t.tolerance !== undefined || t.interval !== undefined)
          err(at('null'), 'a null effect has no "value", "tolerance" or "interval"');
      } else {
        if (t.value === undefined && t.interval === undefined)
          err(at(), `effect target "${name}" needs "value" (with "tolerance") or "interval", or "null": true`);
        if (t.value !== undefined && t.tolerance === undefined && t.interval === undefined)
          err(at(), `effect target "${name}" needs "tolerance" or "interval" to say what passes`);
        if (t.tolerance !== undefined && t.interval !== undefined) err(at('interval'), 'give "tolerance" or "interval", not both');
        interval();
      }
    }
  }

  for (const [arm, def] of Object.entries(sop.experiment?.arms ?? {}))
    for (const input of Object.keys(def.inputs ?? {}))
      if (!declaredInputs.has(input))
        warn(['experiment', 'arms', arm, 'inputs', input], `input "${input}" is not declared in "inputs", so no template reads it`);

  const cal = sop.calibrate;
  if (cal !== undefined) {
    for (const [i, target] of cal.targets.entries())
      if (!has(sop.targets ?? {}, target)) err(['calibrate', 'targets', i], `target "${target}" is not defined in "targets"`);
    for (const [name, p] of Object.entries(cal.parameters)) {
      const at = (...rest: Path): Path => ['calibrate', 'parameters', name, ...rest];
      if ((p.input === undefined) === (p.path === undefined))
        err(at(), `parameter "${name}" sets an "input" or a value at a "path" (a JSON pointer), exactly one`);
      if (p.input !== undefined && !declaredInputs.has(p.input)) err(at('input'), `input "${p.input}" is not declared in "inputs"`);
      if ((p.prior === undefined) === (p.values === undefined))
        err(at(), `parameter "${name}" needs a "prior" or a list of "values", exactly one`);
      const range = (r: readonly number[] | undefined, key: string, positive = false) => {
        if (r === undefined) return;
        if (!(r[0]! < r[1]!)) err(at('prior', key), `[${r.join(', ')}] must have lo < hi`);
        else if (positive && !(r[0]! > 0)) err(at('prior', key), 'a log-uniform range must be above 0');
      };
      range(p.prior?.uniform, 'uniform');
      range(p.prior?.log_uniform, 'log_uniform', true);
      const bounds = p.prior?.normal?.bounds;
      if (bounds !== undefined && !(bounds[0]! < bounds[1]!))
        err(at('prior', 'normal', 'bounds'), `[${bounds.join(', ')}] must have lo < hi`);
    }
  }
  return out;
}
