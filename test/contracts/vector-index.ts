// The contract of a VectorIndex (src/core/memory/vector-index.ts): rows numbered in the order added,
// unit-length rows read back, and exact top-k search, best first, within the options' ranges.
import { describe, expect, it } from 'vitest';
import type { VectorIndexFactory } from '../../src/core/memory/vector-index.js';
import { Rng } from '../../src/core/runtime/rng.js';

const DIM = 24;

function vectors(n: number, seed: number): number[][] {
  const rng = new Rng(seed);
  return Array.from({ length: n }, () => Array.from({ length: DIM }, () => rng.next() * 2 - 1));
}

const cosine = (a: ArrayLike<number>, b: ArrayLike<number>) => {
  let d = 0,
    na = 0,
    nb = 0;
  for (let i = 0; i < a.length; i++) {
    d += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return d / Math.sqrt(na * nb);
};

/** The rows a brute-force scan ranks first (the answer any index must give). */
function expected(rows: number[][], query: number[], k: number, keep: (row: number) => boolean, min = -Infinity) {
  return rows
    .map((v, row) => ({ row, score: cosine(v, query) }))
    .filter((h) => keep(h.row) && h.score >= min)
    .sort((a, b) => b.score - a.score || a.row - b.row)
    .slice(0, k);
}

export function vectorIndexContract(name: string, make: VectorIndexFactory): void {
  describe(`VectorIndex: ${name}`, () => {
    const rows = vectors(300, 11);
    const queries = vectors(8, 12);
    const filled = () => {
      const index = make(DIM);
      rows.forEach((v, i) => expect(index.add(v)).toBe(i));
      return index;
    };

    it('numbers rows in the order added and gives each back at unit length, pointing the same way', () => {
      const index = make(DIM);
      expect(index.dimension).toBe(DIM);
      expect(index.size).toBe(0);
      rows.slice(0, 5).forEach((v, i) => expect(index.add(v)).toBe(i));
      expect(index.size).toBe(5);
      expect(index.byteLength).toBeGreaterThanOrEqual(0);
      for (let i = 0; i < 5; i++) {
        const got = index.get(i);
        expect(got).toHaveLength(DIM);
        expect(Math.hypot(...got)).toBeCloseTo(1, 5);
        expect(cosine(got, rows[i]!)).toBeCloseTo(1, 5);
      }
    });

    it('returns the top k by cosine similarity, best first, the same rows a brute-force scan ranks first', () => {
      const index = filled();
      for (const q of queries) {
        const hits = index.search(q, 10);
        const want = expected(rows, q, 10, () => true);
        expect(hits.map((h) => h.row)).toEqual(want.map((h) => h.row));
        hits.forEach((h, i) => expect(h.score).toBeCloseTo(want[i]!.score, 4));
        for (let i = 1; i < hits.length; i++) expect(hits[i]!.score).toBeLessThanOrEqual(hits[i - 1]!.score);
      }
    });

    it('searches only rows in [from, to), skips the excluded range and flagged rows, and drops hits under minSimilarity', () => {
      const index = filled();
      const skip = new Uint8Array(rows.length);
      for (let r = 0; r < rows.length; r += 7) skip[r] = 1;
      for (const q of queries) {
        const opts = { from: 20, to: 250, exclude: { from: 100, to: 140 }, skip, minSimilarity: 0.05 };
        const keep = (r: number) => r >= 20 && r < 250 && !(r >= 100 && r < 140) && skip[r] === 0;
        expect(index.search(q, 12, opts).map((h) => h.row)).toEqual(expected(rows, q, 12, keep, 0.05).map((h) => h.row));
        // `to` alone: nothing at or after it is returned (the recent window is searched separately)
        const before = index.search(q, 5, { to: 50 });
        expect(before.every((h) => h.row < 50)).toBe(true);
        expect(before.map((h) => h.row)).toEqual(expected(rows, q, 5, (r) => r < 50).map((h) => h.row));
      }
    });

    it('returns fewer than k when fewer rows qualify, and nothing from an empty index', () => {
      expect(make(DIM).search(queries[0]!, 3)).toEqual([]);
      const index = filled();
      expect(index.search(queries[0]!, 10, { from: 295 })).toHaveLength(5);
      expect(index.search(queries[0]!, 10, { from: 10, to: 10 })).toEqual([]);
    });
  });
}
