// The `targets`, `experiment` and `calibrate` blocks of a SOP (docs/validity.md): valid blocks
// pass, and each mistake is named at its JSON pointer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateSop } from '../src/index.js';

const ROOT = join(import.meta.dirname, '..');
const base = JSON.parse(readFileSync(join(ROOT, 'examples/models/zic-market/zic-market.sop.json'), 'utf8')) as Record<string, unknown>;

function problems(extra: Record<string, unknown>): string[] {
  const doc = { ...base, ...extra };
  const v = validateSop(doc, { file: join(ROOT, 'examples/models/zic-market/x.sop.json') });
  return v.errors.map((d) => `${d.pointer}: ${d.message}`);
}

const good = {
  inputs: { punishment: { default: 'false' }, theta: { default: '0.3' } },
  targets: {
    efficiency: { source: 'Gode and Sunder 1993, Table 2', metric: 'efficiency', value: 0.98, tolerance: 0.03, sd: 0.02 },
    range: { source: 's', metric: 'efficiency', state: 'trading', at: 30, interval: [0.9, 1] },
    prices: {
      source: 's',
      kind: 'distribution',
      query: 'SELECT price AS value FROM actions',
      quantiles: { '0.1': 50, '0.9': 120 },
      max_divergence: 0.2,
    },
    bins: {
      source: 's',
      kind: 'distribution',
      metric: 'efficiency',
      histogram: { edges: [0, 0.5, 1], shares: [0.1, 0.9] },
      max_divergence: 0.1,
    },
    curve: {
      source: 's',
      kind: 'curve',
      metric: 'efficiency',
      points: [
        [10, 0.5],
        [60, 0.98],
      ],
      relative_band: 0.1,
    },
    effect: { source: 's', kind: 'effect', metric: 'efficiency', arms: ['treat', 'control'], null: true },
  },
  experiment: {
    arms: {
      control: { inputs: { punishment: false } },
      treat: { inputs: { punishment: true }, set: { '/states/trading/activation/probability': 0.3 } },
    },
  },
  calibrate: {
    parameters: {
      theta: { input: 'theta', prior: { uniform: [0.05, 0.95] } },
      p: { path: '/states/trading/activation/probability', prior: { log_uniform: [0.01, 1] } },
      k: { input: 'theta', values: [1, 2, 3] },
    },
    targets: ['efficiency'],
    method: 'abc-smc',
    seeds_per_particle: 1,
  },
};

describe('targets, experiment and calibrate blocks', () => {
  it('accepts each kind of target, arms and a calibration', () => {
    expect(problems(good)).toEqual([]);
  });

  it('names schema mistakes at their pointers', () => {
    const p = problems({
      targets: {
        a: { metric: 'efficiency', value: 1, tolerance: 0.1 },
        b: { source: 's', metric: 'efficiency', value: 'high', tolerance: 0.1 },
      },
    });
    expect(p).toContain('/targets/a: missing required key "source"');
    expect(p.some((x) => x.startsWith('/targets/b/value:'))).toBe(true);
    expect(problems({ targets: { a: { source: 's', metric: 'e', kind: 'curvy' } } }).some((x) => x.startsWith('/targets/a/kind:'))).toBe(
      true,
    );
    expect(problems({ experiment: { arms: { 'bad arm': {} } } }).some((x) => x.startsWith('/experiment/arms/bad arm'))).toBe(true);
    expect(
      problems({
        calibrate: { parameters: { t: { input: 'x', prior: { uniform: [0, 1], normal: { mean: 0, sd: 1 } } } }, targets: ['a'] },
      }),
    ).toContainEqual(expect.stringMatching(/^\/calibrate\/parameters\/t\/prior:/));
  });

  it('names what a kind needs, what is measured, and the names blocks share', () => {
    const p = problems({
      targets: {
        nothing: { source: 's', value: 1, tolerance: 1 },
        both: { source: 's', metric: 'm', query: 'q', value: 1, tolerance: 1 },
        noPass: { source: 's', metric: 'm', value: 1 },
        wrongField: { source: 's', metric: 'm', value: 1, tolerance: 1, band: 2 },
        hist: { source: 's', kind: 'distribution', metric: 'm', histogram: { edges: [0, 1, 2], shares: [1] } },
        notPop: { source: 's', metric: 'm', state: 'closed', value: 1, tolerance: 1 },
        curve: { source: 's', kind: 'curve', metric: 'm', points: [[1, 2]] },
        effect: { source: 's', kind: 'effect', metric: 'm', arms: ['treat', 'nope'], value: 1, tolerance: 1 },
      },
      experiment: { arms: { treat: { inputs: { undeclared: 1 } } } },
      calibrate: { parameters: { x: { input: 'nope', path: '/a', prior: { uniform: [1, 0] } } }, targets: ['missing'] },
    });
    expect(p).toEqual(
      expect.arrayContaining([
        '/targets/nothing: target "nothing" measures nothing; give a population "metric" or a DuckDB "query"',
        '/targets/both/query: a target measures a "metric" or a "query", not both',
        '/targets/noPass: value target "noPass" needs "tolerance" or "interval" to say what passes',
        '/targets/wrongField/band: "band" is not a field of a value target (value, tolerance, interval, sd)',
        '/targets/hist/histogram/shares: 3 edges make 2 bins, but 1 shares are given',
        '/targets/hist: distribution target "hist" needs "max_divergence"',
        '/targets/notPop/state: state "closed" is not a population state, so it has no metrics',
        '/targets/curve: curve target "curve" needs one of "band" (absolute) or "relative_band" (a fraction)',
        '/targets/effect/arms/1: arm "nope" is not declared in experiment.arms (treat)',
        '/calibrate/targets/0: target "missing" is not defined in "targets"',
        '/calibrate/parameters/x: parameter "x" sets an "input" or a value at a "path" (a JSON pointer), exactly one',
        '/calibrate/parameters/x/input: input "nope" is not declared in "inputs"',
        '/calibrate/parameters/x/prior/uniform: [1, 0] must have lo < hi',
      ]),
    );
    const v = validateSop({ ...base, ...good, experiment: { arms: { treat: { inputs: { undeclared: 1 } }, control: {} } } });
    expect(v.warnings.map((d) => `${d.pointer}: ${d.message}`)).toContain(
      '/experiment/arms/treat/inputs/undeclared: input "undeclared" is not declared in "inputs", so no template reads it',
    );
  });
});
