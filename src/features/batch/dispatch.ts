// A step's calls sent as one batch (the `dispatch` hook of src/core/runtime/hooks.ts): the batch file
// is built from the calls no journal answered, submitted once as an effect journaled under the
// step's own key (`batch:STATE:VISIT:STEP`), so a run killed while it waits gets the same batch
// back when resumed and polls it instead of paying for it twice; then it is polled until it is
// over, and each call is settled by its custom_id (its key in the step). A `batch` event tells the
// submission and each change of the batch's status (the terminal shows it, the journal keeps it).
import { LlmInterruptedError } from '../../core/llm/interruptible.js';
import { LlmError } from '../../core/llm/types.js';
import type { CallDispatch, DispatchedCall, StepRef } from '../../core/runtime/call-many.js';
import type { RunContext } from '../../core/runtime/hooks.js';
import { BatchResults, batchFile } from './lines.js';
import { isSubmitted, type BatchStatus, type BatchTarget, type Submitted } from './target.js';
import { pollDelays, sleep } from './wait.js';

export interface BatchDispatchOptions {
  target: BatchTarget;
  /** The longest wait between two polls, ms. */
  pollCapMs?: number;
  /** The user's Ctrl-C: the wait ends, resumably. */
  stop?: AbortSignal;
}

export class BatchDispatch implements CallDispatch {
  readonly name = 'batch';
  /** A killed run's batch is waited for again when it resumes: its calls are not lost. */
  readonly outlivesRun = true;

  constructor(
    private readonly ctx: Pick<RunContext, 'perform' | 'emit'>,
    private readonly o: BatchDispatchOptions,
  ) {}

  async send(all: DispatchedCall[], step: StepRef, signal?: AbortSignal): Promise<void> {
    // a batch goes to the run's own server: a call whose LLM block names another is refused
    const calls: DispatchedCall[] = [];
    for (const c of all) {
      if (c.request.endpoint === undefined) calls.push(c);
      else
        c.reject(
          new LlmError(
            `batch mode sends a step's calls to the run's own server; the call ${c.key} of state "${step.state}" names another (llm.base_url or llm.api_key_env): send that state's calls directly`,
          ),
        );
    }
    const target = this.o.target;
    // a resumed run whose journaled batch ended (failed, expired) without answering some calls sends those in the next one
    let pending = calls;
    for (let attempt = 1; pending.length > 0; attempt++) {
      const asked = pending;
      const requests = new Map(asked.map((c) => [c.key, c.request]));
      const { value, reused } = await this.ctx.perform(
        {
          kind: 'batch',
          key: `batch:${step.state}:${step.visit}:${step.step}${attempt > 1 ? `#${attempt}` : ''}`,
          label: `batch@${step.state} (${target.name})`,
          journalsResult: true,
        },
        () =>
          target.submit(batchFile(asked.map((c) => ({ customId: c.key, request: c.request }))), step, [
            ...new Set(asked.map((c) => c.request.model)),
          ]),
      );
      if (!isSubmitted(value, target.name)) throw new LlmError(`the journal holds a batch of state "${step.state}" that is not one`);
      const tell = (s: Pick<BatchStatus, 'status' | 'completed' | 'failed'>) =>
        this.ctx.emit({
          type: 'batch',
          state: step.state,
          visit: step.visit,
          step: step.step,
          target: target.name,
          id: value.id,
          status: s.status,
          calls: asked.length,
          ...(s.completed !== undefined ? { completed: s.completed } : {}),
          ...(s.failed !== undefined ? { failed: s.failed } : {}),
          ...(value.command ? { command: value.command } : {}),
        });
      tell({ status: reused ? 'resumed' : 'submitted' });
      const ended = await this.wait(value, new Set(requests.keys()), tell, signal);
      // the result files are read as a stream, a line at a time: a reply settles nothing until every line is read
      const parsed = new BatchResults(requests, `batch ${value.id}`);
      await ended.read((line) => parsed.add(line));
      const { results } = parsed;
      const dropped = parsed.dropped();
      if (dropped) this.ctx.emit({ type: 'warning', message: dropped });
      // each reply settles its call; a resumed run's batch that ended early (failed, expired) sends the rest again
      const again = reused && ended.problem !== undefined;
      pending = [];
      for (const c of asked) {
        const r = results.get(c.key);
        if (r && 'reply' in r) c.resolve({ ...r.reply, ...(target.name === 'openai' ? { priceTier: 'batch' as const } : {}) });
        else if (again) pending.push(c);
        else if (r) c.reject(new LlmError(`batch ${value.id}: the call ${c.key} of state "${step.state}" failed: ${r.error}`));
        else
          c.reject(
            new LlmError(
              `batch ${value.id}: no result for the call ${c.key} of state "${step.state}"${ended.problem ? ` (${ended.problem})` : ''}${dropped ? `; ${dropped}` : ''}`,
            ),
          );
      }
      if (pending.length > 0)
        this.ctx.emit({
          type: 'warning',
          message: `${ended.problem}; its ${pending.length} calls without a reply are sent in a new batch`,
        });
    }
  }

  /** Polls until the batch is over, telling each change of its status; a Ctrl-C ends the wait resumably. */
  private async wait(
    batch: Submitted,
    ids: ReadonlySet<string>,
    tell: (s: BatchStatus) => void,
    signal?: AbortSignal,
  ): Promise<NonNullable<BatchStatus['ended']>> {
    const stop = this.o.stop;
    try {
      return await this.poll(batch, ids, tell, stop ? (signal ? AbortSignal.any([signal, stop]) : stop) : signal);
    } catch (err) {
      if (stop?.aborted && !signal?.aborted)
        throw new LlmInterruptedError(`stopped by Ctrl-C while waiting for batch ${batch.id}; sop resume waits for it again`);
      throw err;
    }
  }

  private async poll(
    batch: Submitted,
    ids: ReadonlySet<string>,
    tell: (s: BatchStatus) => void,
    signal?: AbortSignal,
  ): Promise<NonNullable<BatchStatus['ended']>> {
    let last = '';
    const delays = pollDelays(this.o.pollCapMs);
    for (;;) {
      const s = await this.o.target.poll(batch, ids, signal);
      const now = `${s.status}/${s.completed ?? ''}/${s.failed ?? ''}`;
      if (now !== last) tell(s);
      last = now;
      if (s.ended) return s.ended;
      await sleep(delays.next().value, signal);
    }
  }
}
