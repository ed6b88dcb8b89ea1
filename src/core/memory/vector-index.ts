// What the environment needs from a store of message embeddings: append rows, read one back,
// and exact top-k search. VectorStore (./vector-store.ts) is the in-memory one; a database-backed
// store implements the same interface and is passed as MemoryEnvironmentOptions.vectorIndex.
export interface SearchOptions {
  /** First row considered (default 0). */
  from?: number;
  /** Row after the last one considered (default: all rows). */
  to?: number;
  /** Rows in [exclude.from, exclude.to) are skipped (e.g. the recent window already in the prompt). */
  exclude?: { from: number; to: number };
  /** Only rows at least this similar are returned. */
  minSimilarity?: number;
  /** Rows whose flag is non-zero are skipped (e.g. texts repeated later). */
  skip?: Uint8Array;
}

export interface Hit {
  row: number;
  score: number;
}

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
