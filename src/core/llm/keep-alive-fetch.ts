// The HTTP path of the openai provider: Node's fetch (its global keep-alive pool), or with
// SOP_HTTP_CLIENT=undici the undici package's fetch on one keep-alive Agent for the process. The
// bench (bench/results.json "sweep.http") measured undici a little lower in CPU per call but
// slower in wall time for 50 concurrent simulations (1.43x of ideal against 1.21x), so Node's
// fetch is the default.
// undici is imported on the first call, so that loading the provider (or `import 'sop'`) does not load it.
import type { Agent } from 'undici';

let client: Promise<{ agent: Agent; fetch: typeof import('undici').fetch }> | undefined;

export function keepAliveFetch(): typeof fetch {
  if (process.env.SOP_HTTP_CLIENT !== 'undici') return globalThis.fetch;
  client ??= import('undici').then((u) => ({ agent: new u.Agent({ keepAliveTimeout: 4_000 }), fetch: u.fetch })); // under the 5 s of common servers (Node's http)
  const ready = client;
  return (async (input: Parameters<typeof fetch>[0], init?: RequestInit) => {
    const { agent, fetch: undiciFetch } = await ready;
    return undiciFetch(input as never, { ...(init ?? {}), dispatcher: agent } as never);
  }) as unknown as typeof fetch;
}
