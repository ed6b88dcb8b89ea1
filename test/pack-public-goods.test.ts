// The public-goods replication pack (issue 33): Fehr and Gaechter's (2000) contributions decaying
// without punishment and rising with it, as effects between the experiment's arms (control: 10
// rounds without, punish: 10 rounds with a punishment stage), on common random numbers. The
// effects the pack's rules give are computed here by a simulation of the rules with this test's
// own random numbers (the model's law, not its draws), and must lie in the targets' intervals;
// then the pack's sweep over both arms passes `sop report --check`.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from './helpers/cli.js';
import { MODELS_DIR, packTargets, sweepAndReport } from './helpers/pack.js';

const free = readFileSync(`${MODELS_DIR}/public-goods/players.csv`, 'utf8')
  .trim()
  .split('\n')
  .slice(1)
  .map((l) => l.split(',')[1]!.trim() === 'free_rider');

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

/** Each round's mean contribution of one 10-round game, in fixed random groups of four, and the free riders' in the last round. */
function game(seed: number, punishment: boolean): number[] & { freeRiders?: number } {
  const next = rng(seed);
  const n = free.length;
  const order = free.map((_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const group = new Array<number>(n);
  order.forEach((i, k) => (group[i] = Math.floor(k / 4)));
  const mates = (i: number) => free.map((_, j) => j).filter((j) => j !== i && group[j] === group[i]);
  let give = free.map((f) => (f ? 0 : 5 + Math.floor(next() * 11)));
  let punished = new Array<number>(n).fill(0);
  const means: number[] & { freeRiders?: number } = [];
  for (let round = 1; round <= 10; round++) {
    const c = free.map((f, i) => {
      if (f) return Math.min(20, give[i]! + 2 * punished[i]!);
      if (round === 1) return give[i]!;
      const m = mates(i);
      return Math.round(0.9 * (m.reduce((a, j) => a + give[j]!, 0) / m.length));
    });
    give = c;
    means.push(c.reduce((a, b) => a + b, 0) / n);
    const riders = c.filter((_, i) => free[i]);
    means.freeRiders = riders.reduce((a, b) => a + b, 0) / riders.length;
    punished = new Array<number>(n).fill(0);
    if (!punishment) continue;
    free.forEach((f, i) => {
      if (f) return;
      let low: number | undefined;
      for (const j of mates(i)) if (low === undefined || c[j]! < c[low]!) low = j;
      if (low === undefined || c[low]! >= give[i]!) return;
      punished[low]! += Math.min(10, Math.ceil((give[i]! - c[low]!) / 5));
    });
  }
  return means;
}

beforeAll(() => requireBuiltCli());

describe('the public-goods pack', () => {
  it('declares the two arms, and the effects of its rules lie in the targets intervals', () => {
    const doc = JSON.parse(readFileSync(`${MODELS_DIR}/public-goods/public-goods.sop.json`, 'utf8')) as {
      experiment: { arms: Record<string, unknown> };
    };
    expect(Object.keys(doc.experiment.arms).sort()).toEqual(['control', 'punish']);
    const t = packTargets('public-goods');
    const seeds = Array.from({ length: 400 }, (_, i) => i + 1);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const control = seeds.map((s) => game(s, false));
    const punish = seeds.map((s) => game(s, true));
    // without punishment contributions decay (Fehr and Gaechter), to under a fifth of round 1
    expect(mean(control.map((g) => g[9]!))).toBeLessThan(mean(control.map((g) => g[0]!)) / 5);
    // with it they rise from round 1 to round 10
    expect(mean(punish.map((g) => g[9]! - g[0]!))).toBeGreaterThan(0);
    const last = mean(punish.map((g) => g[9]!)) - mean(control.map((g) => g[9]!));
    const riders = mean(punish.map((g) => g.freeRiders!)) - mean(control.map((g) => g.freeRiders!));
    const inside = (v: number, [lo, hi]: [number, number]) => v >= lo && v <= hi;
    expect(inside(last, t.punishment_effect!.interval as [number, number]), `last-round effect ${last}`).toBe(true);
    expect(inside(riders, t.free_rider_effect!.interval as [number, number]), `free riders' effect ${riders}`).toBe(true);
    for (const name of ['punishment_effect', 'free_rider_effect']) expect(t[name]!.arms).toEqual(['punish', 'control']);
  });

  it('passes sop report --check after a sweep of both arms over 6 seeds', async () => {
    const r = await sweepAndReport('public-goods', '1-6');
    expect(r.sweep.status, r.sweep.stderr).toBe(0);
    expect(r.report.status, r.report.stdout + r.report.stderr).toBe(0);
    expect(r.report.stdout).toContain('punishment_effect');
    expect(r.report.stdout).toContain('free_rider_effect');
  }, 120_000);
});
