// LLM provider factories of the public API. The openai package is loaded only when asked for.
import type { OpenAiProviderOptions } from '../core/llm/openai.js';
import type { LlmProvider } from '../core/llm/types.js';

export { createProvider, type ProviderChoice } from '../core/llm/factory.js';
export { MockProvider } from '../core/llm/mock.js';
export { RecordingProvider, ReplayProvider } from '../core/llm/cassette.js';
export type { OpenAiProviderOptions } from '../core/llm/openai.js';

/** A provider for any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, llama.cpp server). */
export async function openaiProvider(options: OpenAiProviderOptions = {}): Promise<LlmProvider> {
  const { OpenAiProvider } = await import('../core/llm/openai.js');
  return new OpenAiProvider(options);
}
