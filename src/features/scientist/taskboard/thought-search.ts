// Searching the board's thoughts by meaning (embedding similarity of name and content).
import type { SearchHit, TextIndex } from '../text-index.js';
import type { TaskBoard } from './board.js';
import type { Thought } from './task.js';

export interface ThoughtHit {
  thought: Thought;
  score: number;
}

export async function searchThoughts(board: TaskBoard, index: TextIndex, query: string, k = 5, minScore = -1): Promise<ThoughtHit[]> {
  const items = board.thoughts.map((t) => ({ key: t, text: `${t.name}: ${t.content}` }));
  const hits: SearchHit<Thought>[] = await index.search(query, items, k, minScore);
  return hits.map((h) => ({ thought: h.key, score: h.score }));
}
