// Types of recall.mjs, for the tests that import it (test/embedder-real.test.ts).
import type { Embedder } from '../../src/core/memory/embedder.js';

export interface ParaphraseSet {
  history: string[];
  queries: Array<{ query: string; relevant: number[] }>;
}
export declare const PARAPHRASES: ParaphraseSet;
export declare function recallAtK(
  embedder: Embedder,
  k?: number,
  set?: ParaphraseSet,
): Promise<{ recall: number; found: number; queries: number; misses: string[] }>;
