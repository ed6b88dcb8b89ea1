// The validity statistics (src/features/validity, docs/validity.md), each checked against a figure
// computed by hand or by an independent closed form written here: Student's t (its published
// table and the closed forms for 1, 2 and 3 degrees of freedom), mean intervals, paired and Welch
// differences, Jensen-Shannon, Kolmogorov-Smirnov, Wasserstein-1, and the evaluation of each kind
// of target with its scaled distance.
import { describe, expect, it } from 'vitest';
import {
  evaluateTarget,
  evaluateTargets,
  jensenShannon,
  jensenShannonHistogram,
  jensenShannonShares,
  kolmogorovSmirnov,
  kolmogorovSmirnovQuantiles,
  meanInterval,
  pairedDifference,
  quantilePoints,
  studentTCdf,
  studentTQuantile,
  targetDistance,
  unweighted,
  wasserstein1,
  wasserstein1Quantiles,
  welchDifference,
  type Target,
} from '../src/features/validity/index.js';

describe("Student's t", () => {
  it('matches the closed forms for 1, 2 and 3 degrees of freedom', () => {
    for (const t of [-3, -1, -0.2, 0, 0.5, 1, 2.449, 6]) {
      expect(studentTCdf(t, 1)).toBeCloseTo(0.5 + Math.atan(t) / Math.PI, 12); // Cauchy
      expect(studentTCdf(t, 2)).toBeCloseTo(0.5 + t / (2 * Math.sqrt(2 + t * t)), 12);
      const u = t / Math.sqrt(3);
      expect(studentTCdf(t, 3)).toBeCloseTo(0.5 + (u / (1 + u * u) + Math.atan(u)) / Math.PI, 12);
    }
  });
  it('gives the 97.5% quantiles of the published table', () => {
    const table: Array<[number, number]> = [
      [1, 12.706],
      [2, 4.303],
      [4, 2.776],
      [9, 2.262],
      [19, 2.093],
      [29, 2.045],
      [120, 1.98],
    ];
    for (const [df, q] of table) expect(studentTQuantile(0.975, df)).toBeCloseTo(q, 3 - Math.floor(Math.log10(q)));
    expect(studentTQuantile(0.975, 1e6)).toBeCloseTo(1.95996, 4);
    expect(studentTQuantile(0.025, 9)).toBeCloseTo(-2.262, 3);
  });
});

describe('means and differences', () => {
  it('gives the mean of 1..5 with its t interval', () => {
    // mean 3, sd sqrt(2.5), half-width t(0.975, 4) sqrt(2.5)/sqrt(5) = 2.776445 x 0.707107
    const m = meanInterval([1, 2, 3, 4, 5]);
    expect(m.mean).toBe(3);
    expect(m.sd).toBeCloseTo(Math.sqrt(2.5), 12);
    expect(m.lo).toBeCloseTo(3 - 2.776445 * Math.SQRT1_2, 5);
    expect(m.hi).toBeCloseTo(3 + 2.776445 * Math.SQRT1_2, 5);
    expect(meanInterval([7])).toMatchObject({ n: 1, mean: 7, lo: null, hi: null });
  });

  it('pairs seeds: differences 1, 2, 1, 0', () => {
    const d = pairedDifference([5, 7, 9, 6], [4, 5, 8, 6]);
    const sd = Math.sqrt(2 / 3); // deviations 0, 1, 0, -1
    const se = sd / 2;
    expect(d.method).toBe('paired');
    expect(d.mean).toBe(1);
    expect(d.lo).toBeCloseTo(1 - 3.182446 * se, 5);
    expect(d.hi).toBeCloseTo(1 + 3.182446 * se, 5);
    expect(d.width).toBeCloseTo(2 * 3.182446 * se, 5);
    // two-sided p of t = 1 / se with 3 df, from the closed form
    const u = 1 / se / Math.sqrt(3);
    const cdf = 0.5 + (u / (1 + u * u) + Math.atan(u)) / Math.PI;
    expect(d.p).toBeCloseTo(2 * (1 - cdf), 10);
  });

  it("gives Welch's interval with Welch-Satterthwaite degrees of freedom", () => {
    // means 2 and 5; variances 1 and 20/3; v1 = 1/3, v2 = 5/3, se = sqrt(2)
    const d = welchDifference([1, 2, 3], [2, 4, 6, 8]);
    const v1 = 1 / 3;
    const v2 = 5 / 3;
    const df = (v1 + v2) ** 2 / (v1 ** 2 / 2 + v2 ** 2 / 3); // 4.0755
    expect(d.mean).toBe(-3);
    expect(d.sd).toBeCloseTo(Math.SQRT2, 12);
    const q = (d.hi! - d.mean) / Math.SQRT2;
    expect(q).toBeLessThan(2.776445); // t(0.975, 4)
    expect(q).toBeGreaterThan(2.570582); // t(0.975, 5)
    expect(studentTCdf(q, df)).toBeCloseTo(0.975, 9);
  });
});

describe('divergences', () => {
  it('Jensen-Shannon in bits: 0 for equal, 1 for disjoint, 0.3113 for (1/2, 1/2) against (1, 0)', () => {
    expect(jensenShannon([0.2, 0.8], [2, 8])).toBeCloseTo(0, 12);
    expect(jensenShannon([1, 0], [0, 1])).toBeCloseTo(1, 12);
    // M = (3/4, 1/4): KL(P||M) = 1/2 log2(2/3) + 1/2 log2(2); KL(Q||M) = log2(4/3)
    const byHand = 0.5 * (0.5 * Math.log2(2 / 3) + 0.5) + 0.5 * Math.log2(4 / 3);
    expect(jensenShannon([0.5, 0.5], [1, 0])).toBeCloseTo(byHand, 12);
    expect(jensenShannonShares({ a: 2, b: 2 }, { a: 1 })).toBeCloseTo(byHand, 12);
  });

  it('bins a sample for a histogram, the last bin closed, weight outside counted against the target', () => {
    const edges = [0, 1, 2, 3];
    expect(jensenShannonHistogram(unweighted([0.5, 1.5, 1, 3]), edges, [0.25, 0.5, 0.25])).toBeCloseTo(0, 12);
    // half the sample outside [0, 3]: (1/4, 1/4, 0, 1/2) against (1/2, 1/2, 0, 0)
    const p = [0.25, 0.25, 0, 0.5];
    const q = [0.5, 0.5, 0, 0];
    let js = 0;
    for (let i = 0; i < 4; i++) {
      const m = (p[i]! + q[i]!) / 2;
      if (p[i]! > 0) js += 0.5 * p[i]! * Math.log2(p[i]! / m);
      if (q[i]! > 0) js += 0.5 * q[i]! * Math.log2(q[i]! / m);
    }
    expect(jensenShannonHistogram(unweighted([0.5, 1.5, -1, 7]), edges, [0.5, 0.5, 0])).toBeCloseTo(js, 12);
  });

  it('Kolmogorov-Smirnov and Wasserstein-1 between samples', () => {
    expect(kolmogorovSmirnov(unweighted([1, 2, 3]), unweighted([2, 3, 4]))).toBeCloseTo(1 / 3, 12);
    expect(wasserstein1(unweighted([1, 2, 3]), unweighted([2, 3, 4]))).toBeCloseTo(1, 12);
    expect(wasserstein1(unweighted([0, 0, 1]), unweighted([0, 1, 1]))).toBeCloseTo(1 / 3, 12);
    expect(kolmogorovSmirnov([{ x: 0, w: 3 }], unweighted([0, 0, 0]))).toBe(0);
  });

  it('Kolmogorov-Smirnov and Wasserstein-1 against quantiles', () => {
    const oneToHundred = unweighted(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(kolmogorovSmirnovQuantiles(oneToHundred, quantilePoints({ '0.5': 50.5 }))).toBeCloseTo(0, 12);
    expect(kolmogorovSmirnovQuantiles(oneToHundred, quantilePoints({ '0.5': 30, '0.9': 90 }))).toBeCloseTo(0.2, 12);
    // a jump across the probability is no gap
    expect(kolmogorovSmirnovQuantiles(unweighted([1, 1, 1, 1]), quantilePoints({ '0.5': 1 }))).toBe(0);
    const uniform = unweighted(Array.from({ length: 1000 }, (_, i) => (i + 0.5) / 1000));
    expect(wasserstein1Quantiles(uniform, quantilePoints({ '0.1': 0.1, '0.9': 0.9 }))).toBeLessThan(0.001);
    expect(wasserstein1Quantiles(uniform, quantilePoints({ '0.1': 0.2, '0.9': 1.0 }))).toBeCloseTo(0.1, 3);
  });
});

describe('targets', () => {
  const value: Target = { source: 'a paper', metric: 'efficiency', value: 0.98, tolerance: 0.02, sd: 0.05 };

  it('a value target: mean, interval, pass, variance ratio and distance', () => {
    const xs = [0.97, 0.99, 0.98, 0.985];
    const r = evaluateTarget('eff', value, { kind: 'value', values: xs });
    const m = 0.98125;
    const sd = Math.sqrt(((0.97 - m) ** 2 + (0.99 - m) ** 2 + (0.98 - m) ** 2 + (0.985 - m) ** 2) / 3);
    expect(r.pass).toBe(true);
    expect(r.sim?.mean).toBeCloseTo(m, 12);
    expect(r.sim!.hi! - r.sim!.lo!).toBeCloseTo((2 * 3.182446 * sd) / 2, 5);
    expect(r.variance_ratio).toBeCloseTo(sd / 0.05, 10);
    expect(r.under_dispersed).toBe(true);
    expect(r.distance).toBeCloseTo(0.00125 / 0.02, 10);
    const far = evaluateTarget('eff', { ...value, value: 0.5 }, { kind: 'value', values: xs });
    expect(far.pass).toBe(false);
    expect(far.distance).toBeCloseTo((m - 0.5) / 0.02, 8);
    const inside = evaluateTarget('eff', { source: 's', metric: 'e', interval: [0.96, 0.99] }, { kind: 'value', values: xs });
    expect(inside.pass).toBe(true);
    expect(inside.distance).toBeCloseTo(Math.abs(m - 0.975) / 0.015, 10);
  });

  it('a distribution target against shares, histogram, quantiles and samples', () => {
    const shares = evaluateTarget(
      'd',
      { source: 's', kind: 'distribution', query: 'q', shares: { a: 0.5, b: 0.5 }, max_divergence: 0.35 },
      { kind: 'distribution', counts: { a: 10 } },
    );
    expect(shares.divergence).toEqual({
      name: 'js',
      value: expect.closeTo(0.5 * (0.5 * Math.log2(2 / 3) + 0.5) + 0.5 * Math.log2(4 / 3), 12),
    });
    expect(shares.pass).toBe(true);
    expect(shares.distance).toBeCloseTo(0.311278 / 0.35, 5);
    const samples = evaluateTarget(
      'd',
      { source: 's', kind: 'distribution', query: 'q', samples: [2, 3, 4], max_divergence: 0.2 },
      { kind: 'distribution', samples: [1, 2], counts: { '3': 1 } },
    );
    expect(samples.divergence?.value).toBeCloseTo(1 / 3, 12);
    expect(samples.wasserstein).toBeCloseTo(1, 12);
    expect(samples.pass).toBe(false);
  });

  it('a curve target: the mean across runs at each point, a missing step carried from the last earlier one', () => {
    const runs = [
      [
        [0, 0],
        [10, 5],
      ],
      [
        [0, 0],
        [10, 7],
      ],
    ] as Array<Array<[number, number]>>;
    const t: Target = {
      source: 's',
      kind: 'curve',
      metric: 'infected',
      points: [
        [5, 0.25],
        [10, 6],
        [12, 6.5],
      ],
      band: 0.5,
    };
    const r = evaluateTarget('c', t, { kind: 'curve', runs });
    expect(r.points?.map((p) => p.mean)).toEqual([0, 6, 6]);
    expect(r.pass).toBe(true);
    expect(r.distance).toBeCloseTo(Math.sqrt((0.5 ** 2 + 0 + 1 ** 2) / 3), 12);
    const rel = evaluateTarget('c', { ...t, band: undefined, relative_band: 0.01 }, { kind: 'curve', runs });
    expect(rel.pass).toBe(false);
  });

  it('an effect target: paired difference, Welch beside it, null inflation from each seed own test', () => {
    // seed 1: a large difference (Welch t = 10 / sqrt(2/3)); seed 2: none; seed 3: 1 / sqrt(2/3) = 1.22, p = 0.29 with 4 df
    const seeds = [
      { seed: 1, treatment: [10, 11, 12], control: [0, 1, 2] },
      { seed: 2, treatment: [0, 1, 2], control: [0, 1, 2] },
      { seed: 3, treatment: [1, 2, 3], control: [0, 1, 2] },
    ];
    const t: Target = { source: 's', kind: 'effect', query: 'q', arms: ['punish', 'control'], null: true };
    const r = evaluateTarget('e', t, { kind: 'effect', seeds, paired: true });
    const d = [10, 0, 1];
    const m = 11 / 3;
    const sd = Math.sqrt(d.reduce((a, x) => a + (x - m) ** 2, 0) / 2);
    expect(r.paired?.mean).toBeCloseTo(m, 12);
    expect(r.paired?.hi).toBeCloseTo(m + (4.302653 * sd) / Math.sqrt(3), 5);
    expect(r.independent?.method).toBe('welch');
    expect(r.covers).toBe(true);
    expect(r.pass).toBe(true);
    expect(r.null_inflation).toBeCloseTo(1 / 3, 12);
    expect(r.coverage).toBeCloseTo(2 / 3, 12);
    const valued = evaluateTarget('e', { ...t, null: undefined, value: 4, tolerance: 0.5 }, { kind: 'effect', seeds, paired: true });
    expect(valued.pass).toBe(true);
    expect(valued.distance).toBeCloseTo(Math.abs(m - 4) / 0.5, 10);
  });

  it('evaluates every target in order and sums the distances', () => {
    const targets: Record<string, Target> = {
      a: value,
      b: { source: 's', metric: 'x', value: 1, tolerance: 1 },
      c: { source: 's', metric: 'y', value: 0, tolerance: 1 },
    };
    const results = evaluateTargets(targets, { a: { kind: 'value', values: [0.98] }, b: { kind: 'value', values: [1.5, 2.5] } });
    expect(results.map((r) => r.name)).toEqual(['a', 'b', 'c']);
    expect(results[2]?.pass).toBeNull();
    expect(results[2]?.note).toBe('not measured');
    expect(targetDistance(results, ['a', 'b'])).toBeCloseTo(0 + 1, 12);
    expect(targetDistance(results)).toBe(Infinity);
    expect(() => targetDistance(results, ['nope'])).toThrow(/no result for target "nope"/);
  });
});

describe('an effect against an interval', () => {
  it('is covered when the difference interval meets the target interval', () => {
    const seeds = [1, 2, 3, 4].map((seed) => ({ seed, treatment: [10 + seed], control: [seed + (seed % 2)] }));
    // differences 9, 10, 9, 10: mean 9.5
    const t: Target = { source: 's', kind: 'effect', metric: 'm', arms: ['a', 'b'], interval: [0, 9.2] };
    const r = evaluateTarget('e', t, { kind: 'effect', seeds, paired: true });
    expect(r.paired?.mean).toBe(9.5);
    expect(r.pass).toBe(false); // the mean lies outside [0, 9.2]
    expect(r.covers).toBe(true); // its interval (9.5 +- 3.182 x 0.289) reaches into it
    const far = evaluateTarget('e', { ...t, interval: [0, 5] }, { kind: 'effect', seeds, paired: true });
    expect(far.covers).toBe(false);
  });
});
