// The vector store: exact top-k cosine (int8 SIMD pre-scan + Float32 rescoring must equal brute
// force), ranges, exclusions, minimum similarity, growth, and the token budget's trimming order.
import { describe, expect, it } from 'vitest';
import { VectorStore } from '../src/core/memory/vector-store.js';
import { isSampleTurn, trimToBudget, type PromptPlan } from '../src/core/memory/token-budget.js';

function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
}

/** Vectors clustered around a few directions, so many scores are close (the hard case for pruning). */
function clustered(n: number, dim: number, seed: number): Float32Array[] {
  const r = rng(seed);
  const centres = Array.from({ length: 5 }, () => Float32Array.from({ length: dim }, r));
  return Array.from({ length: n }, (_, i) => Float32Array.from(centres[i % 5]!, (c) => c + 0.3 * r()));
}

describe('vector store', () => {
  for (const simd of [true, false]) {
    it(`returns exactly the brute-force top k (${simd ? 'SIMD' : 'JS'} scan), with ranges, exclusions and min similarity`, () => {
      for (const dim of [5, 64, 300]) {
        const store = new VectorStore(dim, { simd, initialCapacity: 16 });
        const vectors = clustered(1200, dim, dim);
        for (const v of vectors) store.add(v);
        expect(store.size).toBe(1200);
        const r = rng(99);
        for (let q = 0; q < 12; q++) {
          const query = Float32Array.from({ length: dim }, r);
          for (const v of [vectors[q * 7]!]) query.set(v.map((x, i) => x + 0.2 * query[i]!));
          const options = [
            {},
            { from: 100, to: 1000 },
            { exclude: { from: 1190, to: 1200 }, minSimilarity: 0.5 },
            { from: 10, exclude: { from: 0, to: 600 } },
          ][q % 4]!;
          for (const k of [1, 5, 12]) {
            expect(store.search(query, k, options)).toEqual(store.searchExact(query, k, options));
          }
        }
      }
    });
  }

  it('finds a stored vector first, honours exclusion and the minimum similarity', () => {
    const store = new VectorStore(8);
    const a = [1, 0, 0, 0, 0, 0, 0, 0];
    const b = [0.9, 0.1, 0, 0, 0, 0, 0, 0];
    const c = [0, 0, 0, 0, 0, 0, 0, 1];
    for (const v of [a, b, c]) store.add(v);
    expect(store.search(a, 2).map((h) => h.row)).toEqual([0, 1]);
    expect(store.search(a, 2, { exclude: { from: 0, to: 1 } }).map((h) => h.row)).toEqual([1, 2]);
    expect(store.search(a, 3, { minSimilarity: 0.5 }).map((h) => h.row)).toEqual([0, 1]);
    expect(store.search(a, 3)[0]!.score).toBeCloseTo(1, 6);
    expect(store.search(a, 0)).toEqual([]);
    expect(store.search(a, 3, { from: 3 })).toEqual([]);
  });

  it('normalises rows, keeps zero vectors harmless, rejects wrong dimensions', () => {
    const store = new VectorStore(4);
    store.add([3, 4, 0, 0]);
    store.add([0, 0, 0, 0]);
    expect(Array.from(store.get(0))).toEqual([0.6000000238418579, 0.800000011920929, 0, 0]);
    expect(store.search([0, 0, 0, 0], 2)).toEqual([]);
    expect(store.search([1, 1, 0, 0], 2).map((h) => h.row)).toEqual([0, 1]);
    expect(() => store.add([1, 2, 3])).toThrow(/expected a 4-dimensional vector, got 3/);
    expect(() => store.search([1], 1)).toThrow(/4-dimensional query/);
    expect(() => new VectorStore(0)).toThrow(/positive integer/);
  });

  it('grows one buffer and costs Float32 + int8 + scale bytes per row', () => {
    const store = new VectorStore(256, { initialCapacity: 16 });
    for (let i = 0; i < 1000; i++) store.add(Float32Array.from({ length: 256 }, (_, j) => Math.sin(i + j)));
    expect(store.bytesPerRow).toBe(256 * 4 + 256 + 4);
    expect(store.byteLength).toBeLessThan(1000 * store.bytesPerRow * 2.5);
    expect(store.search(store.get(500), 1)[0]!.row).toBe(500);
  });
});

describe('token budget', () => {
  const msg = (id: number, words: number) => ({ id, text: 'word '.repeat(words) });
  type M = ReturnType<typeof msg>;
  const measure = (p: PromptPlan<M>) =>
    100 +
    p.summary.length / 4 +
    p.relevant.reduce((a, m) => a + m.text.length / 4, 0) +
    p.window.reduce((a, m) => a + m.text.length / 4, 0);
  const plan: PromptPlan<M> = {
    summary: 'x'.repeat(200), // 50 tokens
    relevant: [msg(7, 40), msg(2, 40), msg(5, 40)], // display order: by similarity; 50 tokens each
    window: [msg(10, 40), msg(11, 40), msg(12, 40)],
  };

  it('keeps everything that fits', () => {
    const r = trimToBudget(plan, 10_000, measure);
    expect(r.fits).toBe(true);
    expect(r.plan).toEqual(plan);
    expect(r.dropped).toEqual({ relevant: 0, window: 0, summary: false });
  });

  it('drops retrieved messages oldest first, then the window oldest first, then the summary, then the last message', () => {
    const steps: Array<{ budget: number; relevant: number[]; window: number[]; summary: boolean }> = [
      { budget: 450, relevant: [7, 2, 5], window: [10, 11, 12], summary: true },
      { budget: 449, relevant: [7, 5], window: [10, 11, 12], summary: true },
      { budget: 399, relevant: [7], window: [10, 11, 12], summary: true },
      { budget: 349, relevant: [], window: [10, 11, 12], summary: true },
      { budget: 299, relevant: [], window: [11, 12], summary: true },
      { budget: 249, relevant: [], window: [12], summary: true },
      { budget: 199, relevant: [], window: [12], summary: false },
      { budget: 149, relevant: [], window: [], summary: false },
    ];
    for (const s of steps) {
      const r = trimToBudget(plan, s.budget, measure);
      expect(r.fits).toBe(true);
      expect(r.tokens).toBeLessThanOrEqual(s.budget);
      expect({
        budget: s.budget,
        relevant: r.plan.relevant.map((m) => m.id),
        window: r.plan.window.map((m) => m.id),
        summary: r.plan.summary !== '',
      }).toEqual(s);
    }
  });

  it('reports when the fixed parts alone exceed the budget', () => {
    const r = trimToBudget(plan, 50, measure);
    expect(r.fits).toBe(false);
    expect(r.plan).toEqual({ summary: '', relevant: [], window: [] });
    expect(r.dropped).toEqual({ relevant: 3, window: 3, summary: true });
  });

  it('samples prompt sizes at 10, 20, 50, 100, 200, 500, ...', () => {
    const turns = Array.from({ length: 2000 }, (_, i) => i + 1).filter(isSampleTurn);
    expect(turns).toEqual([10, 20, 50, 100, 200, 500, 1000, 2000]);
  });
});
