// Tagged parts of a reply (<result>...</result>): what the components, the controller and the
// agent pipeline read out of an LLM's text.

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The text inside the first <tag>...</tag>, or undefined when there is none. */
export function extractTag(text: string, tag: string): string | undefined {
  const re = new RegExp(`<${escapeRegExp(tag)}>([\\s\\S]*?)</${escapeRegExp(tag)}>`);
  const m = re.exec(text);
  return m ? m[1]!.trim() : undefined;
}

/** All occurrences of <tag>...</tag>, joined by single spaces and trimmed (judge semantics). */
export function extractAllTags(text: string, tag: string): string {
  const re = new RegExp(`<${escapeRegExp(tag)}>([\\s\\S]*?)</${escapeRegExp(tag)}>`, 'g');
  const parts: string[] = [];
  for (const m of text.matchAll(re)) parts.push(m[1]!);
  return parts.join(' ').trim();
}
