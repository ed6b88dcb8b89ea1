// The knowledge component: the entries of a knowledge base closest to what the role just
// observed enter its last prompt (QA: question and answer; chunk: the text), at most top_k,
// each at least `threshold` similar; otherwise a line saying nothing matched.
import { renderV1 } from './templates.js';
import type { KnowledgeMode } from './knowledge-base.js';
import type { ComponentKind, LastPart } from './registry.js';

interface KnowledgeDef {
  path: string;
  mode?: KnowledgeMode;
  top_k?: number;
  threshold?: number;
}

/**
 * Default minimum similarity. Agents 1.0 used 0.75 (QA) and 0.5 (chunks) with ada-002 vectors,
 * whose similarities run high (unrelated texts score around 0.7); the local embedder's sparse
 * vectors score unrelated texts near 0 and close paraphrases around 0.5, so its defaults are lower.
 */
export function defaultThreshold(mode: KnowledgeMode, embedderId: string): number {
  if (embedderId.startsWith('local')) return mode === 'qa' ? 0.4 : 0.25;
  return mode === 'qa' ? 0.75 : 0.5;
}

export const knowledge: ComponentKind = {
  async before(value, rt): Promise<LastPart[]> {
    const def = value as KnowledgeDef;
    const mode = def.mode ?? 'qa';
    const kb = await rt.knowledge(def.path, mode);
    const hits = await kb.search(rt.observed(), def.top_k ?? 1, def.threshold ?? defaultThreshold(mode, kb.embedderId));
    return [{ kind: 'knowledge', text: renderV1('knowledge', { qa: mode === 'qa', hits }) }];
  },
};
