// Large populations in `sop plan` (docs/plan.md#large-populations): a population state of more
// agents than the plan's sample size is dry-run with a uniform sample of them. The calls of each
// of its steps in the full run are counted exactly (who acts, and by which tier: one call per
// agent, or one per archetype), and the sample's calls of each kind stand for them; a survey's
// calls stand for `agents / sample` each.
import { dirname } from 'node:path';
import { activationRule } from '../features/population/activation.js';
import { loadPopulation, type Population } from '../features/population/population.js';
import { isPopulationState, populationStateSpec } from '../features/population/state-spec.js';
import { compileTiers, decisionGroups } from '../features/population/tiers.js';
import type { PopulationSpec } from '../features/population/types.js';
import type { Sop } from '../format/sop/types.js';

export interface SampledState {
  state: string;
  /** Agents of the full run. */
  agents: number;
  /** Agents of the dry run. */
  sampled: number;
}

/** LLM calls of a step's decisions: one per per_agent agent, one per archetype acting. */
export interface StepCalls {
  perAgent: number;
  archetypes: number;
}

/** Counts the calls of a population state's steps over all its agents (its population loaded once). */
export async function stepCallCounter(sop: Sop, file: string, state: string, seed: number): Promise<(step: number) => StepCalls> {
  const spec = populationStateSpec(sop.states[state]!);
  const pop: Population = await loadPopulation(spec.population, { baseDir: dirname(file), pointer: `/states/${state}/population` });
  const tiers = compileTiers(spec.cognition);
  const activation = activationRule(spec.activation, seed);
  return (step) => {
    const active = activation.active(pop, step, spec.startMinute + (step - 1) * spec.minutesPerStep);
    const g = decisionGroups(tiers, pop, active);
    return { perAgent: g.perAgent.length, archetypes: g.archetypes.length };
  };
}

/** Agents of a population: its sample's size, else the rows of its source (read once, one kept). */
async function agentsOf(spec: PopulationSpec, baseDir: string, pointer: string): Promise<number> {
  const s = spec.sample;
  if (s) return 'stratify' in s ? s.stratify.n : s.n;
  if ('generate' in spec.source) return spec.source.generate.n;
  const one = await loadPopulation({ ...spec, sample: { n: 1, seed: 1 } }, { baseDir, pointer });
  return one.sourceRows;
}

/**
 * The SOP to dry-run: each population state of more than `limit` agents samples `limit` of them
 * (a stratified sample keeps its shares). Returns the states sampled, with their sizes.
 */
export async function sampleLargePopulations(sop: Sop, file: string, limit: number): Promise<{ sop: Sop; sampled: SampledState[] }> {
  const out = structuredClone(sop);
  const sampled: SampledState[] = [];
  for (const [name, def] of Object.entries(out.states)) {
    if (!isPopulationState(def)) continue;
    const d = def as unknown as { population: PopulationSpec };
    const spec = d.population;
    const agents = await agentsOf(spec, dirname(file), `/states/${name}/population`);
    if (agents <= limit) continue;
    const s = spec.sample;
    d.population = {
      ...spec,
      sample: s && 'stratify' in s ? { stratify: { ...s.stratify, n: limit } } : { n: limit, seed: s?.seed ?? 1 },
    };
    sampled.push({ state: name, agents, sampled: limit });
  }
  return { sop: out, sampled };
}
