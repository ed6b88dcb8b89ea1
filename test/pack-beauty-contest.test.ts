// The beauty-contest replication pack (issue 33): Nagel's (1995) first-round mean and median of
// the p = 2/3 sessions, and the mean falling round after round. The level mix of players.csv is
// fitted to the first-round mean (computed here); the median and the fall follow from the level-k
// rules and are computed here by a simulation of the rules with this test's own random numbers.
// Then the pack's sweep passes `sop report --check`.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from './helpers/cli.js';
import { MODELS_DIR, packTargets, sweepAndReport } from './helpers/pack.js';

const P = 2 / 3;
const levels = readFileSync(`${MODELS_DIR}/beauty-contest/players.csv`, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((l) => Number(l.split(',')[1]));

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

/** One session of `rounds` rounds: each round's choices (level 0 uniform on [0, 2r], level k r p^k; r = 50 first). */
function session(seed: number, rounds: number): number[][] {
  const next = rng(seed);
  const out: number[][] = [];
  let last: number | null = null;
  for (let t = 0; t < rounds; t++) {
    const choices = levels.map((k) => (k === 0 ? next() * (last === null ? 100 : Math.min(100, 2 * last)) : (last ?? 50) * Math.pow(P, k)));
    out.push(choices);
    last = choices.reduce((s, c) => s + c, 0) / choices.length;
  }
  return out;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2;
};

beforeAll(() => requireBuiltCli());

describe('the beauty-contest pack', () => {
  it("has a level mix whose expected first-round mean is Nagel's, and a median and fall that follow from it", () => {
    const t = packTargets('beauty-contest');
    const expectedMean = levels.reduce((s, k) => s + (k === 0 ? 50 : 50 * Math.pow(P, k)), 0) / levels.length;
    expect(expectedMean).toBeCloseTo(36.85, 2);
    expect(Math.abs(expectedMean - (t.first_round_mean!.value as number))).toBeLessThan(0.2);
    const sessions = Array.from({ length: 200 }, (_, i) => session(i + 1, 4));
    const medians = sessions.map((s) => median(s[0]!));
    const meanMedian = medians.reduce((s, m) => s + m, 0) / medians.length;
    expect(Math.abs(meanMedian - (t.first_round_median!.value as number))).toBeLessThan(t.first_round_median!.tolerance as number);
    const falls = sessions.map((s) => {
      const means = s.map((c) => c.reduce((a, b) => a + b, 0) / c.length);
      return means.slice(1).filter((m, i) => m < means[i]!).length;
    });
    expect(falls.every((f) => f === t.mean_falls_each_round!.value)).toBe(true);
  });

  it('passes sop report --check after a sweep over 10 seeds', async () => {
    const r = await sweepAndReport('beauty-contest', '1-10');
    expect(r.sweep.status, r.sweep.stderr).toBe(0);
    expect(r.report.status, r.report.stdout + r.report.stderr).toBe(0);
    for (const name of ['first_round_mean', 'first_round_median', 'mean_falls_each_round']) expect(r.report.stdout).toContain(name);
  }, 120_000);
});
