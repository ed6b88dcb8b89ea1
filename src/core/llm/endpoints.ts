// Calls to more than one server in a run: a state, controller, summary, agent or role whose LLM
// block names its own `base_url` (and `api_key_env`) is answered there, e.g. a debate between a
// model at OpenAI and one at another provider's OpenAI-compatible endpoint. The run's own
// provider answers every other call. A block's server gets an API key only from the variable
// its api_key_env names, so a SOP file cannot send OPENAI_API_KEY to a server of its choosing
// without saying so, and a server the SOP names gets a request only with the user's consent
// (src/core/llm/consent.ts).
import { agentLlm, controllerLlm, resolveSop, summaryLlm } from '../../format/sop/resolved.js';
import type { LlmSettings, Sop } from '../../format/sop/types.js';
import { LlmError, type ChatOptions, type ChatRequest, type ChatResponse, type LlmEndpoint, type LlmProvider } from './types.js';

/**
 * The endpoint of a call with these (merged) settings, or undefined for the run's own server:
 * the SOP-level block's base_url and api_key_env are the run's own.
 */
export function callEndpoint(sopLlm: LlmSettings | undefined, settings: LlmSettings): LlmEndpoint | undefined {
  const ownServer = settings.base_url !== undefined && settings.base_url !== sopLlm?.base_url;
  const ownKey = settings.api_key_env !== undefined && settings.api_key_env !== sopLlm?.api_key_env;
  if (!ownServer && !ownKey) return undefined;
  return {
    ...(settings.base_url !== undefined ? { baseURL: settings.base_url } : {}),
    ...(settings.api_key_env !== undefined ? { apiKeyEnv: settings.api_key_env } : {}),
  };
}

/**
 * The other servers a SOP's calls may go to (its agents', controllers' and summaries' LLM blocks,
 * merged as a run merges them), each once: what the user consents to before a run starts. A
 * sub-flow's SOP is judged when it first calls.
 */
export function sopEndpoints(sop: Sop): LlmEndpoint[] {
  const r = resolveSop(sop);
  const out = new Map<string, LlmEndpoint>();
  const add = (settings: LlmSettings) => {
    const e = callEndpoint(sop.llm, settings);
    if (e) out.set(`${e.baseURL ?? ''}\u0000${e.apiKeyEnv ?? ''}`, e);
  };
  for (const state of Object.values(r.states)) {
    add(controllerLlm(r, state));
    add(summaryLlm(r, state));
    for (const [role, agent] of Object.entries(state.roleToAgent)) add(agentLlm(r, state, agent, role));
  }
  return [...out.values()];
}

/** The API key for an endpoint: from its api_key_env, which must be set; none without one. */
export function endpointKey(endpoint: LlmEndpoint, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (endpoint.apiKeyEnv === undefined) return undefined;
  const key = env[endpoint.apiKeyEnv];
  if (!key)
    throw new LlmError(
      `the environment variable ${endpoint.apiKeyEnv} (llm.api_key_env for ${endpoint.baseURL ?? "the SOP's server"}) is not set`,
    );
  return key;
}

/** The run's provider, and one more per other endpoint, made on its first call. */
export class EndpointRouter implements LlmProvider {
  readonly id: string;
  get paid(): boolean | undefined {
    return this.main.paid;
  }
  private readonly others = new Map<string, LlmProvider>();

  constructor(
    private readonly main: LlmProvider,
    private readonly make: (endpoint: LlmEndpoint) => LlmProvider,
    /** Resolves when calls may go to this endpoint (undefined: the run's own server): the user's consent. */
    private readonly gate?: (endpoint: LlmEndpoint | undefined) => Promise<void>,
  ) {
    this.id = main.id;
  }

  async chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse> {
    const e = request.endpoint;
    await this.gate?.(e);
    if (e === undefined) return this.main.chat(request, options);
    const key = `${e.baseURL ?? ''}\u0000${e.apiKeyEnv ?? ''}`;
    let provider = this.others.get(key);
    if (provider === undefined) {
      provider = this.make(e);
      this.others.set(key, provider);
    }
    return provider.chat(request, options);
  }

  async close(): Promise<void> {
    await Promise.all([this.main, ...this.others.values()].map((p) => p.close?.() ?? Promise.resolve()));
  }
}

/** Every LLM block of a SOP (at any depth, under a key named llm): the names of their key variables and their servers. */
export function llmBlockSecrets(doc: unknown): { names: string[]; urls: string[] } {
  const names = new Set<string>();
  const urls = new Set<string>();
  const visit = (v: unknown, key: string): void => {
    if (typeof v !== 'object' || v === null) return;
    if (Array.isArray(v)) {
      for (const x of v) visit(x, '');
      return;
    }
    const o = v as Record<string, unknown>;
    if (key === 'llm') {
      if (typeof o.api_key_env === 'string') names.add(o.api_key_env);
      if (typeof o.base_url === 'string') urls.add(o.base_url);
    }
    for (const [k, x] of Object.entries(o)) visit(x, k);
  };
  visit(doc, '');
  return { names: [...names], urls: [...urls] };
}
