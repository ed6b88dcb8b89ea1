// The embedder interface: batch text -> unit vectors. Implementations: local (default),
// transformers:MODEL, openai:MODEL.
import { EngineError } from '../errors.js';

export interface Embedder {
  /** Stable identifier, e.g. "local-v1", "transformers:Xenova/all-MiniLM-L6-v2". Stored with vectors. */
  readonly id: string;
  readonly dimension: number;
  /** One L2-normalised vector per text, in order. */
  embed(texts: string[]): Promise<Float32Array[]>;
  /**
   * Optional: embed texts used only as queries. Embedders that learn from what they embed
   * (the local one learns word frequencies) do not learn from these. Default: `embed`.
   */
  embedQuery?(texts: string[]): Promise<Float32Array[]>;
}

/** An embedder cannot be created (bad spec, missing model, no key): a message for a person. */
export class EmbedderLoadError extends EngineError {
  constructor(message: string) {
    super(message, 'EMBEDDER_LOAD');
    this.name = 'EmbedderLoadError';
  }
}
