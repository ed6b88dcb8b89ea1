// The seeded streams of population states, written again from their documented definition
// (docs/population.md#seeds) so that the model tests compute their expected results without the
// engine: a stream is mulberry32 seeded with murmur3's fmix32 of FNV-1a over the parts, each part
// written as `${typeof part}:${part}` followed by a NUL.

export function mix(...parts: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5;
  for (const part of parts) {
    const text = `${typeof part}:${String(part)}\u0000`;
    for (let i = 0; i < text.length; i++) {
      h ^= text.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** mulberry32 from a 32-bit seed: next() in [0, 1). */
export function stream(...parts: ReadonlyArray<string | number>): { next(): number } {
  let s = mix(...parts);
  return {
    next() {
      s = (s + 0x6d2b79f5) >>> 0;
      let t = s;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** Fisher-Yates from the last item down, in place. */
export function shuffle<T>(items: T[], rng: { next(): number }): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(rng.next() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

/** The order a step's actions are applied in with the shuffle resolution: agents sorted by id (code units), shuffled from (seed, "order", step). */
export const shuffledAgents = (ids: readonly string[], seed: number, step: number): string[] =>
  shuffle(
    [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)),
    stream(seed, 'order', step),
  );

/** Reads a CSV with a header into rows of text (no quoting: the model files have none). */
export function csvRows(text: string): Array<Record<string, string>> {
  const [head, ...lines] = text.trim().split(/\r?\n/);
  const names = head!.split(',');
  return lines.map((l) => Object.fromEntries(l.split(',').map((v, i) => [names[i]!, v])));
}
