// How a population step's acting agents decide (docs/population.md#cognition): each by the first
// cognition entry whose `where` it matches, a rule policy, one LLM call of its own (per_agent), or
// one call per archetype of the step (the first acting agent of each archetype asks for all of
// them). Used by the step (src/features/population/step.ts) and by `sop plan` to count a step's calls.
import type { RulePolicy } from './worlds/rule.js';
import { compileExpression, type CompiledExpression } from './worlds/expr.js';
import { agentScope } from './decide.js';
import type { Population } from './population.js';
import { rulePolicy } from './rules.js';
import type { CognitionEntry } from './state-spec.js';

export interface Tier {
  entry: CognitionEntry;
  where?: CompiledExpression;
  policy?: RulePolicy;
}

/**
 * The state's cognition entries, compiled; `actions`: the names of the world's tools, for the rule
 * policies (without them, tiers only tell who decides how: `sop plan` counting calls).
 */
export function compileTiers(
  cognition: readonly CognitionEntry[],
  actions?: readonly string[],
  /** The policy of a tier declared as cases (rules as data: ./rule-program.ts). */
  casesPolicy?: (cases: NonNullable<CognitionEntry['cases']>) => RulePolicy,
): Tier[] {
  const policyOf = (entry: CognitionEntry): RulePolicy | undefined => {
    if (entry.tier !== 'rule' || !actions) return undefined;
    if (entry.cases && casesPolicy) return casesPolicy(entry.cases);
    return rulePolicy(entry.policy ?? 'idle', entry.params ?? {}, [...actions]);
  };
  return cognition.map((entry) => {
    const policy = policyOf(entry);
    return { entry, ...(entry.where ? { where: compileExpression(entry.where) } : {}), ...(policy ? { policy } : {}) };
  });
}

/** The tier an agent decides by: the first entry whose `where` it matches (none: it stays idle). */
export function tierOf(tiers: readonly Tier[], pop: Population, i: number): Tier | undefined {
  for (const t of tiers) if (!t.where || t.where.evaluate(agentScope(pop, i)) === true) return t;
  return undefined;
}

export interface DecisionGroups {
  rule: Array<{ i: number; tier: Tier }>;
  perAgent: Array<{ i: number; tier: Tier }>;
  /** One LLM call each, asked by its first acting agent (`lead`) for all its members. */
  archetypes: Array<{ lead: number; members: number[]; tier: Tier }>;
}

/** The acting agents (in population order) by how they decide. */
export function decisionGroups(tiers: readonly Tier[], pop: Population, active: readonly number[]): DecisionGroups {
  const out: DecisionGroups = { rule: [], perAgent: [], archetypes: [] };
  const archetypes = new Map<string, { lead: number; members: number[]; tier: Tier }>();
  for (const i of active) {
    const tier = tierOf(tiers, pop, i);
    if (!tier) continue;
    if (tier.entry.tier === 'rule') out.rule.push({ i, tier });
    else if (tier.entry.tier === 'per_agent') out.perAgent.push({ i, tier });
    else {
      const key = `${tiers.indexOf(tier)}\u0000${pop.archetypeKey(i)}`;
      const group = archetypes.get(key);
      if (group) group.members.push(i);
      else archetypes.set(key, { lead: i, members: [i], tier });
    }
  }
  out.archetypes = [...archetypes.values()];
  return out;
}
