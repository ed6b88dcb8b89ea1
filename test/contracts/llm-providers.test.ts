// Every LLM provider of sop runs the LlmProvider contract: the mock, a cassette replayed, the
// OpenAI-compatible client against a server on 127.0.0.1 (test/helpers/openai-server.ts), and a
// GGUF model in process (the local provider on the test model, when it is here).
import { afterAll, beforeAll, describe } from 'vitest';
import { MockProvider, ReplayProvider } from '../../src/index.js';
import type { Cassette } from '../../src/core/llm/cassette.js';
import { OpenAiProvider } from '../../src/core/llm/openai.js';
import { startOpenAiServer, type TestServer } from '../helpers/openai-server.js';
import { agentRequest, llmProviderContract } from './llm-provider.js';
import { LocalProvider, closeLocalModels } from '../../src/core/llm/local.js';
import { localSettings } from '../../src/core/llm/local-runtime.js';
import { TEST_MODEL, noteSkip } from '../helpers/local-model.js';
import { scaled } from '../helpers/time.js';

llmProviderContract('mock', () => ({ provider: new MockProvider() }));

const cassette: Cassette = {
  version: 1,
  source: 'hand-written',
  interactions: [1, 2, 3].map((n) => ({
    purpose: 'agent' as const,
    state: 'talk',
    agent: 'Ann',
    response: `Reply ${n}: the motion stands.`,
    usage: { promptTokens: 20 + n, completionTokens: 7 },
  })),
};
llmProviderContract('cassette replay', () => ({ provider: new ReplayProvider('contract.cassette.json', cassette) }));

let server: TestServer;
beforeAll(async () => {
  // a request whose last message asks to be held is never answered: only the client's abort ends it
  server = await startOpenAiServer({
    fault: (_i, body) => (JSON.stringify(body).includes('hold this call') ? { kind: 'hang' } : undefined),
  });
});
afterAll(() => server?.close());
afterAll(closeLocalModels); // the local model's generations end before this file's worker goes
llmProviderContract('openai (OpenAI-compatible server on 127.0.0.1)', () => ({
  provider: new OpenAiProvider({ baseURL: server.url, apiKey: 'test-key', timeoutMs: 3_600_000, retry: { maxRetries: 0 } }),
  held: () => ({ ...agentRequest(1), messages: [{ role: 'user', content: 'hold this call' }] }),
}));

const noModel = noteSkip('LlmProvider contract of the local provider');
describe.skipIf(noModel !== undefined)('a GGUF model in process', () => {
  const local = () =>
    LocalProvider.create({ model: TEST_MODEL, settings: { ...localSettings({}), threads: 1, sequences: 2, maxTokens: 16 } });
  beforeAll(local, scaled(120_000)); // the model is loaded once per process: each make() below reuses it
  llmProviderContract('local (SmolLM2-135M-Instruct Q4_1)', async () => ({
    provider: await local(),
    held: () => ({ ...agentRequest(1), maxTokens: 4000, messages: [{ role: 'user', content: 'Count from one to a thousand, in words.' }] }),
  }));
});
