// Draws on top of the project's seeded generator (src/core/runtime/rng.ts `Rng`): independent streams
// derived from one seed and a label, a standard normal, the normal's distribution function.
import { Rng } from '../../core/runtime/rng.js';
import { fmix32, fnv1a } from '../../shared/util/hash.js';

/** A 32-bit seed from a seed and a label (FNV-1a over the label, mixed with both halves of the seed). */
export function deriveSeed(seed: number, label: string): number {
  let h = Math.imul(0x811c9dc5 ^ (seed >>> 0), 0x01000193);
  h ^= Math.floor(seed / 4294967296) >>> 0;
  // a final avalanche, so nearby seeds give unrelated streams
  return fmix32(fnv1a(label, h));
}

/** A generator for `label` under `seed`: the same pair always gives the same draws. */
export function rngFor(seed: number, label: string): Rng {
  return new Rng(deriveSeed(seed, label));
}

/** One standard normal draw (Box-Muller, two uniform draws). */
export function standardNormal(rng: Rng): number {
  const u1 = 1 - rng.next(); // (0, 1]: log is finite
  const u2 = rng.next();
  return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
}

/** The standard normal's distribution function (Abramowitz and Stegun 7.1.26, error under 1.5e-7). */
export function normalCdf(z: number): number {
  const x = Math.abs(z) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * x);
  const erf = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-x * x);
  return z >= 0 ? (1 + erf) / 2 : (1 - erf) / 2;
}
