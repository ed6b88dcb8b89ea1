// Seeds for the worlds' random choices: one 32-bit seed mixed from a run seed and any parts
// (a step number, an agent id), so that a choice depends on what it is about, never on the order
// in which work happened to run. The generator itself is the project's Rng (mulberry32).
import { Rng } from '../../../core/runtime/rng.js';
import { fmix32, fnv1a } from '../../../shared/util/hash.js';

/** FNV-1a over the parts' text, then a murmur3 finaliser: the same parts give the same seed everywhere. */
export function mixSeed(...parts: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5;
  for (const part of parts) h = fnv1a(`${typeof part}:${String(part)}\u0000`, h);
  return fmix32(h);
}

/**
 * mixSeed's state after the parts a family of seeds shares (a step's), to go on from with
 * mixSeedFrom: mixSeedFrom(seedPrefix(a, b), c) === mixSeed(a, b, c), with the shared parts hashed once.
 */
export function seedPrefix(...parts: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5;
  for (const part of parts) h = fnv1a(`${typeof part}:${String(part)}\u0000`, h);
  return h;
}

/** mixSeed of the prefix's parts and one more (see seedPrefix). */
export function mixSeedFrom(prefix: number, part: string | number): number {
  const h = typeof part === 'string' ? fnv1a(part, fnv1a('string:', prefix)) : fnv1a(String(part), fnv1a('number:', prefix));
  return fmix32(fnv1a('\u0000', h));
}

/** mixSeedFrom(prefix, part) for text parts, the part's type hashed once: for the many agents of a step. */
export function textSeedsFrom(prefix: number): (part: string) => number {
  const typed = fnv1a('string:', prefix);
  return (part) => fmix32(fnv1a('\u0000', fnv1a(part, typed)));
}

/** A generator seeded from the parts (e.g. `seededRng(seed, 'order', step)`). */
export function seededRng(...parts: ReadonlyArray<string | number>): Rng {
  return new Rng(mixSeed(...parts));
}

/** Fisher-Yates in place with the given generator; returns the array. */
export function shuffleInPlace<T>(items: T[], rng: Rng): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    const t = items[i]!;
    items[i] = items[j]!;
    items[j] = t;
  }
  return items;
}

/** Compares strings by code unit (not locale), the order every machine agrees on. */
export function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
