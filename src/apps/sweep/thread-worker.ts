// A worker thread of `sop sweep --threads N` (tinypool): runs its share of the grid points with
// its own event loop, openai client and connections, and posts each result line back as its run
// ends (the main thread appends it to results.jsonl). A "stop" message stops its runs after their turn.
import { setMaxListeners } from 'node:events';
import type { MessagePort } from 'node:worker_threads';
import { loadSopFile } from '../../api/loader/checked-load.js';
import { loadSopFilePlugins } from '../../api/plugins.js';
import { configureSecrets } from '../../shared/util/redact.js';
import type { LlmProvider } from '../../core/llm/types.js';
import type { GridPoint } from './grid.js';
import { failedLine, runPoint, type PointOptions } from './run-point.js';
import { needsLlm, sharedProvider, sweepServer } from './shared-provider.js';
import { LlmConsent, fileLlmAllowEntries, type LlmAllowEntry } from '../../core/llm/consent.js';

export interface ThreadTask {
  points: GridPoint[];
  options: Omit<PointOptions, 'sop' | 'provider' | 'signal' | 'onEvent'> & { allow: LlmAllowEntry[] };
  concurrency: number;
  port: MessagePort;
}

/** What a thread posts: a finished run's line, or the tokens and cost of one LLM call. */
export type ThreadMessage =
  { started: string } | { line: import('./results.js').ResultLine } | { tokens: number; cost?: number } | { done: number };

export default async function runShare(task: ThreadTask): Promise<number> {
  configureSecrets({ urls: [task.options.baseUrl] }); // this thread's own redactor
  // the modules of the SOP's "plugins": the sweep approved them before it started its threads
  await loadSopFilePlugins(task.options.file, { unattended: true });
  const { sop } = loadSopFile(task.options.file);
  configureSecrets({ urls: [sop.llm?.base_url] });
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every run (and its LLM calls) listens to it
  task.port.on('message', (m) => {
    if (m === 'stop') stop.abort();
  });
  const providers = new Map<string, LlmProvider>();
  // a SOP of rule agents only needs no LLM (no key, no server): its runs are given none
  const provider = !needsLlm(sop, task.options.llm)
    ? undefined
    : await sharedProvider(
        providers,
        task.options.llm ?? sop.llm?.provider,
        sweepServer(sop, task.options.baseUrl, new LlmConsent({ allow: () => [...task.options.allow, ...fileLlmAllowEntries()] })),
        task.options.timeoutMs,
      );
  let next = 0;
  const lane = async () => {
    while (next < task.points.length && !stop.signal.aborted) {
      const p = task.points[next++]!;
      const t0 = Date.now();
      task.port.postMessage({ started: p.key } satisfies ThreadMessage);
      const line = await runPoint(p, {
        ...task.options,
        sop,
        provider,
        signal: stop.signal,
        onEvent: (e) => {
          if (e.type === 'llm_call' || e.type === 'embedding_call')
            task.port.postMessage({ tokens: e.usage.promptTokens + e.usage.completionTokens, cost: e.cost_usd });
        },
      }).catch((err: unknown) => failedLine(p, err instanceof Error ? err.message : String(err), undefined, Date.now() - t0));
      task.port.postMessage({ line } satisfies ThreadMessage);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(task.concurrency, task.points.length)) }, lane));
  task.port.postMessage({ done: task.points.length } satisfies ThreadMessage);
  return task.points.length;
}
