// The ABC-SMC engine of `sop calibrate` (src/features/calibrate/), on models written in the test
// whose posteriors are known: the mean of normal data under a flat prior, a rate under a
// log-uniform prior, a discrete parameter. The importance weights are checked against the
// formula computed here, and a calibration stopped after a round and continued from its saved
// state (through JSON) ends exactly where one run straight through ends.
import { describe, expect, it } from 'vitest';
import { Rng } from '../src/core/runtime/rng.js';
import { gaussian, parameterOf, type Parameter } from '../src/features/calibrate/priors.js';
import { makeKernel } from '../src/features/calibrate/kernel.js';
import {
  closeRound,
  currentPopulation,
  mix,
  planRound,
  propose,
  runSmc,
  runsSpent,
  weightedQuantile,
  type Candidate,
  type SmcConfig,
  type SmcState,
} from '../src/features/calibrate/smc.js';
import { summarise } from '../src/features/calibrate/summary.js';

/** 50 observations of N(1.3, 1), made with a seed of the test. */
const data = (() => {
  const rng = new Rng(7);
  return Array.from({ length: 50 }, () => 1.3 + gaussian(rng));
})();
const ybar = data.reduce((a, b) => a + b, 0) / data.length;

/** The normal model: the distance between a simulated sample's mean and the data's. */
const normalScore = async (cands: readonly Candidate[]) =>
  cands.map((c) => {
    const rng = new Rng(c.seeds[0]!);
    let s = 0;
    for (let i = 0; i < data.length; i++) s += (c.values.mu as number) + gaussian(rng);
    return Math.abs(s / data.length - ybar);
  });

const muConfig = (over: Partial<SmcConfig> = {}): SmcConfig => ({
  parameters: [parameterOf('mu', { input: 'mu', prior: { uniform: [-5, 5] } })],
  populationSize: 200,
  seedsPerParticle: 1,
  budget: 3000,
  seed: 11,
  ...over,
});

describe('ABC-SMC', () => {
  it('finds the mean of normal data: the median near the sample mean, the interval about the posterior sd', async () => {
    const c = muConfig();
    const s = await runSmc(c, { rounds: [] }, { score: normalScore });
    const pop = currentPopulation(s)!;
    const sum = summarise(c.parameters[0]!, pop.particles);
    // the posterior under a flat prior is N(ybar, 1/50): sd 0.141, a 90% interval of 0.465
    expect(Math.abs((sum.median as number) - ybar)).toBeLessThan(0.1);
    expect(sum.lo90 as number).toBeLessThan(1.3);
    expect(sum.hi90 as number).toBeGreaterThan(1.3);
    const width = (sum.hi90 as number) - (sum.lo90 as number);
    expect(width).toBeGreaterThan(0.3);
    expect(width).toBeLessThan(0.8);
    expect(sum.prior_width).toBe(10);
    // the tolerances shrink, the budget holds, the weights are a distribution
    const eps = s.rounds.map((r) => r.epsilon);
    for (let i = 2; i < eps.length; i++) expect(eps[i]!).toBeLessThan(eps[i - 1]!);
    expect(s.rounds.length).toBeGreaterThan(3);
    expect(runsSpent(s)).toBeLessThanOrEqual(3000);
    expect(s.stopped).toBeDefined();
    for (const r of s.rounds.filter((x) => !x.discarded)) {
      expect(r.particles.reduce((a, p) => a + p.weight, 0)).toBeCloseTo(1, 9);
      expect(r.ess).toBeGreaterThan(1);
      expect(r.ess).toBeLessThanOrEqual(r.particles.length + 1e-9);
    }
  });

  it('weighs a particle by its prior over the mixture of kernels, with twice the weighted variance', () => {
    const c = muConfig({ populationSize: 4 });
    const prev = [0.2, 0.5, 0.9, 1.4].map((mu, i) => ({
      round: 0,
      index: i,
      values: { mu },
      u: [mu],
      d: [],
      seeds: [i],
      distance: i,
      weight: [0.1, 0.2, 0.3, 0.4][i]!,
    }));
    const state: SmcState = { rounds: [{ round: 0, epsilon: Infinity, proposed: 4, runs: 4, acceptance: 1, ess: 3, particles: prev }] };
    const plan = planRound(c, state);
    if ('stop' in plan) throw new Error(plan.stop);
    expect(plan.epsilon).toBe(weightedQuantile([0, 1, 2, 3], [0.1, 0.2, 0.3, 0.4], 0.5)); // 2: the weighted median
    const kept = [0.7, 1.1, -4.9].map((mu, i) => ({ round: 1, index: i, values: { mu }, u: [mu], d: [], seeds: [i], distance: 0 }));
    const closed = closeRound(c, state, plan, kept, 3).rounds[1]!;
    // by hand: variance of the kernel = 2 x the weighted variance of the last population
    const m = prev.reduce((a, p) => a + p.weight * p.u[0]!, 0);
    const v = 2 * prev.reduce((a, p) => a + p.weight * (p.u[0]! - m) ** 2, 0);
    const raw = kept.map((k) => 1 / prev.reduce((a, p) => a + p.weight * Math.exp(-((k.u[0]! - p.u[0]!) ** 2) / (2 * v)), 0));
    const total = raw.reduce((a, b) => a + b, 0);
    closed.particles.forEach((p, i) => expect(p.weight).toBeCloseTo(raw[i]! / total, 12));
    expect(closed.acceptance).toBe(1);
    expect(closed.ess).toBeCloseTo(total ** 2 / raw.reduce((a, b) => a + b * b, 0), 9);
    expect(makeKernel(c.parameters, prev).chol[0]![0]).toBeCloseTo(Math.sqrt(v), 12);
  });

  it('proposes the same particles for the same seed, round and index, and others for another seed', () => {
    const c = muConfig();
    const plan = planRound(c, { rounds: [] });
    if ('stop' in plan) throw new Error(plan.stop);
    expect(propose(c, plan, 5)).toEqual(propose(c, plan, 5));
    expect(propose(c, plan, 5).values.mu).not.toBe(propose(c, plan, 6).values.mu);
    expect(propose({ ...c, seed: 12 }, plan, 5).values.mu).not.toBe(propose(c, plan, 5).values.mu);
    expect(propose(c, plan, 5).seeds[0]).toBe(mix(11, 'run', 0, 5, 0) % 2_147_483_647);
  });

  it('continues from a state saved after a round (through JSON) to the same posterior', async () => {
    const c = muConfig({ budget: 1500 });
    const straight = await runSmc(c, { rounds: [] }, { score: normalScore });
    // stopped in round 2: the saved state is that of round 1
    let saved: SmcState = { rounds: [] };
    const stop = new AbortController();
    const partial = await runSmc(
      c,
      { rounds: [] },
      {
        score: async (cands) => {
          if (cands[0]!.round === 2) stop.abort();
          return normalScore(cands);
        },
        saved: (s) => void (saved = JSON.parse(JSON.stringify(s)) as SmcState),
        signal: stop.signal,
      },
    );
    expect(partial.rounds).toHaveLength(2);
    expect(saved.rounds).toHaveLength(2);
    const resumed = await runSmc(c, saved, { score: normalScore });
    expect(resumed.rounds.map((r) => r.epsilon)).toEqual(straight.rounds.map((r) => r.epsilon));
    expect(currentPopulation(resumed)!.particles).toEqual(currentPopulation(straight)!.particles);
    expect(runsSpent(resumed)).toBe(runsSpent(straight));
  });

  it('fits a rate with a log-uniform prior, and a discrete parameter from its values', async () => {
    const obs = (() => {
      const rng = new Rng(3);
      return Array.from({ length: 60 }, () => -Math.log(1 - rng.next()) / 0.5); // exponential, rate 0.5
    })();
    const obsMean = obs.reduce((a, b) => a + b, 0) / obs.length;
    const params: Parameter[] = [
      parameterOf('rate', { path: '/x', prior: { log_uniform: [0.01, 10] } }),
      parameterOf('k', { input: 'k', values: [1, 2, 3, 4] }),
    ];
    const c: SmcConfig = { parameters: params, populationSize: 150, seedsPerParticle: 2, budget: 10000, seed: 5 };
    const s = await runSmc(
      c,
      { rounds: [] },
      {
        score: async (cands) =>
          cands.map((cand) => {
            // k only shifts a second statistic whose observed value is 3
            let d = 0;
            for (const seed of cand.seeds) {
              const rng = new Rng(seed);
              let m = 0;
              for (let i = 0; i < 60; i++) m += -Math.log(1 - rng.next()) / (cand.values.rate as number);
              let kk = 0;
              for (let i = 0; i < 30; i++) kk += (cand.values.k as number) + gaussian(rng);
              d += Math.abs(m / 60 - obsMean) / obsMean + Math.abs(kk / 30 - 3);
            }
            return d / cand.seeds.length;
          }),
      },
    );
    const pop = currentPopulation(s)!;
    const rate = summarise(params[0]!, pop.particles);
    expect(rate.lo90 as number).toBeLessThan(0.5);
    expect(rate.hi90 as number).toBeGreaterThan(0.5);
    expect((rate.hi90 as number) - (rate.lo90 as number)).toBeLessThan(0.6);
    expect(rate.prior_width).toBeCloseTo(9.99, 9);
    const k = summarise(params[1]!, pop.particles);
    expect(k).toMatchObject({ median: 3, lo90: 3, hi90: 3, prior_width: 3 });
    expect(pop.particles.every((p) => p.seeds.length === 2)).toBe(true);
    expect(runsSpent(s)).toBeLessThanOrEqual(10000);
    expect(runsSpent(s) % 2).toBe(0);
  });

  it('refuses a budget too small for a first population, and priors that make no sense', () => {
    expect(() => planRound(muConfig({ budget: 5 }), { rounds: [] })).toThrow(/budget of 5 runs cannot pay/);
    expect(() => parameterOf('a', { input: 'a', prior: { uniform: [1, 0] } })).toThrow(/low to high/);
    expect(() => parameterOf('a', { input: 'a', prior: { log_uniform: [0, 1] } })).toThrow(/above 0/);
    expect(() => parameterOf('a', { input: 'a', path: '/x', prior: { uniform: [0, 1] } })).toThrow(/one of "input"/);
    expect(() => parameterOf('a', { input: 'a' })).toThrow(/one of "prior" or "values"/);
    expect(() => parameterOf('a', { input: 'a', prior: { normal: { mean: 0, sd: 0 } } })).toThrow(/sd must be above 0/);
  });

  it('stops once every particle fits exactly (a deterministic model on a plateau)', async () => {
    const c = muConfig({ budget: 5000, populationSize: 100 });
    const s = await runSmc(
      c,
      { rounds: [] },
      { score: async (cands) => cands.map((x) => ((x.values.mu as number) > 1 && (x.values.mu as number) <= 1.5 ? 0 : 1)) },
    );
    expect(s.stopped).toBe('converged');
    expect(runsSpent(s)).toBeLessThan(5000);
    const sum = summarise(c.parameters[0]!, currentPopulation(s)!.particles);
    expect(sum.lo90 as number).toBeGreaterThan(1);
    expect(sum.hi90 as number).toBeLessThanOrEqual(1.5);
  });
});
