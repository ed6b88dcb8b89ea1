// One openai provider for every run of a sweep or a worker: one client, one pool of kept-alive
// connections. Other providers (mock, replay) keep their state per run, so each run makes its own.
import type { LlmConsent } from '../../core/llm/consent.js';
import { llmBlockSecrets, sopEndpoints } from '../../core/llm/endpoints.js';
import { createProvider, type ProviderChoice, type ThrottleChoice } from '../../core/llm/factory.js';
import type { LlmProvider } from '../../core/llm/types.js';
import type { Sop } from '../../format/sop/types.js';
import { sopCallsLlm } from '../../api/choices.js';
import { configureSecrets } from '../../shared/util/redact.js';

/**
 * The server settings of a sweep's openai provider: --base-url sends every call there; without
 * it the SOP's own server and key variable (llm.base_url, llm.api_key_env), and LLM blocks that
 * name another server are answered there (src/core/llm/endpoints.ts), as in `sop run`, each only with
 * the user's consent (src/core/llm/consent.ts).
 */
export type SweepServer = Pick<ProviderChoice, 'baseURL' | 'apiKeyEnv' | 'baseURLFixed' | 'consent' | 'endpoints'>;

export function sweepServer(sop: Sop, baseUrlFlag: string | undefined, consent: LlmConsent): SweepServer {
  configureSecrets(llmBlockSecrets(sop)); // the key variables and servers of its LLM blocks are secrets
  return baseUrlFlag !== undefined
    ? { baseURL: baseUrlFlag, baseURLFixed: true }
    : { baseURL: sop.llm?.base_url, apiKeyEnv: sop.llm?.api_key_env, consent, endpoints: sopEndpoints(sop) };
}

/** Whether runs of the SOP need an LLM: --llm given, or a SOP whose agents call one (not rule agents only). */
export function needsLlm(sop: Sop, llm: string | undefined): boolean {
  return llm !== undefined || sopCallsLlm(sop);
}

export async function sharedProvider(
  cache: Map<string, LlmProvider>,
  spec: string | undefined,
  server: SweepServer,
  timeoutMs: number | undefined,
  /** The adaptive limit of calls at once to each server, shared by the runs of this provider. */
  throttle?: ThrottleChoice,
): Promise<LlmProvider | undefined> {
  if ((spec ?? 'openai') !== 'openai') return undefined;
  const id = `${server.baseURL ?? ''}\u0000${server.apiKeyEnv ?? ''}\u0000${server.baseURLFixed ? 1 : 0}\u0000${timeoutMs ?? ''}`;
  let p = cache.get(id);
  if (!p) {
    p = await createProvider({ spec: 'openai', ...server, timeoutMs, ...(throttle ? { throttle } : {}) });
    cache.set(id, p);
  } else {
    // another SOP on the same server: its own block servers are judged now too
    const { endpointDestination } = await import('../../core/llm/consent.js');
    for (const e of server.endpoints ?? []) await server.consent?.check(endpointDestination(e, server.baseURL));
  }
  return p;
}
