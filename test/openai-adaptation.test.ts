// Servers that refuse a request parameter (OpenAI's reasoning models: max_tokens and a temperature
// other than 1; older Azure API versions: stream_options; Ollama models without tool support:
// tools) answer HTTP 400. The openai provider (the real `openai` client, against the local test
// server) sends the request again without that parameter, once per model, with one warning.
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiProvider } from '../src/core/llm/openai.js';
import { adaptationFor } from '../src/core/llm/request-adaptation.js';
import type { ChatMessage, ChatRequest } from '../src/core/llm/types.js';
import { startOpenAiServer, type ChatRequestBody, type Fault, type TestServer } from './helpers/openai-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const refusal = (message: string, param: string | null, code: string | null): Fault => ({
  kind: 'status',
  status: 400,
  body: { error: { message, type: 'invalid_request_error', param, code } },
});

/** OpenAI's answers for a reasoning model (their wording), and Azure's for stream_options. */
function reasoningModel(_index: number, raw: unknown): Fault | undefined {
  const body = raw as ChatRequestBody;
  if (body.max_tokens !== undefined)
    return refusal(
      "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
      'max_tokens',
      'unsupported_parameter',
    );
  if (body.temperature !== undefined && body.temperature !== 1)
    return refusal(
      `Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.`,
      'temperature',
      'unsupported_value',
    );
  if (body.stream_options !== undefined) return refusal('Unrecognized request argument supplied: stream_options', null, null);
  return undefined;
}

const request = (over: Partial<ChatRequest> = {}): ChatRequest => ({
  messages: [{ role: 'user', content: 'Say hello' }],
  model: 'o4-mini',
  temperature: 0.7,
  maxTokens: 64,
  meta: { purpose: 'agent', state: 's', agent: 'Ann', turn: 1 },
  ...over,
});

async function setup(fault: (index: number, body: unknown) => Fault | undefined) {
  server = await startOpenAiServer({ fault, reply: () => 'Hello.' });
  const warnings: string[] = [];
  const provider = new OpenAiProvider({
    apiKey: 'test-key',
    baseURL: server.url,
    timeoutMs: 5_000,
    retry: { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 },
    onWarning: (w) => warnings.push(w),
  });
  const bodies = () => server!.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as ChatRequestBody);
  return { provider, warnings, bodies };
}

describe('requests adapted to what a server takes', () => {
  it('a reasoning model: max_tokens becomes max_completion_tokens, temperature and stream_options are left out, once', async () => {
    const { provider, warnings, bodies } = await setup(reasoningModel);
    const first = await provider.chat(request({ stream: true }));
    expect(first.content).toBe('Hello.');
    expect(bodies()).toHaveLength(4); // refused three times, one parameter each, then answered
    expect(warnings).toHaveLength(3);
    expect(warnings[0]).toMatch(/^o4-mini at http:\/\/127\.0\.0\.1:\d+\/v1 does not take max_tokens \(HTTP 400: .*max_completion_tokens/);
    expect(warnings[1]).toMatch(/does not take temperature 0\.7 .*sending no temperature \(the model's default\) from now on$/);
    expect(warnings[2]).toMatch(/does not take stream_options/);
    const sent = bodies().at(-1)!;
    expect(sent.max_completion_tokens).toBe(64);
    expect(sent).not.toHaveProperty('max_tokens');
    expect(sent).not.toHaveProperty('temperature');
    expect(sent).not.toHaveProperty('stream_options');

    // The next calls to this model go out adapted at once: no refusal, no new warning.
    const second = await provider.chat(request({ stream: true }));
    const plain = await provider.chat(request());
    expect([second.content, plain.content]).toEqual(['Hello.', 'Hello.']);
    expect(bodies()).toHaveLength(6);
    expect(warnings).toHaveLength(3);
    expect(bodies()[5]).toMatchObject({ max_completion_tokens: 64 });
    expect(bodies()[5]).not.toHaveProperty('temperature');
  });

  it('is per model: another model on the same server is sent its parameters', async () => {
    const { provider, bodies } = await setup((i, raw) =>
      (raw as ChatRequestBody).model === 'o4-mini' ? reasoningModel(i, raw) : undefined,
    );
    await provider.chat(request());
    await provider.chat(request({ model: 'gpt-4o-mini' }));
    expect(bodies().at(-1)).toMatchObject({ model: 'gpt-4o-mini', temperature: 0.7, max_tokens: 64 });
  });

  it('a model without tool support: the commands go in the JSON command format', async () => {
    const { provider, warnings, bodies } = await setup((_i, raw) =>
      (raw as ChatRequestBody).tools !== undefined
        ? { kind: 'status', status: 400, body: { error: { message: 'registry.ollama.ai/library/llama2:latest does not support tools' } } }
        : undefined,
    );
    const tools = [{ name: 'answer', description: 'Give the final answer', parameters: { type: 'object', properties: {} } }];
    // an earlier command and its result, in both forms (src/core/agent/window-chat.ts)
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Be brief.\nThe commands you can use:\n- answer', native: { role: 'system', content: 'Be brief.' } },
      {
        role: 'assistant',
        content: '{"command":"answer","command_args":{}}',
        native: { role: 'assistant', toolCalls: [{ id: 'call_3', name: 'answer', arguments: '{}' }] },
      },
      { role: 'user', content: 'answer (finish): done', native: { role: 'tool', toolCallId: 'call_3', content: 'done' } },
    ];
    const res = await provider.chat(
      request({ model: 'llama2', messages, meta: { purpose: 'agent', state: 's', agent: 'Ann', turn: 1, tools } }),
    );
    expect(res.content).toBe('Hello.');
    expect(bodies()).toHaveLength(2);
    // first sent natively, then, refused, in the JSON command format with the text list of commands
    expect((bodies()[0] as { messages: unknown[] }).messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'answer', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'call_3', content: 'done' },
    ]);
    expect((bodies()[1] as { messages: unknown[] }).messages).toEqual(messages.map((m) => ({ role: m.role, content: m.content })));
    expect(bodies()[1]).not.toHaveProperty('tools');
    expect(bodies()[1]).not.toHaveProperty('tool_choice');
    expect(warnings).toEqual([expect.stringMatching(/^llama2 at .* refused function tools .*JSON command format from now on$/)]);
  });

  it('sends prompt_cache_key, and leaves it out from then on for a server that does not take it', async () => {
    const { provider, warnings, bodies } = await setup((_i, raw) =>
      (raw as { prompt_cache_key?: string }).prompt_cache_key !== undefined
        ? refusal('Unrecognized request argument supplied: prompt_cache_key', null, null)
        : undefined,
    );
    const keyed = request({ model: 'gpt-4o-mini', promptCacheKey: 'sop-abc-def' });
    expect((await provider.chat(keyed)).content).toBe('Hello.');
    expect(bodies().map((b) => (b as { prompt_cache_key?: string }).prompt_cache_key)).toEqual(['sop-abc-def', undefined]);
    expect(warnings).toEqual([expect.stringMatching(/^gpt-4o-mini at .* does not take prompt_cache_key .*sending none from now on/)]);
    await provider.chat(keyed);
    expect(bodies()).toHaveLength(3);
    expect(bodies()[2]).not.toHaveProperty('prompt_cache_key');
  });

  it('a 400 about something else stays an error, sent once, with no adaptation', async () => {
    const { provider, warnings, bodies } = await setup(() =>
      refusal('max_tokens is too large: 100000. This model supports at most 16384 completion tokens.', 'max_tokens', 'invalid_value'),
    );
    await expect(provider.chat(request({ maxTokens: 100_000 }))).rejects.toThrow(/HTTP 400: .*max_tokens is too large/);
    expect(bodies()).toHaveLength(1);
    expect(warnings).toEqual([]);
  });
});

describe('adaptationFor', () => {
  const body = { model: 'm', temperature: 0.5, max_tokens: 10, stream_options: {}, tools: [] };
  const none = new Set<never>();
  it.each([
    ['vLLM without a tool parser', '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', 'no_tools'],
    ['llama.cpp without --jinja', 'tools param requires --jinja flag', 'no_tools'],
    ['a strict server and stream_options', 'stream_options: Extra inputs are not permitted', 'no_stream_options'],
    ['a model name the server does not know', 'The model `gpt-9` does not exist', undefined],
    ['a prompt too long', "This model's maximum context length is 8192 tokens", undefined],
  ])('%s', (_what, message, expected) => {
    expect(adaptationFor({ status: 400, message }, body, none)).toBe(expected);
  });

  it('takes nothing from a status other than 400 or 422, or a parameter already left out', () => {
    const message = "Unsupported parameter: 'max_tokens'";
    expect(adaptationFor({ status: 500, message, param: 'max_tokens' }, body, none)).toBeUndefined();
    expect(adaptationFor({ status: 400, message, param: 'max_tokens' }, body, new Set(['max_completion_tokens']))).toBeUndefined();
  });
});
