// Approximate Bayesian computation by sequential Monte Carlo (ABC-SMC: Toni et al. 2009, with the
// adaptive tolerances of Del Moral et al. 2012 and the kernel of Beaumont et al. 2009), as pure
// functions of a saved state, so a calibration killed at any point continues from its last
// completed round and gives the same posterior whatever ran its runs (docs/calibrate.md).
//
// Round 0 draws particles from the prior and keeps every one whose runs could be scored. Round t
// sets its tolerance to the weighted median (`quantile`) of the last population's distances,
// proposes particles (an ancestor drawn by weight, moved by the kernel, redrawn while outside the
// prior's support), runs them, and keeps, in proposal order, those whose distance is at most the
// tolerance, until it has its population. A kept particle's weight is its prior density over the
// mixture of kernels it could have come from: pi(theta) / sum_j W_j K(theta | theta_j).
//
// Every draw comes from a generator seeded by (seed, round, proposal index), never from how many
// draws came before, and proposals are kept in index order, never in the order runs end: so the
// batches can run anywhere, in any order. The budget counts runs: a round that the budget cuts short
// is the last, and is kept when it has at least a fifth of a population.
import { Rng } from '../../core/runtime/rng.js';
import { fmix32, fnv1a } from '../../shared/util/hash.js';
import { logKernel, logSumExp, makeKernel, perturb, type Kernel, type WeightedPoint } from './kernel.js';
import { CalibrateError, type Parameter, type ParameterValue } from './priors.js';

export interface SmcConfig {
  parameters: Parameter[];
  /** Particles in a population. */
  populationSize: number;
  /** Runs of each particle (each with its own seed); its distance is over all of them. */
  seedsPerParticle: number;
  /** Runs in all (every round's, with those of proposals not kept). */
  budget: number;
  seed: number;
  /** The tolerance of a round is this weighted quantile of the last population's distances (default 0.5). */
  quantile?: number;
}

/** A proposed particle: its parameters' values and the seeds of its runs. */
export interface Candidate {
  round: number;
  index: number;
  /** name -> value, as runs get them. */
  values: Record<string, ParameterValue>;
  /** Internal coordinates (continuous) and value indices (discrete), in the parameters' order. */
  u: number[];
  d: number[];
  seeds: number[];
}

export interface Particle extends Candidate {
  distance: number;
  /** Normalised within its population. */
  weight: number;
}

export interface RoundRecord {
  round: number;
  /** The round's tolerance (null for round 0, which keeps every particle it could score). */
  epsilon: number | null;
  /** Particles proposed (each ran seedsPerParticle runs). */
  proposed: number;
  runs: number;
  acceptance: number;
  /** Effective sample size of the weights: (sum w)^2 / sum w^2. */
  ess: number;
  particles: Particle[];
  /** Cut short by the budget with too few particles to be a population: its runs are spent, its particles not used. */
  discarded?: boolean;
}

export interface SmcState {
  rounds: RoundRecord[];
  /** Why the calibration ended, once it has. */
  stopped?: string;
}

export interface RoundPlan {
  round: number;
  epsilon: number;
  /** Particles to keep (the population size, fewer when the budget cannot pay for more). */
  target: number;
  /** The population proposals are drawn from (round > 0). */
  previous?: Particle[];
  kernel?: Kernel;
  /** Acceptance expected before any proposal of this round has run. */
  expected: number;
}

export const DEFAULT_QUANTILE = 0.5;
/** The calibration ends when a round keeps fewer than this share of what it proposes. */
export const MIN_ACCEPTANCE = 0.01;

/**
 * Particles in a population by default: a sixtieth of the particles the budget pays for, from 20
 * to 1000, so the budget pays for about ten rounds (the tolerance halves about once a round).
 */
export function defaultPopulation(budget: number, seedsPerParticle: number): number {
  return Math.max(20, Math.min(1000, Math.round(budget / seedsPerParticle / 60)));
}

/** A 32-bit seed from parts (FNV-1a, then murmur3's finaliser). */
export function mix(...parts: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5;
  for (const p of parts) h = fnv1a(`${typeof p}:${String(p)}\u0000`, h);
  return fmix32(h);
}

/** The runs spent so far. */
export const runsSpent = (s: SmcState): number => s.rounds.reduce((n, r) => n + r.runs, 0);

/** The population the calibration stands at: the last round kept. */
export function currentPopulation(s: SmcState): RoundRecord | undefined {
  return [...s.rounds].reverse().find((r) => !r.discarded);
}

/** The smallest round that is still a population. */
export const minPopulation = (c: SmcConfig): number => Math.max(Math.min(10, c.populationSize), Math.ceil(c.populationSize / 5));

/** A weighted quantile (inverse of the weighted empirical distribution function). */
export function weightedQuantile(values: readonly number[], weights: readonly number[], q: number): number {
  const order = values.map((_, i) => i).sort((a, b) => values[a]! - values[b]!);
  const total = weights.reduce((s, w) => s + w, 0);
  let cum = 0;
  for (const i of order) {
    cum += weights[i]! / total;
    if (cum >= q - 1e-12) return values[i]!;
  }
  return values[order[order.length - 1]!]!;
}

/** What the next round does, or why the calibration stops. */
export function planRound(c: SmcConfig, s: SmcState): RoundPlan | { stop: string } {
  if (s.stopped) return { stop: s.stopped };
  const left = Math.floor((c.budget - runsSpent(s)) / c.seedsPerParticle);
  const lastRound = s.rounds[s.rounds.length - 1];
  const pop = currentPopulation(s);
  if (lastRound?.discarded) return { stop: 'budget' };
  if (!pop) {
    const target = Math.min(c.populationSize, left);
    if (target < minPopulation(c))
      throw new CalibrateError(
        `a budget of ${c.budget} runs cannot pay for a first population of ${minPopulation(c)} particles ` +
          `(${c.seedsPerParticle} run${c.seedsPerParticle > 1 ? 's' : ''} each); give a larger --budget`,
      );
    return { round: 0, epsilon: Infinity, target, expected: 1 };
  }
  if (pop.particles.length < c.populationSize) return { stop: 'budget' }; // cut short: it was the last
  if (pop.acceptance < MIN_ACCEPTANCE) return { stop: 'acceptance' };
  const q = c.quantile ?? DEFAULT_QUANTILE;
  const distances = pop.particles.map((p) => p.distance);
  let eps = weightedQuantile(
    distances,
    pop.particles.map((p) => p.weight),
    q,
  );
  const last = pop.epsilon ?? Infinity;
  if (eps >= last) {
    // distances that take few values (a deterministic model) can hold the quantile where it was:
    // the tolerance still shrinks, to the largest distance below the last one
    const below = distances.filter((d) => d < last);
    if (below.length === 0) return { stop: 'converged' }; // every kept particle fits as well as the tolerance allows
    eps = Math.max(...below);
  }
  const expected = pop.round === 0 ? q : Math.max(pop.acceptance, MIN_ACCEPTANCE);
  const target = Math.min(c.populationSize, Math.floor(left * expected));
  if (target < minPopulation(c)) return { stop: 'budget' };
  const points: WeightedPoint[] = pop.particles;
  return { round: pop.round + 1, epsilon: eps, target, previous: pop.particles, kernel: makeKernel(c.parameters, points), expected };
}

function valuesOf(c: SmcConfig, u: readonly number[], d: readonly number[]): Record<string, ParameterValue> {
  const out: Record<string, ParameterValue> = {};
  let i = 0;
  let j = 0;
  for (const p of c.parameters) out[p.name] = p.kind === 'continuous' ? p.value(u[i++]!) : p.values[d[j++]!]!;
  return out;
}

/** Log prior density of a particle's coordinates (-Infinity outside the support). */
export function logPrior(c: SmcConfig, u: readonly number[]): number {
  let lp = 0;
  let i = 0;
  for (const p of c.parameters) if (p.kind === 'continuous') lp += p.logDensity(u[i++]!);
  return lp; // discrete values are uniform: a constant
}

/** Proposal `index` of a round: the same whenever and wherever it is made. */
export function propose(c: SmcConfig, plan: RoundPlan, index: number): Candidate {
  const rng = new Rng(mix(c.seed, 'propose', plan.round, index));
  let u: number[];
  let d: number[];
  if (!plan.previous) {
    u = [];
    d = [];
    for (const p of c.parameters) {
      if (p.kind === 'continuous') u.push(p.sample(rng));
      else d.push(Math.floor(rng.next() * p.values.length));
    }
  } else {
    const prev = plan.previous;
    let moved: { u: number[]; d: number[] } | undefined;
    for (let attempt = 0; attempt < 10_000 && !moved; attempt++) {
      let r = rng.next();
      let from = prev[prev.length - 1]!;
      for (const p of prev) {
        r -= p.weight;
        if (r < 0) {
          from = p;
          break;
        }
      }
      const m = perturb(plan.kernel!, from, rng);
      if (logPrior(c, m.u) > -Infinity) moved = m;
    }
    if (!moved) throw new CalibrateError(`round ${plan.round}: 10000 moves of the kernel in a row left the prior's support`);
    ({ u, d } = moved);
  }
  const seeds = Array.from({ length: c.seedsPerParticle }, (_, k) => mix(c.seed, 'run', plan.round, index, k) % 2_147_483_647);
  return { round: plan.round, index, values: valuesOf(c, u, d), u, d, seeds };
}

/**
 * How many proposals to run next (0: the round is over), given how many have been proposed and
 * kept so far: enough to reach the target at the acceptance seen (or expected), with a tenth more,
 * within the budget left.
 */
export function batchSize(c: SmcConfig, plan: RoundPlan, s: SmcState, proposed: number, kept: number): number {
  const need = plan.target - kept;
  const left = Math.floor((c.budget - runsSpent(s)) / c.seedsPerParticle) - proposed;
  if (need <= 0 || left <= 0) return 0;
  const rate = proposed > 0 ? Math.max(kept, 1) / proposed : plan.expected;
  const want = rate >= 1 ? need : Math.ceil((need / Math.max(rate, MIN_ACCEPTANCE)) * 1.1);
  return Math.max(1, Math.min(left, want, 10 * c.populationSize));
}

/** Whether a scored proposal is kept (round 0 keeps every one that could be scored). */
export const accepts = (plan: RoundPlan, distance: number): boolean => Number.isFinite(distance) && distance <= plan.epsilon;

/** The round's record from its kept particles (in proposal order, distances known), with their weights. */
export function closeRound(
  c: SmcConfig,
  s: SmcState,
  plan: RoundPlan,
  kept: Array<Candidate & { distance: number }>,
  proposed: number,
): SmcState {
  let logW: number[];
  if (!plan.previous) logW = kept.map(() => 0);
  else {
    const prev = plan.previous;
    const logPrev = prev.map((p) => Math.log(p.weight));
    logW = kept.map((k) => logPrior(c, k.u) - logSumExp(prev.map((p, j) => logPrev[j]! + logKernel(plan.kernel!, p, k))));
  }
  const max = Math.max(...logW);
  const raw = logW.map((l) => Math.exp(l - max));
  const total = raw.reduce((a, b) => a + b, 0);
  const particles: Particle[] = kept.map((k, i) => ({ ...k, weight: raw[i]! / total }));
  const ess = particles.length ? 1 / particles.reduce((a, p) => a + p.weight * p.weight, 0) : 0;
  const record: RoundRecord = {
    round: plan.round,
    epsilon: Number.isFinite(plan.epsilon) ? plan.epsilon : null,
    proposed,
    runs: proposed * c.seedsPerParticle,
    acceptance: proposed > 0 ? kept.length / proposed : 0,
    ess,
    particles,
    ...(kept.length < Math.min(plan.target, minPopulation(c)) ? { discarded: true } : {}),
  };
  return { rounds: [...s.rounds, record] };
}

export interface LoopHooks {
  /** Scores of the candidates, in their order (Infinity: could not be scored); how is the caller's (runs, a test's model). */
  score(candidates: readonly Candidate[]): Promise<number[]>;
  /** The state after each completed round (saved by the caller: a calibration continues from it). */
  saved?(s: SmcState): void | Promise<void>;
  /** Told as each batch of a round is scored. */
  progress?(p: { round: number; epsilon: number; proposed: number; kept: number; target: number }): void;
  signal?: AbortSignal;
}

/**
 * Run rounds until the budget, the acceptance floor or an exact fit stops them, from `state`
 * (empty, or saved after a round). A round's proposals are scored in batches; an abort leaves the
 * round unfinished (the same call later proposes the same particles again).
 */
export async function runSmc(c: SmcConfig, state: SmcState, hooks: LoopHooks): Promise<SmcState> {
  let s = state;
  for (;;) {
    const plan = planRound(c, s);
    if ('stop' in plan) {
      if (s.stopped !== plan.stop) {
        s = { ...s, stopped: plan.stop };
        await hooks.saved?.(s);
      }
      return s;
    }
    const kept: Array<Candidate & { distance: number }> = [];
    let proposed = 0;
    for (;;) {
      const n = batchSize(c, plan, s, proposed, kept.length);
      if (n === 0) break;
      const batch = Array.from({ length: n }, (_, i) => propose(c, plan, proposed + i));
      const scores = await hooks.score(batch);
      if (hooks.signal?.aborted) return s;
      proposed += n;
      batch.forEach((cand, i) => {
        if (kept.length < plan.target && accepts(plan, scores[i]!)) kept.push({ ...cand, distance: scores[i]! });
      });
      hooks.progress?.({ round: plan.round, epsilon: plan.epsilon, proposed, kept: kept.length, target: plan.target });
    }
    s = closeRound(c, s, plan, kept, proposed);
    await hooks.saved?.(s);
  }
}

/** What a calibration of `budget` runs costs, from the figures of one run (`sop plan --budget`). */
export interface CalibrationPlan {
  budget: number;
  /** Runs it makes at most (its budget: it stops sooner only when every particle fits exactly, or a round keeps under 1%). */
  runs: number;
  /** Particles it proposes (runs / seeds per particle), and those of a population. */
  particles: number;
  population: number;
  seeds_per_particle: number;
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** USD, when the run's models have a price. */
  cost?: number;
  /** The runs' time one after another (a calibration runs several at once). */
  seconds: number;
}

export function calibrationPlan(
  budget: number,
  seedsPerParticle: number,
  population: number,
  perRun: { calls: number; prompt_tokens: number; completion_tokens: number; cost?: number; seconds: number },
): CalibrationPlan {
  const particles = Math.floor(budget / seedsPerParticle);
  const runs = particles * seedsPerParticle;
  return {
    budget,
    runs,
    particles,
    population,
    seeds_per_particle: seedsPerParticle,
    calls: runs * perRun.calls,
    prompt_tokens: runs * perRun.prompt_tokens,
    completion_tokens: runs * perRun.completion_tokens,
    ...(perRun.cost !== undefined ? { cost: runs * perRun.cost } : {}),
    seconds: runs * perRun.seconds,
  };
}
