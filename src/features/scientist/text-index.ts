// Ranking texts by embedding similarity to a query, with the run's embedder. Vectors are cached
// by text, so each text is embedded once per index.
import type { Embedder } from '../../core/memory/embedder.js';
import { EngineError } from '../../shared/errors.js';

export interface SearchItem<K> {
  key: K;
  text: string;
}
export interface SearchHit<K> {
  key: K;
  text: string;
  score: number;
}

export class TextIndex {
  private readonly cache = new Map<string, Float32Array>();

  constructor(readonly embedder: Embedder) {}

  /** The `k` items most similar to the query (cosine of unit vectors), best first; ties keep item order. */
  async search<K>(query: string, items: readonly SearchItem<K>[], k: number, minScore = -1): Promise<SearchHit<K>[]> {
    if (items.length === 0 || k <= 0) return [];
    const missing = [...new Set([query, ...items.map((i) => i.text)].filter((t) => !this.cache.has(t)))];
    if (missing.length > 0) {
      const vectors = await this.embedder.embed(missing);
      if (vectors.length !== missing.length) {
        throw new EngineError(`embedder ${this.embedder.id} returned ${vectors.length} vectors for ${missing.length} texts`, 'EMBEDDER');
      }
      missing.forEach((t, i) => this.cache.set(t, vectors[i]!));
    }
    const q = this.cache.get(query)!;
    return items
      .map((item, order) => ({ key: item.key, text: item.text, score: dot(q, this.cache.get(item.text)!), order }))
      .filter((h) => h.score >= minScore)
      .sort((a, b) => b.score - a.score || a.order - b.order)
      .slice(0, k)
      .map(({ order: _order, ...hit }) => hit);
  }
}

function dot(a: Float32Array, b: Float32Array): number {
  const n = Math.min(a.length, b.length);
  let s = 0;
  for (let i = 0; i < n; i++) s += a[i]! * b[i]!;
  return s;
}
