// An option given twice (`--llm mock --llm openai`) reaches a command as an array from the
// parser; for an option that takes one value the last one wins, as in most command-line tools.

/** `o` with every array value but those of `lists` (options that collect values) replaced by its last item. */
export function lastValues<T extends object>(o: T, lists: readonly string[] = []): T {
  const out = { ...o } as Record<string, unknown>;
  for (const [k, v] of Object.entries(out)) if (Array.isArray(v) && !lists.includes(k)) out[k] = v[v.length - 1];
  return out as T;
}
