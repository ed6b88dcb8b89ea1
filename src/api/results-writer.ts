// RUN/population.duckdb appended step by step as a run goes (docs/population.md#results): after
// each checkpoint the journal's new lines are read and appended (src/api/results-journal.ts),
// in the background, one catch-up at a time (the checkpoints of fast steps go together). A
// killed run's database lacks at most the steps since the last catch-up; the next one (its
// resume, `sop query`) reads them from the journal. DuckDB is loaded only once a run has a
// population state.
import type { RunEvent } from '../core/runtime/events.js';

export class ResultsWriter {
  private running: Promise<void> | undefined;
  private again = false;
  private readonly warnings = new Set<string>();
  private failure: string | undefined;

  /** `trustedFrom`: the journal's size when this process opened it (what it writes from there on is its own). */
  constructor(
    private readonly dir: string,
    private readonly trustedFrom: number,
  ) {}

  /** Listener, after the run folder's: a top-level checkpoint is in the journal. */
  readonly onEvent = (e: RunEvent): void => {
    if (e.type !== 'checkpoint') return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop();
  };

  private async loop(): Promise<void> {
    do {
      this.again = false;
      await this.update(false);
    } while (this.again);
    this.running = undefined;
  }

  private async update(final: boolean): Promise<void> {
    try {
      const { updateResultsDb } = await import('./results-db.js');
      const r = await updateResultsDb(this.dir, {
        trustedFrom: this.trustedFrom,
        retryAgents: false, // a population that could not be loaded is told once, not every step
        ...(final ? {} : { unfinished: () => 'running' as const }),
      });
      for (const w of r.warnings) this.warnings.add(w);
      this.failure = undefined;
    } catch (err) {
      this.failure = err instanceof Error ? err.message.split('\n')[0] : String(err);
    }
  }

  /** After the journal is closed: the last lines appended. Returns warnings (without "warning: "). */
  async close(): Promise<string[]> {
    while (this.running) await this.running;
    await this.update(true);
    const out = [...this.warnings];
    if (this.failure !== undefined) out.push(`population.duckdb not written: ${this.failure}`);
    return out;
  }
}
