// LLM provider factories of the public API. The openai package is loaded only when asked for.
import type { OpenAiProviderOptions } from '../llm/openai.js';
import type { LlmProvider } from '../llm/types.js';

export { createProvider, type ProviderChoice } from '../llm/factory.js';
export { MockProvider } from '../llm/mock.js';
export { RecordingProvider, ReplayProvider } from '../llm/cassette.js';
export type { OpenAiProviderOptions } from '../llm/openai.js';

/** A provider for any OpenAI-compatible endpoint (OpenAI, Azure, Ollama, vLLM, llama.cpp server). */
export async function openaiProvider(options: OpenAiProviderOptions = {}): Promise<LlmProvider> {
  const { OpenAiProvider } = await import('../llm/openai.js');
  return new OpenAiProvider(options);
}
