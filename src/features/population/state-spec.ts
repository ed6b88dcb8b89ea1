// A population state's settings, read from its SOP state (schemas/sop.schema.json: population,
// world, actions, resolution, activation, observe, cognition, max_steps, minutes_per_step,
// start_time, agent_memory, metrics, interventions, transitions) with their defaults filled in.
import type { OrderPolicy } from './worlds/order.js';
import type { LlmSettings, Sop, SopState } from '../../format/sop/types.js';
import type { PopulationSpec } from './types.js';
import type { StateVarSpec } from './agent-state.js';
import type { RuleCase } from './rule-program.js';

export type Activation = { probability: number; seed?: number } | { schedule: number[]; seed?: number } | { expr: string; seed?: number };

export type Tier = 'per_agent' | 'archetype' | 'rule';

export interface CognitionEntry {
  tier: Tier;
  where?: string;
  policy?: string;
  params?: Record<string, unknown>;
  /** A declared policy (rules as data): ordered cases, the first that holds is taken. */
  cases?: RuleCase[];
  llm?: LlmSettings;
}

export interface MetricSpec {
  reducer: 'count' | 'sum' | 'mean' | 'share' | 'histogram' | 'custom';
  /** custom: the registered metric's name. */
  fn?: string;
  over?: 'actions' | 'agents';
  of?: string;
  where?: string;
  every?: number;
}

export interface Intervention {
  at: number;
  act?: { agent: string; name: string; args?: Record<string, unknown> };
  set?: Record<string, unknown>;
  survey?: { name: string; question: string; where?: string; n?: number };
}

export interface WorldSpec {
  type: string;
  params?: Record<string, unknown>;
  graph?: unknown;
}

/** A population state with every default filled in. */
export interface PopulationStateSpec {
  population: PopulationSpec;
  world: WorldSpec;
  /** The action menu (default: every action of the world). */
  actions?: string[];
  resolution: { type: 'shuffle' | 'priority' | 'judge'; expr?: string; seed?: number };
  activation: Activation;
  observe?: string;
  cognition: CognitionEntry[];
  maxSteps: number;
  minutesPerStep: number;
  /** Minutes after midnight of the first step. */
  startMinute: number;
  memory: { actions: number; observations: number };
  metrics: Record<string, MetricSpec>;
  /** Agent state variables (rules as data) with their initial values. */
  agentState: Record<string, StateVarSpec>;
  interventions: Intervention[];
  transitions: Array<{ when: string; to: string }>;
  /** How often a visit is saved whole (the SOP's `snapshots`; absent: the run's options, else ./snapshots.ts's defaults). */
  snapshots: { steps?: number; actions?: number };
  /** Calls unanswered at the step's deadline: waited for, given up for the default action, or asked again. */
  straggler?: { deadlineMs: number; then: 'wait' | 'default' | 'redraw'; default?: { name: string; args: Record<string, unknown> } };
}

export const POPULATION_DEFAULTS = {
  maxSteps: 10,
  minutesPerStep: 60,
  startTime: '08:00',
  memoryActions: 5,
  memoryObservations: 0,
  /** An action reply is short: the LLM's max_tokens unless the state's llm says otherwise. */
  maxTokens: 120,
  /** Items an agent observes (feed posts, book levels) unless the world's params say otherwise. */
  observeK: 10,
} as const;

/** Whether a SOP state is a population state. */
export const isPopulationState = (def: SopState | undefined): boolean => def?.population !== undefined;

/** LLM calls a population step makes at once unless --concurrency says otherwise. */
export const DEFAULT_CONCURRENCY = 64;

/** Whether a SOP has a population state (light: `import 'sop'` checks it without loading the feature). */
export const usesPopulation = (sop: Pick<Sop, 'states'>): boolean => Object.values(sop.states).some((s) => isPopulationState(s));

const minutesOf = (hhmm: string): number => {
  const [h, m] = hhmm.split(':').map(Number);
  return h! * 60 + m!;
};

/** The state's population settings with defaults (the SOP was validated: the shapes hold). */
export function populationStateSpec(def: SopState): PopulationStateSpec {
  const d = def as SopState & Record<string, unknown>;
  const cognition = d.cognition;
  const memory = d.agent_memory ?? {};
  return {
    population: d.population as unknown as PopulationSpec,
    world: d.world as unknown as WorldSpec,
    ...(d.actions ? { actions: d.actions } : {}),
    resolution: (d.resolution as PopulationStateSpec['resolution'] | undefined) ?? { type: 'shuffle' },
    activation: d.activation ?? { probability: 1 },
    ...(typeof d.observe === 'string' ? { observe: d.observe } : {}),
    cognition: cognition === undefined ? [{ tier: 'per_agent' }] : Array.isArray(cognition) ? cognition : [cognition],
    maxSteps: d.max_steps ?? POPULATION_DEFAULTS.maxSteps,
    minutesPerStep: d.minutes_per_step ?? POPULATION_DEFAULTS.minutesPerStep,
    startMinute: minutesOf(d.start_time ?? POPULATION_DEFAULTS.startTime),
    memory: {
      actions: memory.actions ?? POPULATION_DEFAULTS.memoryActions,
      observations: memory.observations ?? POPULATION_DEFAULTS.memoryObservations,
    },
    metrics: d.metrics ?? {},
    agentState: (d.agent_state as Record<string, StateVarSpec> | undefined) ?? {},
    interventions: d.interventions ?? [],
    transitions: d.transitions ?? [],
    snapshots: d.snapshots ?? {},
    ...(d.straggler ? { straggler: stragglerOf(d.straggler) } : {}),
  };
}

interface StragglerDef {
  deadline_s: number;
  then: 'wait' | 'default' | 'redraw';
  default?: { name: string; args?: Record<string, unknown> };
}

const stragglerOf = (d: StragglerDef): NonNullable<PopulationStateSpec['straggler']> => ({
  deadlineMs: d.deadline_s * 1000,
  then: d.then,
  ...(d.default ? { default: { name: d.default.name, args: d.default.args ?? {} } } : {}),
});

/** The ordering policy of the step's actions, its seed defaulting to the run's. */
export function orderPolicy(spec: PopulationStateSpec, runSeed: number): OrderPolicy {
  const seed = spec.resolution.seed ?? runSeed;
  if (spec.resolution.type === 'priority') return { type: 'priority', expr: spec.resolution.expr ?? '0', seed };
  return { type: spec.resolution.type, seed };
}

/** "HH:MM" of a minute of the simulated clock (wrapping at midnight). */
export function clockText(minute: number): string {
  const m = ((minute % 1440) + 1440) % 1440;
  return `${String(Math.floor(m / 60)).padStart(2, '0')}:${String(m % 60).padStart(2, '0')}`;
}

/** Whether a population state's steps call an LLM: a tier that is not `rule`, a survey, or a judge. */
export function populationCallsLlm(def: SopState): boolean {
  const spec = populationStateSpec(def);
  return spec.cognition.some((c) => c.tier !== 'rule') || spec.interventions.some((i) => i.survey) || spec.resolution.type === 'judge';
}
