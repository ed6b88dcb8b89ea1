// A paid embedder's requests (openai:MODEL) count like LLM calls: in the run's usage
// (by_purpose.embedding), its cost, its budgets (the plugins' afterCall), and an
// `embedding_call` event. A sub-flow sharing the embedder counts its own while it runs.
import { callCost, priceOf, type PricingTable } from '../llm/pricing.js';
import type { CallMeta, Usage } from '../llm/types.js';
import type { Embedder, EmbeddingUsage } from '../memory/embedder.js';
import { addUsage, type RunEvent, type UsageTotals } from './events.js';

export interface EmbeddingMeterHost {
  readonly usage: UsageTotals;
  readonly pricing?: PricingTable;
  /** The current state and turn. */
  where(): { state: string; turn: number };
  /** Told every counted call (budgets). */
  counted(meta: CallMeta, usage: Usage, cost: number | undefined): void;
  emit(event: RunEvent): void;
}

export class RunEmbeddingMeter {
  private readonly attached = new Map<Embedder, () => void>();
  /** Requests told before the run started (the dimension probe): counted once it has. */
  private early: EmbeddingUsage[] | undefined = [];

  constructor(private readonly host: EmbeddingMeterHost) {}

  /** The embedder, its requests now counted in this run. */
  readonly metered = (e: Embedder): Embedder => {
    if (e.meter && !this.attached.has(e))
      this.attached.set(
        e,
        e.meter((u) => this.count(u)),
      );
    return e;
  };

  /** The run has started (its first event is out): count what came before, and all from now on. */
  start(): void {
    const early = this.early ?? [];
    this.early = undefined;
    for (const u of early) this.count(u);
  }

  /** The run has ended: requests are counted by the run around it again (a sub-flow's parent). */
  detach(): void {
    for (const detach of this.attached.values()) detach();
    this.attached.clear();
  }

  private count(u: EmbeddingUsage): void {
    if (this.early) {
      this.early.push(u);
      return;
    }
    const h = this.host;
    const usage = { promptTokens: u.promptTokens, completionTokens: 0 };
    const cost = h.pricing ? callCost(priceOf(h.pricing, u.model), usage) : undefined;
    addUsage(h.usage, 'embedding', usage, h.pricing ? { model: u.model, cost } : undefined);
    const { state, turn } = h.where();
    h.counted({ purpose: 'embedding', state, turn }, usage, cost);
    h.emit({
      type: 'embedding_call',
      state,
      turn,
      model: u.model,
      texts: u.texts,
      usage,
      ...(cost !== undefined ? { cost_usd: cost } : {}),
    });
  }
}
