// Small non-cryptographic hashes shared by the seeded parts of sop (populations, worlds, the local
// embedder): FNV-1a over text, and murmur3's final avalanche so nearby inputs land far apart.

/** FNV-1a over the characters of `text` (UTF-16 code units), continuing from `h`. */
export function fnv1a(text: string, h = 0x811c9dc5): number {
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h;
}

/** murmur3's fmix32: an avalanche of the bits of `h`, as an unsigned 32-bit number. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
