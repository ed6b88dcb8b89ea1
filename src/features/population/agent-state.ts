// Agent state of a population state (docs/population.md#rules-as-data): variables declared in
// `agent_state` with their initial values (a constant, or an expression that may draw with
// `random()`), one value per agent, changed by the `set` of the rule cases an agent takes, and
// visible to every expression of the state (rule cases, metrics) by name. Each agent's last
// action is kept too (`last_action`, and `neighbours.share('action', 'adopt')`). Saved in the
// visit's checkpoint.
import { PopulationError } from './types.js';
import { compileExpression, type CompiledExpression } from './worlds/expr.js';
import { seededRng } from './worlds/seed.js';
import type { Json } from './worlds/world.js';
import type { Population } from './population.js';
import type { Rng } from '../../core/runtime/rng.js';

/** One declared variable: `{"value": JSON}` or `{"expr": "..."}` (an expression over the row, `id`, `inputs` and random draws). */
export interface StateVarSpec {
  value?: Json;
  expr?: string;
}

/** The functions a rule expression may call besides the built-ins: seeded draws from the agent's stream. */
export const DRAW_FUNCTIONS = ['random', 'random_int', 'random_normal'] as const;

/** The aggregates over an agent's neighbours (`neighbours.share('adopted')`). */
export const NEIGHBOUR_METHODS = ['count', 'share', 'sum', 'mean', 'min', 'max'] as const;

export const RULE_EXPRESSION_OPTIONS = { functions: DRAW_FUNCTIONS, methods: { neighbours: NEIGHBOUR_METHODS } };

/** Draws from one generator: random() in [0, 1), random_int(n) in 0..n-1, random_normal(mean, sd). */
export function drawFunctions(rng: () => Rng): Record<(typeof DRAW_FUNCTIONS)[number], (...xs: unknown[]) => number> {
  return {
    random: () => rng().next(),
    random_int: (n) => Math.floor(rng().next() * Math.max(0, Math.floor(Number(n)))),
    random_normal: (mean, sd) => {
      const r = rng();
      const u1 = 1 - r.next();
      const u2 = r.next();
      return Number(mean ?? 0) + Number(sd ?? 1) * Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    },
  };
}

/** The generator of an agent's initial state: (seed, "state", agent id). */
export const stateRng = (seed: number, agent: string): Rng => seededRng(seed, 'state', agent);

export interface SavedAgentState {
  values: Record<string, Json[]>;
  last_action: Array<string | null>;
}

export class AgentStates {
  /** Per variable, one value per agent (population order). */
  private readonly values = new Map<string, unknown[]>();
  /** Each agent's last action (its name), null before its first. */
  lastAction: Array<string | null>;
  private readonly inits: Array<{ name: string; value?: Json; expr?: CompiledExpression }>;

  constructor(
    specs: Record<string, StateVarSpec>,
    private readonly pop: Population,
  ) {
    this.inits = Object.entries(specs).map(([name, s]) => ({
      name,
      ...(s.expr !== undefined ? { expr: compileExpression(s.expr, RULE_EXPRESSION_OPTIONS) } : { value: s.value ?? null }),
    }));
    this.lastAction = new Array<string | null>(pop.size).fill(null);
  }

  get names(): string[] {
    return this.inits.map((v) => v.name);
  }

  has(name: string): boolean {
    return this.values.has(name);
  }

  /** Initial values, in declaration order: a later variable's expression reads the earlier ones. */
  init(seed: number, inputs: Readonly<Record<string, unknown>>): void {
    for (const v of this.inits) this.values.set(v.name, new Array<unknown>(this.pop.size).fill(null));
    for (let i = 0; i < this.pop.size; i++) {
      const id = this.pop.ids[i]!;
      let rng: Rng | undefined;
      const draws = drawFunctions(() => (rng ??= stateRng(seed, id)));
      const scope: Record<string, unknown> = { ...this.pop.row(i), id, inputs, ...draws };
      for (const v of this.inits) {
        const value = v.expr ? v.expr.evaluate(scope) : structuredClone(v.value);
        this.values.get(v.name)![i] = value;
        scope[v.name] = value;
      }
    }
  }

  get(i: number, name: string): unknown {
    return this.values.get(name)?.[i];
  }

  set(i: number, name: string, value: unknown): void {
    const column = this.values.get(name);
    if (!column) throw new PopulationError(`agent state has no variable "${name}"`);
    column[i] = value;
  }

  /** The agent's variables by name. */
  of(i: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, column] of this.values) out[name] = column[i];
    return out;
  }

  save(): SavedAgentState {
    return { values: Object.fromEntries([...this.values].map(([k, v]) => [k, v as Json[]])), last_action: [...this.lastAction] };
  }

  restore(saved: SavedAgentState): void {
    this.values.clear();
    for (const v of this.inits) this.values.set(v.name, [...(saved.values[v.name] ?? new Array<Json>(this.pop.size).fill(null))]);
    this.lastAction = [...saved.last_action];
  }
}

/** What a neighbour aggregate reads of agent j: a state variable, its last action (`action`), its id, or a column. */
function readOf(states: AgentStates, pop: Population, j: number, name: string): unknown {
  if (states.has(name)) return states.get(j, name);
  if (name === 'action') return states.lastAction[j];
  if (name === 'id') return pop.ids[j];
  return pop.value(j, name);
}

const matches = (v: unknown, value: unknown, withValue: boolean): boolean =>
  withValue ? v === value || (v !== null && v !== undefined && String(v) === String(value)) : Boolean(v);

/**
 * The `neighbours` object of an expression: count(name?, value?) (all neighbours, or those whose
 * `name` is truthy, or equals `value`), share(name, value?) (of all neighbours; null with none),
 * sum, mean, min and max of a number (null with none).
 */
export function neighbourAggregates(states: AgentStates, pop: Population, neighbours: readonly number[]) {
  const numbers = (name: unknown): number[] => {
    const out: number[] = [];
    for (const j of neighbours) {
      const v = Number(readOf(states, pop, j, String(name)));
      if (Number.isFinite(v)) out.push(v);
    }
    return out;
  };
  const counted = (args: unknown[]): number => {
    if (args.length === 0) return neighbours.length;
    let n = 0;
    for (const j of neighbours) if (matches(readOf(states, pop, j, String(args[0])), args[1], args.length > 1)) n++;
    return n;
  };
  return {
    count: (...args: unknown[]) => counted(args),
    share: (...args: unknown[]) => (neighbours.length === 0 ? null : counted(args) / neighbours.length),
    sum: (name: unknown) => numbers(name).reduce((a, b) => a + b, 0),
    mean: (name: unknown) => {
      const xs = numbers(name);
      return xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length;
    },
    min: (name: unknown) => {
      const xs = numbers(name);
      return xs.length === 0 ? null : Math.min(...xs);
    },
    max: (name: unknown) => {
      const xs = numbers(name);
      return xs.length === 0 ? null : Math.max(...xs);
    },
  };
}
