// The embedder interface: batch text -> unit vectors. Implementations: local (default),
// transformers:MODEL, openai:MODEL.

export interface Embedder {
  /** Stable identifier, e.g. "local-v1", "transformers:Xenova/all-MiniLM-L6-v2". Stored with vectors. */
  readonly id: string;
  readonly dimension: number;
  /** One L2-normalised vector per text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>;
}
