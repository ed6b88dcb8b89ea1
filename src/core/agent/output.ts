// Turning an agent's raw reply into the message that is recorded.
import { escapeRegExp } from '../../shared/util/tags.js';

export type NameStripping = 'leading' | 'agents-v1';

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
