// The embedder interface: batch text -> unit vectors. Implementations: local (default),
// transformers:MODEL, openai:MODEL.
import { EngineError, type MessagePart } from '../../shared/errors.js';

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
  /**
   * A paid embedder (a server) tells the tokens of each request to the innermost run using it
   * (a sub-flow's listener comes off when it ends); requests made before any listener (the
   * dimension probe) are told to the first. Returns the function that detaches `listener`.
   */
  meter?(listener: (u: EmbeddingUsage) => void): () => void;
}

/** One request to a paid embedder: counted in the run's usage, cost and budgets. */
export interface EmbeddingUsage {
  model: string;
  promptTokens: number;
  /** Texts embedded by the request. */
  texts: number;
}

/** The listeners of a paid embedder's usage (see Embedder.meter). */
export class EmbeddingMeter {
  private readonly listeners: Array<(u: EmbeddingUsage) => void> = [];
  private readonly pending: EmbeddingUsage[] = [];

  attach(listener: (u: EmbeddingUsage) => void): () => void {
    this.listeners.push(listener);
    for (const u of this.pending.splice(0)) listener(u);
    return () => {
      const i = this.listeners.lastIndexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  tell(u: EmbeddingUsage): void {
    const listener = this.listeners[this.listeners.length - 1];
    if (listener) listener(u);
    else this.pending.push(u);
  }
}

/** An embedder cannot be created (bad spec, missing model, no key): a message for a person. */
export class EmbedderLoadError extends EngineError {
  constructor(message: string | readonly MessagePart[]) {
    super(message, 'EMBEDDER_LOAD');
    this.name = 'EmbedderLoadError';
  }
}

/** The vector scaled to length 1, in place (a zero vector stays as it is). */
export function normalise(v: Float32Array): Float32Array {
  let n = 0;
  for (let i = 0; i < v.length; i++) n += v[i]! * v[i]!;
  if (n > 0) {
    const inv = 1 / Math.sqrt(n);
    for (let i = 0; i < v.length; i++) v[i]! *= inv;
  }
  return v;
}
