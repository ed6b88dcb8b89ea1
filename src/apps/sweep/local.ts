// A sweep in this process: up to `concurrency` runs at once, each line appended to
// results.jsonl as its run ends.
import type { GridPoint } from './grid.js';
import type { Progress } from './progress.js';
import type { ResultsFile } from './results.js';
import { failedLine, runPoint, type PointOptions } from './run-point.js';

export async function sweepLocal(
  points: readonly GridPoint[],
  o: PointOptions & { concurrency: number; results: ResultsFile; progress?: Progress },
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < points.length && !o.signal?.aborted) {
      const p = points[next++]!;
      o.progress?.start();
      const t0 = Date.now();
      const line = await runPoint(p, {
        ...o,
        onEvent: (e) => {
          if (e.type === 'llm_call' || e.type === 'embedding_call')
            o.progress?.call(e.usage.promptTokens + e.usage.completionTokens, e.cost_usd);
        },
      }).catch((err: unknown) => failedLine(p, err instanceof Error ? err.message : String(err), undefined, Date.now() - t0));
      o.results.add(line);
      o.progress?.end(line);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(o.concurrency, points.length)) }, lane));
}
