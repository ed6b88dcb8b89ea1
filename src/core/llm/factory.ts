// Choosing the LLM provider from the command line: openai (default), mock, replay:FILE,
// local:MODEL (a GGUF model in this process) or local (the SOP's llm.model of each call);
// --record FILE wraps any of them.
import { opt, say } from '../../shared/errors.js';
import { resolve } from 'node:path';
import type { AdaptiveGate, LimitChange, SharedLimit } from './adaptive-limit.js';
import type { LlmConsent } from './consent.js';
import type { RetryBudget } from './retry.js';
import { LlmError, type LlmEndpoint, type LlmProvider } from './types.js';

export interface ProviderChoice {
  /** openai | mock | replay:FILE | local:MODEL | local (default: the SOP's llm.provider, else openai). */
  spec?: string;
  /** local: the run's --seed (each call's seed is made from it). */
  seed?: number;
  /** local: the SOP's file (its llm.model paths are read from its folder). */
  sopFile?: string;
  /** local: the SOP's top-level llm.model, loaded before the run starts. */
  model?: string;
  /** local: a Ctrl-C while a model downloads. */
  signal?: AbortSignal;
  baseURL?: string;
  /** The variable holding the key for baseURL (the SOP's llm.api_key_env; default OPENAI_API_KEY). */
  apiKeyEnv?: string;
  /**
   * baseURL was given on the command line (--base-url): every call goes there. Otherwise a call
   * whose LLM block names its own server is answered there (src/core/llm/endpoints.ts).
   */
  baseURLFixed?: boolean;
  /**
   * The user's consent to the servers the SOP names (src/core/llm/consent.ts): without --base-url, the
   * run's own server and `endpoints` are judged now, before any request, and any other endpoint
   * before its first call. Without it, every server is called (a caller that chose them itself).
   */
  consent?: LlmConsent;
  /** The other servers of the SOP's LLM blocks (sopEndpoints), judged now. */
  endpoints?: LlmEndpoint[];
  record?: string;
  /** A resumed run: keep the interactions the --record file holds (see RecordingProvider). */
  recordContinues?: boolean;
  sopName?: string;
  timeoutMs?: number;
  /** Cap on one reply of the openai provider (default 512 KiB). */
  maxReplyBytes?: number;
  budget?: RetryBudget;
  onRetry?: (info: { attempt: number; delayMs: number; reason: string }) => void;
  /** Replies kept with a warning (cut at max tokens, empty, not streamed). */
  onWarning?: (message: string) => void;
  /** openai: the adaptive concurrency limit of each server (src/core/llm/adaptive-limit.ts); none without it. */
  throttle?: ThrottleChoice;
}

/** The adaptive limit of the openai provider's servers: one gate per server, shared by every call to it. */
export interface ThrottleChoice {
  /** The most calls to one server at once (--concurrency). */
  ceiling: number;
  /** A change of a server's limit (the run's `concurrency` event). */
  onChange?: (c: LimitChange) => void;
  /**
   * A limit shared with other processes for a server (src/apps/sweep/shared-limit.ts); a slot is held
   * at most `expirationMs` (longer than any attempt: a process that dies gives its slots back then).
   */
  shared?: (endpoint: string, expirationMs: number) => SharedLimit | undefined;
}

/** An --llm spec whose file (replay:FILE, local:PATH) is absolute, for a resume from elsewhere; hf: and names stay. */
export function absoluteLlmSpec(spec: string): string {
  if (spec.startsWith('replay:') && spec.length > 'replay:'.length) return `replay:${resolve(spec.slice('replay:'.length))}`;
  const model = spec.startsWith('local:') ? spec.slice('local:'.length) : '';
  if (model && !model.startsWith('hf:')) return `local:${resolve(model)}`;
  return spec;
}

export async function createProvider(choice: ProviderChoice): Promise<LlmProvider> {
  const spec = choice.spec ?? 'openai';
  if (choice.timeoutMs !== undefined && !(Number.isFinite(choice.timeoutMs) && choice.timeoutMs >= 1)) {
    throw new LlmError(
      say`${opt('timeoutMs')} must be a number of ${opt('timeoutMs', { form: 'unit', api: 'milliseconds' })} above 0 (got ${opt('timeoutMs', { form: 'value', set: String(choice.timeoutMs) })})`,
    );
  }
  if (choice.maxReplyBytes !== undefined && !(Number.isInteger(choice.maxReplyBytes) && choice.maxReplyBytes >= 1)) {
    throw new LlmError(say`${opt('maxReplyBytes')} must be a whole number of bytes, at least 1 (got ${String(choice.maxReplyBytes)})`);
  }
  let provider: LlmProvider;
  if (spec === 'mock') {
    const { MockProvider } = await import('./mock.js');
    provider = new MockProvider();
  } else if (spec.startsWith('replay:')) {
    const file = spec.slice('replay:'.length);
    if (!file) throw new LlmError(say`${opt('llm', { set: 'replay:FILE' })} needs a cassette file`);
    const { ReplayProvider } = await import('./cassette.js');
    provider = new ReplayProvider(file);
  } else if (spec === 'openai') {
    const [{ OpenAiProvider }, { EndpointRouter, endpointKey }, { endpointDestination, mainDestination }, { AdaptiveGate: Gate }] =
      await Promise.all([import('./openai.js'), import('./endpoints.js'), import('./consent.js'), import('./adaptive-limit.js')]);
    const consent = choice.baseURLFixed ? undefined : choice.consent; // --base-url: the user's own server
    const destination = (e: LlmEndpoint | undefined) =>
      e === undefined ? mainDestination(choice.baseURL, choice.apiKeyEnv) : endpointDestination(e, choice.baseURL);
    if (consent) {
      // before any request: the run's own server, then every server the SOP's blocks name
      await consent.check(destination(undefined));
      for (const e of choice.endpoints ?? []) await consent.check(destination(e));
    }
    const gates = new Map<string, AdaptiveGate>();
    const gateOf = (baseURL: string | undefined): AdaptiveGate | undefined => {
      const t = choice.throttle;
      if (!t) return undefined;
      const endpoint = baseURL || process.env.OPENAI_BASE_URL || 'https://api.openai.com/v1';
      let g = gates.get(endpoint);
      if (!g) {
        // an attempt lasts at most its stream deadline: 10 x the timeout (src/core/llm/openai.ts)
        const shared = t.shared?.(endpoint, 11 * (choice.timeoutMs ?? 120_000));
        g = new Gate({
          ceiling: t.ceiling,
          endpoint,
          maxPauseMs: choice.timeoutMs ?? 120_000,
          ...(t.onChange ? { onChange: t.onChange } : {}),
          ...(shared ? { shared } : {}),
        });
        gates.set(endpoint, g);
      }
      return g;
    };
    const make = (baseURL: string | undefined, apiKey: string | undefined, apiKeyName: string | null | undefined) =>
      new OpenAiProvider({
        gate: gateOf(baseURL),
        baseURL,
        apiKey,
        apiKeyName,
        timeoutMs: choice.timeoutMs,
        maxReplyBytes: choice.maxReplyBytes,
        budget: choice.budget,
        onRetry: choice.onRetry,
        onWarning: choice.onWarning,
      });
    const key = choice.apiKeyEnv !== undefined ? endpointKey({ baseURL: choice.baseURL, apiKeyEnv: choice.apiKeyEnv }) : undefined;
    provider = make(choice.baseURL, key, choice.apiKeyEnv);
    if (!choice.baseURLFixed) {
      // a block's own server gets a key only from its own api_key_env (none: no key)
      provider = new EndpointRouter(
        provider,
        (e) => make(e.baseURL ?? choice.baseURL, endpointKey(e) ?? '', e.apiKeyEnv ?? null),
        consent ? (e) => consent.check(destination(e)) : undefined,
      );
    }
  } else if (spec === 'local' || spec.startsWith('local:')) {
    const model = spec === 'local' ? undefined : spec.slice('local:'.length);
    if (model === '') throw new LlmError(say`${opt('llm', { set: 'local:MODEL' })} needs a .gguf file or hf:USER/REPO/FILE.gguf`);
    const { LocalProvider, sopModelBase } = await import('./local.js');
    provider = await LocalProvider.create({
      ...(model !== undefined ? { model } : { base: sopModelBase(choice.sopFile), ...(choice.model ? { preload: choice.model } : {}) }),
      ...(choice.seed !== undefined ? { seed: choice.seed } : {}),
      ...(choice.signal ? { signal: choice.signal } : {}),
      ...(choice.onWarning ? { onWarning: choice.onWarning } : {}),
    });
  } else {
    throw new LlmError(say`unknown ${opt('llm')} "${spec}"; use openai, mock, replay:FILE or local:MODEL.gguf`);
  }
  if (choice.record) {
    const { RecordingProvider } = await import('./cassette.js');
    provider = new RecordingProvider(provider, choice.record, choice.sopName, undefined, { continues: choice.recordContinues });
  }
  return provider;
}
