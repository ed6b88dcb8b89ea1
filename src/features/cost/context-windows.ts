// Prompt tokens a model accepts (its context window less nothing: `sop check` warns when a dry
// run's prompt alone is larger). Models not listed are not checked.
const CONTEXT_TOKENS: Record<string, number> = {
  'gpt-4o': 128_000,
  'gpt-4o-mini': 128_000,
  'gpt-4.1': 1_047_576,
  'gpt-4.1-mini': 1_047_576,
  'gpt-4.1-nano': 1_047_576,
  o3: 200_000,
  'o4-mini': 200_000,
  'gpt-5': 272_000, // input tokens of its 400k window
  'gpt-5-mini': 272_000,
  'gpt-4-turbo': 128_000,
  'gpt-4': 8_192,
  'gpt-3.5-turbo': 16_385,
};

/** The context window of a model (its own name, else its undated name), when known. */
export function contextWindow(model: string): number | undefined {
  if (Object.hasOwn(CONTEXT_TOKENS, model)) return CONTEXT_TOKENS[model];
  const undated = model.replace(/-\d{4}-\d{2}-\d{2}$/, '');
  return Object.hasOwn(CONTEXT_TOKENS, undated) ? CONTEXT_TOKENS[undated] : undefined;
}
