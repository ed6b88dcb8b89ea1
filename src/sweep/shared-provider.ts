// One openai provider for every run of a sweep or a worker: one client, one pool of kept-alive
// connections. Other providers (mock, replay) keep their state per run, so each run makes its own.
import { createProvider } from '../llm/factory.js';
import type { LlmProvider } from '../llm/types.js';

export async function sharedProvider(
  cache: Map<string, LlmProvider>,
  spec: string | undefined,
  baseUrl: string | undefined,
  timeoutMs: number | undefined,
): Promise<LlmProvider | undefined> {
  if ((spec ?? 'openai') !== 'openai') return undefined;
  const id = `${baseUrl ?? ''}\u0000${timeoutMs ?? ''}`;
  let p = cache.get(id);
  if (!p) {
    p = await createProvider({ spec: 'openai', baseURL: baseUrl, timeoutMs });
    cache.set(id, p);
  }
  return p;
}
