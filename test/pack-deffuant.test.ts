// The Deffuant replication pack (issue 33): the number of opinion clusters at the confidence bound
// d = 0.2 and the conserved mean opinion. The target figures are checked here against a
// simulation of the bounded-confidence model written without the engine (its own random numbers:
// the model's law, not its draws), counted the way the pack's query counts clusters; then the
// pack's sweep passes `sop report --check`.
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from './helpers/cli.js';
import { packTargets, sweepAndReport } from './helpers/pack.js';

/** mulberry32: a small seeded generator of this test's own. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 100 agents, `steps` rounds of a random perfect matching, partners closer than d move mu of the gap. */
function deffuant(d: number, mu: number, steps: number, seed: number): number[] {
  const next = rng(seed);
  const x = Array.from({ length: 100 }, () => next());
  for (let s = 0; s < steps; s++) {
    const order = x.map((_, i) => i);
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(next() * (i + 1));
      [order[i], order[j]] = [order[j]!, order[i]!];
    }
    for (let i = 0; i + 1 < order.length; i += 2) {
      const a = order[i]!;
      const b = order[i + 1]!;
      const gap = x[b]! - x[a]!;
      if (Math.abs(gap) < d) {
        x[a] = x[a]! + mu * gap;
        x[b] = x[b]! - mu * gap;
      }
    }
  }
  return x;
}

/** Runs of adjacent non-empty tenth-bins holding at least 5 agents (the pack's query). */
function clusters(x: number[]): number {
  const bins = new Array<number>(10).fill(0);
  for (const v of x) bins[Math.min(9, Math.floor(v * 10))]!++;
  let n = 0;
  let run = 0;
  for (const c of [...bins, 0]) {
    if (c > 0) run += c;
    else {
      if (run >= 5) n++;
      run = 0;
    }
  }
  return n;
}

beforeAll(() => requireBuiltCli());

describe('the Deffuant pack', () => {
  it('states 2 clusters at d = 0.2, as the integer part of 1/(2d) and an independent simulation give', () => {
    const t = packTargets('deffuant');
    expect(t.clusters!.value).toBe(Math.floor(1 / (2 * 0.2)));
    const counts = Array.from({ length: 40 }, (_, i) => clusters(deffuant(0.2, 0.5, 100, i + 1)));
    const mean = counts.reduce((s, c) => s + c, 0) / counts.length;
    expect(Math.abs(mean - 2)).toBeLessThanOrEqual(t.clusters!.tolerance as number);
    // the count moves with the bound: one cluster at d = 0.4, more at d = 0.1 (as the paper's 1/(2d))
    const at = (d: number) =>
      Array.from({ length: 20 }, (_, i) => clusters(deffuant(d, 0.5, 100, 100 + i))).reduce((s, c) => s + c, 0) / 20;
    expect(at(0.4)).toBeCloseTo(1, 0);
    expect(at(0.1)).toBeGreaterThan(3);
    // the mean opinion is conserved by every meeting
    const x = deffuant(0.2, 0.5, 100, 7);
    const x0 = deffuant(0.2, 0.5, 0, 7);
    expect(x.reduce((s, v) => s + v, 0)).toBeCloseTo(
      x0.reduce((s, v) => s + v, 0),
      9,
    );
    expect(t.opinion_mean!.value).toBe(0.5);
  });

  it('passes sop report --check after a sweep over 5 seeds', async () => {
    const r = await sweepAndReport('deffuant', '1-5');
    expect(r.sweep.status, r.sweep.stderr).toBe(0);
    expect(r.report.status, r.report.stdout + r.report.stderr).toBe(0);
    expect(r.report.stdout).toContain('clusters');
    expect(r.report.stdout).toContain('opinion_mean');
  }, 120_000);
});
