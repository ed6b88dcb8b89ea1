// The HTTP path of the openai provider: undici's fetch on one keep-alive Agent for the process
// (connections reused across calls and runs, fewer allocations per call than Node's built-in
// fetch; see bench/results.json "sweep.http"). SOP_HTTP_CLIENT=fetch uses Node's fetch instead.
import { Agent, fetch as undiciFetch } from 'undici';

let agent: Agent | undefined;

export function keepAliveFetch(): typeof fetch {
  if (process.env.SOP_HTTP_CLIENT === 'fetch') return globalThis.fetch;
  agent ??= new Agent({ keepAliveTimeout: 4_000 }); // under the 5 s of common servers (Node's http)
  const dispatcher = agent;
  return ((input: Parameters<typeof fetch>[0], init?: RequestInit) =>
    undiciFetch(input as never, { ...(init ?? {}), dispatcher } as never)) as unknown as typeof fetch;
}
