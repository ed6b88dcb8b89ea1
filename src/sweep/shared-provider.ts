// One openai provider for every run of a sweep or a worker: one client, one pool of kept-alive
// connections. Other providers (mock, replay) keep their state per run, so each run makes its own.
import { llmBlockSecrets } from '../llm/endpoints.js';
import { createProvider, type ProviderChoice } from '../llm/factory.js';
import type { LlmProvider } from '../llm/types.js';
import type { Sop } from '../sop/types.js';
import { configureSecrets } from '../util/redact.js';

/**
 * The server settings of a sweep's openai provider: --base-url sends every call there; without
 * it the SOP's own server and key variable (llm.base_url, llm.api_key_env), and LLM blocks that
 * name another server are answered there (src/llm/endpoints.ts), as in `sop run`.
 */
export function sweepServer(sop: Sop, baseUrlFlag: string | undefined): Pick<ProviderChoice, 'baseURL' | 'apiKeyEnv' | 'baseURLFixed'> {
  configureSecrets(llmBlockSecrets(sop)); // the key variables and servers of its LLM blocks are secrets
  return baseUrlFlag !== undefined
    ? { baseURL: baseUrlFlag, baseURLFixed: true }
    : { baseURL: sop.llm?.base_url, apiKeyEnv: sop.llm?.api_key_env };
}

export async function sharedProvider(
  cache: Map<string, LlmProvider>,
  spec: string | undefined,
  server: Pick<ProviderChoice, 'baseURL' | 'apiKeyEnv' | 'baseURLFixed'>,
  timeoutMs: number | undefined,
): Promise<LlmProvider | undefined> {
  if ((spec ?? 'openai') !== 'openai') return undefined;
  const id = `${server.baseURL ?? ''}\u0000${server.apiKeyEnv ?? ''}\u0000${server.baseURLFixed ? 1 : 0}\u0000${timeoutMs ?? ''}`;
  let p = cache.get(id);
  if (!p) {
    p = await createProvider({ spec: 'openai', ...server, timeoutMs });
    cache.set(id, p);
  }
  return p;
}
