// The HTTP path of the openai provider: undici's fetch on one keep-alive Agent for the process
// (connections reused across calls and runs, fewer allocations per call than Node's built-in
// fetch; see bench/results.json "sweep.http"). SOP_HTTP_CLIENT=fetch uses Node's fetch instead.
// undici is imported on the first call, so that loading the provider (or `import 'sop'`) does not load it.
import type { Agent } from 'undici';

let client: Promise<{ agent: Agent; fetch: typeof import('undici').fetch }> | undefined;

export function keepAliveFetch(): typeof fetch {
  if (process.env.SOP_HTTP_CLIENT === 'fetch') return globalThis.fetch;
  client ??= import('undici').then((u) => ({ agent: new u.Agent({ keepAliveTimeout: 4_000 }), fetch: u.fetch })); // under the 5 s of common servers (Node's http)
  const ready = client;
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const { agent, fetch: undiciFetch } = await ready;
    return undiciFetch(input as never, { ...(init ?? {}), dispatcher: agent } as never);
  }) as unknown as typeof fetch;
}
