// Draws on top of the project's seeded generator (src/runtime/rng.ts `Rng`): independent streams
// derived from one seed and a label, a standard normal, the normal's distribution function.
import { Rng } from '../runtime/rng.js';

/** A 32-bit seed from a seed and a label (FNV-1a over the label, mixed with both halves of the seed). */
export function deriveSeed(seed: number, label: string): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  h = Math.imul(h, 0x01000193);
  h ^= Math.floor(seed / 4294967296) >>> 0;
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  // A final avalanche (murmur3's), so nearby seeds give unrelated streams.
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
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
