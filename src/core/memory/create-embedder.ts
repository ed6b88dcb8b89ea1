// Embedder specs, as written in `environment.embedder` or `--embedder`:
//   local                      hashed n-grams with online IDF (default; no network, no model)
//   transformers:MODEL_OR_DIR  sentence model run locally with @huggingface/transformers
//   openai:MODEL               embeddings endpoint of an OpenAI-compatible server
// The transformers and openai modules are imported only when their spec is used.
import { EmbedderLoadError, type Embedder } from './embedder.js';
import { LocalEmbedder } from './local-embedder.js';
import type { RetryBudget } from '../llm/retry.js';

export const DEFAULT_EMBEDDER = 'local';

export type EmbedderSpec = { kind: 'local' } | { kind: 'transformers'; model: string } | { kind: 'openai'; model: string };

export function parseEmbedderSpec(spec: string | undefined): EmbedderSpec {
  const s = (spec ?? DEFAULT_EMBEDDER).trim();
  if (s === 'local') return { kind: 'local' };
  const colon = s.indexOf(':');
  const kind = colon < 0 ? s : s.slice(0, colon);
  const model = colon < 0 ? '' : s.slice(colon + 1).trim();
  if (kind === 'transformers' || kind === 'openai') {
    if (!model) {
      throw new EmbedderLoadError(
        `embedder "${s}" needs a model: ${kind === 'openai' ? 'openai:text-embedding-3-small' : 'transformers:Xenova/all-MiniLM-L6-v2 or transformers:/path/to/model'}`,
      );
    }
    return { kind, model };
  }
  throw new EmbedderLoadError(`unknown embedder "${s}"; use local, transformers:MODEL_OR_FOLDER or openai:MODEL`);
}

export interface EmbedderContext {
  /** For openai: server URL (default OPENAI_BASE_URL, else OpenAI). */
  baseURL?: string;
  apiKey?: string;
  timeoutMs?: number;
  budget?: RetryBudget;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
  /** For transformers: never download. */
  offline?: boolean;
}

/** A ready embedder (model loaded, dimension known), or an EmbedderLoadError with a clear message. */
export async function createEmbedder(spec: string | undefined, context: EmbedderContext = {}): Promise<Embedder> {
  const parsed = parseEmbedderSpec(spec);
  switch (parsed.kind) {
    case 'local':
      return new LocalEmbedder();
    case 'transformers': {
      const { TransformersEmbedder } = await import('./transformers-embedder.js');
      return TransformersEmbedder.load(parsed.model, { offline: context.offline });
    }
    case 'openai': {
      const { OpenAiEmbedder } = await import('./openai-embedder.js');
      const e = new OpenAiEmbedder(parsed.model, context);
      try {
        await e.embed(['dimension probe']);
      } catch (err) {
        throw new EmbedderLoadError(`openai embedder: ${(err as Error).message}`);
      }
      return e;
    }
  }
}
