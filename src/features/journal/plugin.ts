// Durability as a plugin of a run (src/core/runtime/hooks.ts): every outside effect goes through the
// journal's effect ledger, so a resumed run reuses what the journal holds (src/features/journal/effects.ts).
// Checkpoints are the run's `checkpoint` events, written to the journal by the run folder.
import type { RunContext } from '../../core/runtime/context.js';
import type { RunPlugin } from '../../core/runtime/hooks.js';
import { EffectLedger, type EffectIndex, type RerunPolicy } from './effects.js';

export interface DurabilityOptions {
  /** Effect results in the journal (a resumed run, or a sub-flow of one). */
  index?: EffectIndex;
  /** Side effects interrupted by a crash: perform again with --auto-run, or ask. */
  rerun?: RerunPolicy;
  /** A sub-flow's keys start with its flow path ("Coder-1/"). */
  prefix?: string;
}

export function durabilityPlugin(host: RunContext, o: DurabilityOptions): RunPlugin {
  const effects = new EffectLedger(
    (e) => host.emit(e),
    () => host.turn(),
    o.index,
    o.rerun,
    o.prefix ?? '',
    { position: () => host.llm().position, seek: (n) => host.llm().seek?.(n) },
  );
  return { name: 'durability', effects: () => effects };
}
