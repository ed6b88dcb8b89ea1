// The perturbation kernel of ABC-SMC (Beaumont, Cornuet, Marin and Robert 2009; Filippi et al.
// 2013): a particle drawn from the last population by its weight is moved by a multivariate
// Gaussian whose covariance is twice the population's weighted covariance (in the parameters'
// internal coordinates, priors.ts), and a discrete parameter keeps its value with probability
// 0.7 or jumps to another of its values, each alike. The kernel's density gives the new
// particles' importance weights (smc.ts). Pure: no I/O.
import type { Rng } from '../../core/runtime/rng.js';
import { gaussian, type ContinuousParameter, type Parameter } from './priors.js';

/** A discrete parameter keeps its value with this probability (pyabc's DiscreteJumpTransition default). */
export const STAY = 0.7;

export interface WeightedPoint {
  /** Internal coordinates of the continuous parameters, in their order. */
  u: number[];
  /** Indices of the discrete parameters' values, in their order. */
  d: number[];
  /** Normalised weight. */
  weight: number;
}

export interface Kernel {
  /** Lower-triangular Cholesky factor of the Gaussian part's covariance. */
  chol: number[][];
  /** Log of the Gaussian's normalising constant (-log det L - d/2 log 2 pi). */
  logNorm: number;
  /** Sizes of the discrete parameters' lists. */
  sizes: number[];
}

/** The weighted covariance of the points' continuous coordinates (weights summing to 1). */
export function weightedCovariance(points: readonly WeightedPoint[], dim: number): number[][] {
  const mean = new Array<number>(dim).fill(0);
  for (const p of points) for (let i = 0; i < dim; i++) mean[i]! += p.weight * p.u[i]!;
  const cov = Array.from({ length: dim }, () => new Array<number>(dim).fill(0));
  for (const p of points)
    for (let i = 0; i < dim; i++) for (let j = 0; j <= i; j++) cov[i]![j]! += p.weight * (p.u[i]! - mean[i]!) * (p.u[j]! - mean[j]!);
  for (let i = 0; i < dim; i++) for (let j = 0; j < i; j++) cov[j]![i] = cov[i]![j]!;
  return cov;
}

/** The Cholesky factor L (L L^T = a) of a symmetric matrix, or undefined when it is not positive definite. */
export function cholesky(a: readonly number[][]): number[][] | undefined {
  const n = a.length;
  const l = Array.from({ length: n }, () => new Array<number>(n).fill(0));
  for (let i = 0; i < n; i++)
    for (let j = 0; j <= i; j++) {
      let s = a[i]![j]!;
      for (let k = 0; k < j; k++) s -= l[i]![k]! * l[j]![k]!;
      if (i === j) {
        if (!(s > 0)) return undefined;
        l[i]![i] = Math.sqrt(s);
      } else l[i]![j] = s / l[j]![j]!;
    }
  return l;
}

/**
 * The kernel for the next round from the last population: covariance twice the weighted one, with
 * a floor on each variance (a millionth of the prior's spread, squared) so a population that has
 * collapsed onto one value in a coordinate still moves; a covariance that is not positive
 * definite falls back to its diagonal.
 */
export function makeKernel(params: readonly Parameter[], population: readonly WeightedPoint[]): Kernel {
  const cont = params.filter((p): p is ContinuousParameter => p.kind === 'continuous');
  const sizes = params.flatMap((p) => (p.kind === 'discrete' ? [p.values.length] : []));
  const dim = cont.length;
  const cov = weightedCovariance(population, dim).map((row) => row.map((v) => 2 * v));
  cont.forEach((p, i) => {
    const floor = (1e-6 * (Number.isFinite(p.scale) && p.scale > 0 ? p.scale : 1)) ** 2;
    cov[i]![i] = Math.max(cov[i]![i]!, floor);
  });
  const chol = cholesky(cov) ?? cholesky(cov.map((row, i) => row.map((v, j) => (i === j ? v : 0))))!;
  let logDet = 0;
  for (let i = 0; i < dim; i++) logDet += Math.log(chol[i]![i]!);
  return { chol, logNorm: -logDet - (dim / 2) * Math.log(2 * Math.PI), sizes };
}

/** A move of a point by the kernel: Gaussian for the continuous part, stay-or-jump for the discrete. */
export function perturb(k: Kernel, from: WeightedPoint, rng: Rng): { u: number[]; d: number[] } {
  const dim = from.u.length;
  const z = Array.from({ length: dim }, () => gaussian(rng));
  const u = from.u.map((x, i) => {
    let s = x;
    for (let j = 0; j <= i; j++) s += k.chol[i]![j]! * z[j]!;
    return s;
  });
  const d = from.d.map((v, i) => {
    const n = k.sizes[i]!;
    if (n < 2 || rng.next() < STAY) return v;
    const other = Math.floor(rng.next() * (n - 1)); // one of the n - 1 other values, alike
    return other >= v ? other + 1 : other;
  });
  return { u, d };
}

/** Log density of moving `from` to `to` with the kernel. */
export function logKernel(k: Kernel, from: WeightedPoint, to: { u: readonly number[]; d: readonly number[] }): number {
  const dim = to.u.length;
  // solve L y = (to - from): the Mahalanobis distance is |y|^2
  const y = new Array<number>(dim);
  let m = 0;
  for (let i = 0; i < dim; i++) {
    let s = to.u[i]! - from.u[i]!;
    for (let j = 0; j < i; j++) s -= k.chol[i]![j]! * y[j]!;
    y[i] = s / k.chol[i]![i]!;
    m += y[i]! * y[i]!;
  }
  let lp = k.logNorm - 0.5 * m;
  to.d.forEach((v, i) => {
    const n = k.sizes[i]!;
    lp += n < 2 ? 0 : Math.log(v === from.d[i] ? STAY : (1 - STAY) / (n - 1));
  });
  return lp;
}

/** log(sum(exp(xs))) without overflow. */
export function logSumExp(xs: readonly number[]): number {
  let max = -Infinity;
  for (const x of xs) if (x > max) max = x;
  if (max === -Infinity) return -Infinity;
  let s = 0;
  for (const x of xs) s += Math.exp(x - max);
  return max + Math.log(s);
}
