// The `openai:MODEL` embedder: the /embeddings endpoint of OpenAI or any compatible server, with
// the same bounded retries as chat calls. Vectors are L2-normalised on arrival. Each request's
// tokens (as the server reports them, else estimated) are told to the run (usage, cost, budgets).
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIUserAbortError } from 'openai';
import { isApiError } from '../llm/api-error.js';
import {
  DEFAULT_RETRY_POLICY,
  RetriesExhaustedError,
  RetryBudget,
  parseRetryAfter,
  withRetries,
  type RetryableFailure,
} from '../llm/retry.js';
import { EmbedderLoadError, EmbeddingMeter, normalise, type Embedder, type EmbeddingUsage } from './embedder.js';
import { EngineError, opt, say } from '../../shared/errors.js';

export interface OpenAiEmbedderOptions {
  apiKey?: string;
  baseURL?: string;
  timeoutMs?: number;
  /** Texts per request. */
  batchSize?: number;
  budget?: RetryBudget;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
}

function classify(err: unknown): RetryableFailure {
  if (err instanceof APIUserAbortError) return { retryable: false, reason: 'aborted' };
  if (err instanceof APIConnectionTimeoutError) return { retryable: true, reason: 'request timed out' };
  if (err instanceof APIConnectionError)
    return { retryable: true, reason: `connection failed (${err.cause instanceof Error ? err.cause.message : err.message})` };
  if (isApiError(err)) {
    const status = err.status ?? 0;
    return {
      retryable: status === 408 || status === 409 || status === 429 || status >= 500,
      retryAfterMs: parseRetryAfter(err.headers),
      reason: `HTTP ${status}: ${err.message.replace(/\s+/g, ' ').slice(0, 200)}`,
    };
  }
  return { retryable: false, reason: err instanceof Error ? err.message : String(err) };
}

/** Decode an embedding given as numbers or as base64 little-endian float32. */
function toVector(e: unknown): Float32Array {
  if (typeof e === 'string') {
    const buf = Buffer.from(e, 'base64');
    return new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  }
  if (Array.isArray(e)) return Float32Array.from(e as number[]);
  throw new EngineError('the server sent an embedding that is neither a list of numbers nor base64', 'EMBEDDER');
}

export class OpenAiEmbedder implements Embedder {
  readonly id: string;
  private readonly client: OpenAI;
  private readonly budget: RetryBudget;
  private dim = 0;
  private readonly usage = new EmbeddingMeter();

  constructor(
    readonly model: string,
    private readonly options: OpenAiEmbedderOptions = {},
  ) {
    if (!model) throw new EmbedderLoadError('the embedder openai:MODEL needs a model name, e.g. openai:text-embedding-3-small');
    const apiKey = options.apiKey ?? process.env.OPENAI_API_KEY;
    const baseURL = options.baseURL ?? process.env.OPENAI_BASE_URL;
    if (!apiKey && !baseURL) {
      throw new EmbedderLoadError(
        say`openai embedder: no OPENAI_API_KEY and no ${opt('baseUrl')}/OPENAI_BASE_URL; set one, or use the local embedder`,
      );
    }
    this.id = `openai:${model}`;
    this.client = new OpenAI({
      apiKey: apiKey || 'no-key',
      baseURL: baseURL || undefined,
      maxRetries: 0,
      timeout: options.timeoutMs ?? 60_000,
    });
    this.budget = options.budget ?? new RetryBudget(50);
  }

  meter(listener: (u: EmbeddingUsage) => void): () => void {
    return this.usage.attach(listener);
  }

  /** Known after the first call (see `createEmbedder`, which probes it). */
  get dimension(): number {
    return this.dim;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    const size = this.options.batchSize ?? 256;
    for (let i = 0; i < texts.length; i += size) {
      // The reference replaces newlines by spaces; empty inputs are rejected by the API.
      const input = texts.slice(i, i + size).map((t) => t.replace(/\n/g, ' ') || ' ');
      out.push(...(await this.request(input)));
    }
    return out;
  }

  private async request(input: string[]): Promise<Float32Array[]> {
    let res: Awaited<ReturnType<OpenAI['embeddings']['create']>>;
    try {
      res = await withRetries(
        () => this.client.embeddings.create({ model: this.model, input, encoding_format: 'float' }),
        { ...DEFAULT_RETRY_POLICY, maxRetryAfterMs: this.options.timeoutMs ?? 60_000 },
        this.budget,
        { classify, onRetry: this.options.onRetry },
      );
    } catch (err) {
      const reason = err instanceof RetriesExhaustedError ? err.message : classify(err).reason;
      throw new EngineError(`embedding call (${this.id}) failed: ${reason}`, 'EMBEDDER', { cause: err });
    }
    // a server that reports no usage: about 4 characters a token, as for chat estimates
    const reported = res.usage?.prompt_tokens;
    const promptTokens = typeof reported === 'number' && reported >= 0 ? reported : Math.ceil(input.join(' ').length / 4);
    this.usage.tell({ model: this.model, promptTokens, texts: input.length });
    const data = [...res.data].sort((a, b) => a.index - b.index);
    if (data.length !== input.length)
      throw new EngineError(`embedding call (${this.id}) returned ${data.length} vectors for ${input.length} texts`, 'EMBEDDER');
    const vectors = data.map((d) => normalise(toVector(d.embedding)));
    for (const v of vectors) {
      if (this.dim === 0) this.dim = v.length;
      if (v.length !== this.dim)
        throw new EngineError(
          `embedding call (${this.id}) returned a ${v.length}-dimensional vector after ${this.dim}-dimensional ones`,
          'EMBEDDER',
        );
    }
    return vectors;
  }
}
