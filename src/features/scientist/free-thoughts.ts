// The self of seed 003: thoughts the agent had with no task (awakening, reflection) are not
// lost. Before each turn, the free thoughts closest in meaning to the task in progress (else to
// the mission) are found with the run's embedder, and the task board view shows them.
import { embedderLearns } from '../../core/components/knowledge-base.js';
import type { Embedder } from '../../core/memory/embedder.js';
import type { TaskBoard } from './taskboard/board.js';
import type { RelevantThought } from './views.js';
import { TextIndex } from './text-index.js';

/** How many free thoughts a prompt shows, and how similar each must be to the query. */
export const FREE_THOUGHTS_SHOWN = 3;
export const FREE_THOUGHT_MIN_SCORE = 0.05;

/** What the agent works on now: the task in progress, else the mission. */
export function focusOf(board: TaskBoard, mission: string): string {
  const t = board.inProgress();
  return t ? `${t.name}: ${t.description ?? ''}` : mission;
}

export class FreeThoughts {
  private index?: TextIndex;

  /** `embedder` makes a new embedder. One that learns from what it embeds (the local one) is made
   * afresh for every search, so what a prompt shows depends only on the board: a resumed run shows the same. */
  constructor(private readonly embedder: () => Promise<Embedder>) {}

  async relevant(board: TaskBoard, mission: string, k = FREE_THOUGHTS_SHOWN): Promise<RelevantThought[]> {
    const free = board.thoughts.filter((t) => t.task === undefined);
    if (free.length === 0) return [];
    if (!this.index || embedderLearns(this.index.embedder)) this.index = new TextIndex(await this.embedder());
    const items = free.map((t) => ({ key: t, text: `${t.name}: ${t.content}` }));
    const hits = await this.index.search(focusOf(board, mission), items, k, FREE_THOUGHT_MIN_SCORE);
    return hits.map((h) => ({ id: h.key.id, name: h.key.name, content: h.key.content, score: h.score }));
  }
}
