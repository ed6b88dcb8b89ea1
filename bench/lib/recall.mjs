// Recall@k of an embedder on the labelled set test/fixtures/retrieval/paraphrases.json: the run's
// history is embedded (as a run embeds its messages), each query is embedded as a query, and a
// query counts as found when one of the messages labelled for it is among the k nearest.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const PARAPHRASES = JSON.parse(
  readFileSync(join(import.meta.dirname, '..', '..', 'test', 'fixtures', 'retrieval', 'paraphrases.json'), 'utf8'),
);

const dot = (a, b) => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i] * b[i];
  return s;
};

/** { recall, found, queries, misses: [query text] } of `embedder` at k (default 5). */
export async function recallAtK(embedder, k = 5, set = PARAPHRASES) {
  const rows = [];
  for (const text of set.history) rows.push(...(await embedder.embed([text]))); // one at a time, as a run adds them
  const queries = await (embedder.embedQuery ?? embedder.embed).call(
    embedder,
    set.queries.map((q) => q.query),
  );
  let found = 0;
  const misses = [];
  set.queries.forEach((q, i) => {
    const top = rows
      .map((r, row) => ({ row, score: dot(r, queries[i]) }))
      .sort((a, b) => b.score - a.score)
      .slice(0, k)
      .map((h) => h.row);
    if (q.relevant.some((r) => top.includes(r))) found++;
    else misses.push(q.query);
  });
  return { recall: found / set.queries.length, found, queries: set.queries.length, misses };
}
