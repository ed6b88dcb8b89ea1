// The `rule` cognition tier: a declared policy with no LLM, for baselines, calibration and tests.
// A policy sees what an LLM agent would (its observation of the step-start state) and a
// generator seeded from (seed, step, agent id), so its choice does not depend on which agents
// ran first. `runRuleStep` plays one simultaneous step: every active agent observes the same
// state, then the actions are applied in the declared order.
import { orderActions, type AttrsOf, type OrderPolicy } from './order.js';
import { seededRng, seedPrefix, textSeedsFrom } from './seed.js';
import { Rng } from '../../../core/runtime/rng.js';
import type { ActionOutcome, Json, StepAction, World } from './world.js';

export interface RuleContext {
  agent: string;
  observation: Json;
  step: number;
  rng: Rng;
}

/** The actions (tool name and arguments) one agent takes this step; none is the same as idle. */
export type RulePolicy = (ctx: RuleContext) => Array<{ name: string; args: Record<string, unknown> }>;

/** The generator of one agent's rule decision at one step. */
export const ruleRng = (seed: number, step: number, agent: string): Rng => seededRng(seed, 'rule', step, agent);

/** ruleRng for many agents of one step, the step's part of the seed hashed once. */
export function ruleRngs(seed: number, step: number): (agent: string) => Rng {
  const seedOf = textSeedsFrom(seedPrefix(seed, 'rule', step));
  return (agent) => new Rng(seedOf(agent));
}

export interface RuleStep {
  /** The actions in the order they were applied. */
  actions: StepAction[];
  outcomes: ActionOutcome[];
}

/** One step of rule agents: observe all, decide all, order, apply. Mutates `state`. */
export function runRuleStep<S, P>(
  world: World<S, P>,
  state: S,
  opts: { agents: readonly string[]; policy: RulePolicy; seed: number; step: number; k: number; order?: OrderPolicy; attrsOf?: AttrsOf },
): RuleStep {
  const observations = opts.agents.map((agent) => [agent, world.observe(state, agent, opts.k)] as const);
  const actions: StepAction[] = [];
  for (const [agent, observation] of observations) {
    const chosen = opts.policy({ agent, observation, step: opts.step, rng: ruleRng(opts.seed, opts.step, agent) });
    chosen.forEach((c, seq) => actions.push({ agent, name: c.name, args: c.args, seq }));
  }
  const ordered = orderActions(actions, opts.order ?? { type: 'shuffle', seed: opts.seed }, opts.step, opts.attrsOf);
  return { actions: ordered, outcomes: world.apply(state, ordered, opts.step) };
}
