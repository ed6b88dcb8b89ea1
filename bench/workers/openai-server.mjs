// Child process of bench/concurrency.mjs: the OpenAI-compatible test server
// (test/helpers/openai-server.ts, loaded through tsx) answering every request after the latency
// given as argv[2] (ms); with argv[3] "action", replies are population actions. Runs in its own process, as a real LLM server would, so its CPU time is
// not charged to the simulations. Prints its base URL on the first line; exits when stdin closes.
import { join } from 'node:path';
import { tsImport } from 'tsx/esm/api';
import { ROOT } from '../lib/engine.mjs';

const latencyMs = Number(process.argv[2] ?? 50);
// `action`: every reply is an idle action in the JSON command format (population steps);
// `action-429`: the same, from a server that answers 429 (retry-after 100 ms) above 300 requests in flight
const kind = process.argv[3] ?? '';
const action = kind === 'action' || kind === 'action-429';
const { startOpenAiServer } = await tsImport(join(ROOT, 'test', 'helpers', 'openai-server.ts'), import.meta.url);
const server = await startOpenAiServer({
  latencyMs,
  ...(action ? { keepAliveTimeoutMs: 65_000 } : {}),
  ...(kind === 'action-429' ? { maxInFlight: { limit: 300, retryAfterMs: 100 } } : {}),
  reply: (body) =>
    action
      ? JSON.stringify({ command: 'idle', command_args: {} })
      : `Reply to ${body.messages.length} messages: cars out, buses in, shops still open.`,
});
process.stdout.write(`${server.url}\n`);
process.stdin.resume();
process.stdin.on('end', async () => {
  await server.close();
  process.exit(0);
});
