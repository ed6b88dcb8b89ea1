// Turning an agent's raw reply into the message that is recorded.

export type NameStripping = 'leading' | 'agents-v1';

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Remove the speaker's own name prefix. `leading` strips "Name:" / "Name：" at the start,
 * repeatedly, trimming whitespace. `agents-v1` keeps only the text after the last "Name:"
 * anywhere, untrimmed, as Agents 1.0 did.
 */
export function stripSpeakerName(text: string, name: string, mode: NameStripping = 'leading'): string {
  if (mode === 'agents-v1') {
    const marker = `${name}:`;
    const at = text.lastIndexOf(marker);
    return at === -1 ? text : text.slice(at + marker.length);
  }
  const prefix = new RegExp(`^\\s*(?:\\*\\*)?${escapeRegExp(name)}(?:\\*\\*)?\\s*[:：]`, 'u');
  let out = text;
  while (prefix.test(out)) out = out.replace(prefix, '');
  return out.trim();
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
