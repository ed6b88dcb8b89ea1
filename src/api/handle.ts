// The handle of a run started from code: its events as an async iterable, its result, stop().
import type { RunEvent } from '../core/runtime/events.js';
import type { RunResult } from '../core/runtime/run-loop.js';

export interface RunHandle extends AsyncIterable<RunEvent> {
  /** The run's id (its folder's name when it writes one). */
  readonly runId: string;
  /** The run folder, when the run writes one (`out`). */
  readonly dir?: string;
  /** Settles when the run ends: finished, max_turns, budget, failed or interrupted. Rejects only when the run cannot start. */
  readonly result: Promise<RunResult>;
  /** Stop at the next turn boundary; the run ends `interrupted` (resumable when it writes a folder). */
  stop(): void;
}

/**
 * Events fanned out to every iterator. Events before the first iterator attaches are kept for
 * it, so `for await` right after runSop sees the whole run; a later iterator sees what follows.
 */
export class EventFeed {
  private readonly iterators = new Set<{ queue: RunEvent[]; wake?: () => void }>();
  private early: RunEvent[] | undefined = [];
  private done = false;
  private failure: unknown;

  push(event: RunEvent): void {
    if (this.early) this.early.push(event);
    for (const it of this.iterators) {
      it.queue.push(event);
      it.wake?.();
    }
  }

  end(failure?: unknown): void {
    this.done = true;
    this.failure = failure;
    for (const it of this.iterators) it.wake?.();
  }

  async *iterate(): AsyncGenerator<RunEvent> {
    const it: { queue: RunEvent[]; wake?: () => void } = { queue: this.early ?? [] };
    this.early = undefined;
    this.iterators.add(it);
    try {
      for (;;) {
        while (it.queue.length > 0) {
          const batch = it.queue;
          it.queue = [];
          for (const e of batch) yield e;
        }
        if (this.done) {
          // eslint-disable-next-line @typescript-eslint/only-throw-error -- the run's own failure, as it was thrown
          if (this.failure !== undefined) throw this.failure;
          return;
        }
        await new Promise<void>((resolve) => {
          it.wake = resolve;
        });
        it.wake = undefined;
      }
    } finally {
      this.iterators.delete(it);
    }
  }
}
