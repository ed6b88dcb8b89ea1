// `sop sweep` over worker threads (tinypool), one per core by default when the sweep is large
// enough: each thread runs a share of the points with its own event loop and HTTP connections, so
// the CPU of LLM calls (HTTP, JSON) is spread over the cores. bench/results.json "sweep" has the figures.
import { MessageChannel } from 'node:worker_threads';
import type { LlmAllowEntry } from '../../core/llm/consent.js';
import type { GridPoint } from './grid.js';
import type { Progress } from './progress.js';
import type { ResultsFile } from './results.js';
import type { PointOptions } from './run-point.js';
import type { ThreadMessage } from './thread-worker.js';

export async function sweepThreads(
  points: readonly GridPoint[],
  o: Omit<PointOptions, 'sop' | 'provider' | 'onEvent'> & {
    /** LLM servers of the SOP the user allowed (flags, a terminal); each thread adds the allow file. */
    allow: LlmAllowEntry[];
    threads: number;
    concurrency: number;
    results: ResultsFile;
    progress?: Progress;
    /** A pool kept by the caller across calls (sop calibrate's batches); default: one made and destroyed here. */
    pool?: ThreadPool;
  },
): Promise<void> {
  const threads = Math.max(1, Math.min(o.threads, points.length));
  const pool = o.pool ?? (await threadPool(threads));
  const { signal, concurrency, results, progress } = o;
  const options = {
    ...o,
    threads: undefined,
    concurrency: undefined,
    results: undefined,
    progress: undefined,
    signal: undefined,
    pool: undefined,
  };
  const shares: GridPoint[][] = Array.from({ length: threads }, () => []);
  points.forEach((p, i) => shares[i % threads]!.push(p));
  const ports: Array<import('node:worker_threads').MessagePort> = [];
  const onAbort = () => {
    for (const port of ports) port.postMessage('stop');
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    await Promise.all(
      shares.map(async (share) => {
        const { port1, port2 } = new MessageChannel();
        ports.push(port1);
        // every line has arrived once the thread says done (messages may trail the task's own answer)
        const done = new Promise<void>((resolve, reject) => {
          port1.on('message', (m: ThreadMessage) => {
            if ('line' in m) {
              try {
                results.add(m.line);
              } catch (err) {
                // files: results.jsonl cannot be written (a full disk): the sweep stops, saying so
                onAbort();
                reject(err instanceof Error ? err : new Error(String(err)));
                return;
              }
              progress?.end(m.line);
            } else if ('started' in m) progress?.start();
            else if ('tokens' in m) progress?.call(m.tokens, m.cost);
            else resolve();
          });
        });
        done.catch(() => {}); // observed below, once the thread's task has ended
        try {
          await pool.run({ points: share, options, concurrency: Math.ceil(concurrency / threads), port: port2 }, { transferList: [port2] });
          await done;
        } finally {
          port1.close();
        }
      }),
    );
  } finally {
    signal?.removeEventListener('abort', onAbort);
    if (!o.pool) await pool.destroy();
  }
}

export type ThreadPool = import('tinypool').default;

/** A pool of `threads` worker threads running thread-worker.ts. */
export async function threadPool(threads: number): Promise<ThreadPool> {
  const { default: Tinypool } = await import('tinypool');
  return new Tinypool({ filename: new URL('./thread-worker.js', import.meta.url).href, minThreads: threads, maxThreads: threads });
}
