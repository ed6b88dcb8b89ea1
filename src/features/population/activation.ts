// Which agents of a population act at a step (docs/population.md#the-step): a probability per
// agent, a 24-slot schedule over the simulated clock (a probability per hour), or an expression
// over the agent's attributes (and its state, with rules as data). A draw is seeded by (seed, step, agent id), so who acts never
// depends on the order agents are looked at, nor on how many others there are.
import { compileExpression, type CompiledExpression } from './worlds/expr.js';
import { mixSeed, seedPrefix, textSeedsFrom } from './worlds/seed.js';
import type { Population } from './population.js';
import type { Activation } from './state-spec.js';

/** A uniform draw in [0, 1) from the parts, without allocating a generator. */
export function drawUniform(...parts: ReadonlyArray<string | number>): number {
  return mixSeed(...parts) / 4294967296;
}

export interface ActivationRule {
  /** Indices of the agents that act at this step, in population order. */
  active(pop: Population, step: number, minute: number, stateOf?: (i: number) => Record<string, unknown>): number[];
}

export function activationRule(spec: Activation, runSeed: number): ActivationRule {
  const seed = spec.seed ?? runSeed;
  if ('expr' in spec) {
    const expr: CompiledExpression = compileExpression(spec.expr);
    return {
      active(pop, step, minute, stateOf) {
        const out: number[] = [];
        const hour = Math.floor((((minute % 1440) + 1440) % 1440) / 60);
        for (let i = 0; i < pop.size; i++)
          if (expr.evaluate({ ...pop.row(i), ...stateOf?.(i), id: pop.ids[i]!, step, hour }) === true) out.push(i);
        return out;
      },
    };
  }
  const probabilityAt = (minute: number): number =>
    'schedule' in spec ? spec.schedule[Math.floor((((minute % 1440) + 1440) % 1440) / 60)]! : spec.probability;
  return {
    active(pop, step, minute) {
      const p = probabilityAt(minute);
      const out: number[] = [];
      if (p <= 0) return out;
      if (p >= 1) {
        for (let i = 0; i < pop.size; i++) out.push(i);
        return out;
      }
      // drawUniform(seed, 'activation', step, id), the step's part hashed once
      const seedOf = textSeedsFrom(seedPrefix(seed, 'activation', step));
      for (let i = 0; i < pop.size; i++) if (seedOf(pop.ids[i]!) / 4294967296 < p) out.push(i);
      return out;
    },
  };
}
