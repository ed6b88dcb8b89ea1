// Progress of the LLM calls a model generates in this process (`--llm local:`, issue 37): a small
// model on a busy CPU may think for minutes, and a population step's many calls longer, with
// nothing else to show for it. A provider that generates here tells each call's prompt tokens and
// reply tokens so far (ChatOptions.onProgress); this meter adds them up per call of a turn, or per
// population step (its calls together), and tells an `llm_progress` event every `everyMs` while
// such calls are in flight: the first after `everyMs`, so calls quicker than that tell nothing.
// A server's calls report nothing and tell nothing.
import type { CallMeta, CallProgress } from '../llm/types.js';
import type { RunEvent } from './events.js';

/** How often progress is told while a local model thinks (ms). */
export const PROGRESS_EVERY_MS = 5000;

/** A call being metered: what its provider reports, and its end. */
export interface MeteredCall {
  onProgress: (p: CallProgress) => void;
  end: () => void;
}

type ProgressEvent = Extract<RunEvent, { type: 'llm_progress' }>;

/** The calls of one turn of one agent, or of one population step. */
interface Group {
  meta: CallMeta;
  calls: number;
  done: number;
  /** Calls reporting now: their prompt and reply tokens. */
  running: Map<number, CallProgress>;
  /** Reply tokens of the calls answered (or given up). */
  finishedTokens: number;
  /** Prompt tokens of the calls that began reading theirs. */
  promptTokens: number;
  started: number;
  firstToken?: number;
  lastTold: number;
  /** Some call of the group reported progress (a model in this process). */
  reporting: boolean;
}

export class LlmProgress {
  private readonly groups = new Map<string, Group>();
  private timer: NodeJS.Timeout | undefined;
  private ids = 0;
  /** A listener's failure in a tick (a full disk under the journal): thrown to the run by `rethrow`. */
  private failed: unknown;

  constructor(
    private readonly emit: (e: RunEvent) => void,
    private readonly everyMs = PROGRESS_EVERY_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A call begins (before it waits for anything): its group is its agent's turn, or its population step. */
  begin(meta: CallMeta): MeteredCall {
    const key = meta.population
      ? `step\u0000${meta.state}\u0000${meta.turn}`
      : `call\u0000${meta.state}\u0000${meta.turn}\u0000${meta.purpose}\u0000${meta.agent ?? ''}`;
    let g = this.groups.get(key);
    if (!g) {
      const t = this.now();
      g = { meta, calls: 0, done: 0, running: new Map(), finishedTokens: 0, promptTokens: 0, started: t, lastTold: t, reporting: false };
      this.groups.set(key, g);
    }
    const group = g;
    group.calls++;
    const id = this.ids++;
    let ended = false;
    this.timer ??= setInterval(() => this.tick(), Math.min(1000, this.everyMs)).unref();
    return {
      onProgress: (p) => {
        if (ended) return;
        const before = group.running.get(id);
        if (!before) group.promptTokens += p.promptTokens;
        if (p.tokens > 0) group.firstToken ??= this.now();
        group.running.set(id, { promptTokens: p.promptTokens, tokens: p.tokens });
        group.reporting = true;
      },
      end: () => {
        if (ended) return;
        ended = true;
        group.done++;
        group.finishedTokens += group.running.get(id)?.tokens ?? 0;
        group.running.delete(id);
      },
    };
  }

  /** Tells the groups due; forgets those with nothing in flight; stops when none is left. */
  private tick(): void {
    const t = this.now();
    for (const [key, g] of this.groups) {
      if (g.done >= g.calls) {
        this.groups.delete(key);
        continue;
      }
      if (!g.reporting || t - g.lastTold < this.everyMs) continue;
      g.lastTold = t;
      try {
        if (this.failed === undefined) this.emit(this.event(g, t));
      } catch (err) {
        this.failed = err;
      }
    }
    if (this.groups.size === 0) this.stop();
  }

  private event(g: Group, t: number): ProgressEvent {
    let tokens = g.finishedTokens;
    for (const r of g.running.values()) tokens += r.tokens;
    const since = g.firstToken === undefined ? 0 : (t - g.firstToken) / 1000;
    return {
      type: 'llm_progress',
      state: g.meta.state,
      turn: g.meta.turn,
      ...(g.meta.population ? { population: true } : { purpose: g.meta.purpose, ...(g.meta.agent ? { agent: g.meta.agent } : {}) }),
      calls: g.calls,
      done: g.done,
      generating: g.running.size,
      prompt_tokens: g.promptTokens,
      tokens,
      tokens_per_s: since > 0 ? Math.round((tokens / since) * 10) / 10 : 0,
      elapsed_ms: Math.round(t - g.started),
    };
  }

  /** Groups of calls still followed (the run's turns or steps with calls in flight, until the next tick). */
  get following(): number {
    return this.groups.size;
  }

  /** Throws what a listener threw at a tick (the run's next call end stops the run with it). */
  rethrow(): void {
    if (this.failed === undefined) return;
    const err = this.failed;
    this.failed = undefined;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- what the listener threw, as it was
    throw err;
  }

  /** No more events (the run ends). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}

const seconds = (ms: number) => `${Math.round(ms / 1000)} s`;

/** An `llm_progress` event in words, as the terminal and `sop view` show it. */
export function progressText(e: ProgressEvent): string {
  const rate = e.tokens > 0 ? `${e.tokens} tokens so far, ${e.tokens_per_s} tokens/s` : `reading ${e.prompt_tokens} prompt tokens`;
  if (e.population)
    return `step at turn ${e.turn}: ${e.done} of ${e.calls} calls answered, ${e.generating} generating; ${rate} (${seconds(e.elapsed_ms)})`;
  const who = e.agent ? `${e.agent}'s ${e.purpose ?? 'agent'} call` : `the ${e.purpose ?? 'agent'} call`;
  return `${who}: ${rate} (${seconds(e.elapsed_ms)})`;
}
