// The extract component: before the role answers, one LLM call over the role's history; for
// each word, the text inside <word>...</word> (the whole reply when the tag is missing) is
// stored in the run's shared memory, where customize components read it.
import { extractTag } from '../../shared/util/tags.js';
import { renderV1 } from './templates.js';
import type { ComponentKind, LastPart } from './registry.js';

interface ExtractDef {
  words: string[];
  system_prompt?: string;
  last_prompt?: string;
}

export const extract: ComponentKind = {
  async before(value, rt): Promise<LastPart[]> {
    const def = value as ExtractDef;
    const system = def.system_prompt !== undefined ? rt.text(def.system_prompt, 'extract/system_prompt') : '';
    const last =
      def.last_prompt !== undefined ? rt.text(def.last_prompt, 'extract/last_prompt') : renderV1('extract_last', { words: def.words });
    const reply = await rt.callWithHistory(system, last, 'extract');
    for (const word of def.words) rt.shared.set(word, extractTag(reply, word) ?? reply);
    return [];
  },
};
