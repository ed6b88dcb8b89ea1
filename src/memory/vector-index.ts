// What the environment needs from a store of message embeddings: append rows, read one back,
// and exact top-k search. VectorStore (./vector-store.ts) is the in-memory one; a database-backed
// store implements the same interface and is passed as MemoryEnvironmentOptions.vectorIndex.
import type { Hit, SearchOptions } from './vector-store.js';

export type { Hit, SearchOptions } from './vector-store.js';

export interface VectorIndex {
  readonly dimension: number;
  /** Rows stored; row numbers are 0, 1, ... in the order added. */
  readonly size: number;
  /** Bytes held (for run summaries and benchmarks; 0 when not known). */
  readonly byteLength: number;
  /** Append a vector; returns its row number. */
  add(vector: ArrayLike<number>): number;
  /** The stored (unit-length) vector of a row. */
  get(row: number): Float32Array;
  /** The k rows most similar to the query, best first, within the options' ranges. */
  search(query: ArrayLike<number>, k: number, options?: SearchOptions): Hit[];
}

/** Makes the index once the embedding dimension is known (the first embedded message). */
export type VectorIndexFactory = (dimension: number) => VectorIndex;
