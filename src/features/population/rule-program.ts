// Rules as data (docs/population.md#rules-as-data): a `rule` tier whose policy is declared in the
// SOP as ordered cases. The first case whose `when` holds gives the agent's action (`do`, with
// `args` computed by expressions) and the changes to its state (`set`). Every expression sees the
// agent's row and state, `id`, `step`, `hour`, `inputs`, the step's public `snapshot`, its own
// `observation`, `memory` and `last_action`, aggregates over its neighbours in the world
// (`neighbours.share('adopted')`), and seeded draws (`random()`) from the stream the built-in
// rule policies use, (seed, step, agent). Moves are simultaneous: every agent decides on the
// step-start state, and the `set`s apply after the world has applied the step's actions, each
// only when its agent's action went through.
import type { PopulationAction } from '../../core/runtime/events.js';
import { compileExpression, type CompiledExpression } from './worlds/expr.js';
import type { RuleContext, RulePolicy } from './worlds/rule.js';
import type { AnyWorld, Json } from './worlds/world.js';
import {
  AgentStates,
  drawFunctions,
  neighbourAggregates,
  RULE_EXPRESSION_OPTIONS,
  type SavedAgentState,
  type StateVarSpec,
} from './agent-state.js';
import type { Population } from './population.js';

/** One case of a declared policy. */
export interface RuleCase {
  /** An expression; absent: always. */
  when?: string;
  /** The world action taken; absent: none (the agent is idle, its `set` still applies). */
  do?: string;
  /** The action's arguments: a text is an expression, anything else a constant. */
  args?: Record<string, unknown>;
  /** State variables changed: a text is an expression (read on the step-start state), anything else a constant. */
  set?: Record<string, unknown>;
}

/** Names every rule expression may read besides the agent's columns and state variables. */
export const RULE_SCOPE_NAMES = ['id', 'step', 'hour', 'inputs', 'snapshot', 'observation', 'memory', 'last_action', 'neighbours'] as const;

type Value = { expr: CompiledExpression } | { value: unknown };

const valueOf = (v: unknown): Value => (typeof v === 'string' ? { expr: compileExpression(v, RULE_EXPRESSION_OPTIONS) } : { value: v });

interface CompiledCase {
  when?: CompiledExpression;
  do?: string;
  args: Array<[string, Value]>;
  set: Array<[string, Value]>;
}

export function compileCases(cases: readonly RuleCase[]): CompiledCase[] {
  return cases.map((c) => ({
    ...(c.when !== undefined ? { when: compileExpression(c.when, RULE_EXPRESSION_OPTIONS) } : {}),
    ...(c.do !== undefined ? { do: c.do } : {}),
    args: Object.entries(c.args ?? {}).map(([k, v]) => [k, valueOf(v)]),
    set: Object.entries(c.set ?? {}).map(([k, v]) => [k, valueOf(v)]),
  }));
}

/** What the program reads of the visit. */
export interface RuleHost {
  pop: Population;
  world: AnyWorld;
  worldState(): unknown;
  inputs: Readonly<Record<string, unknown>>;
  memoryOf(agent: string): string;
  /** The hour of the simulated clock at a step. */
  hourOf(step: number): number;
}

/** The agent state of a visit and the declared policies of its rule tiers. */
export class RuleProgram {
  readonly states: AgentStates;
  /** Each deciding agent's state changes, applied after the step's actions (by agent index). */
  private readonly pending = new Map<number, { did: boolean; sets: Array<[string, unknown]> }>();
  private snapshot: { step: number; value: Json } | undefined;
  private neighbourIndex: { step: number; of: Map<number, number[]> } | undefined;

  constructor(
    private readonly host: RuleHost,
    agentState: Record<string, StateVarSpec>,
  ) {
    this.states = new AgentStates(agentState, host.pop);
  }

  init(seed: number): void {
    this.states.init(seed, this.host.inputs);
  }

  save(): SavedAgentState {
    return this.states.save();
  }

  restore(saved: SavedAgentState): void {
    this.states.restore(saved);
  }

  /** The indices of agent i's neighbours at a step (the world's `neighbours`; none for a world without). */
  neighboursOf(i: number, step: number): number[] {
    if (!this.neighbourIndex || this.neighbourIndex.step !== step) this.neighbourIndex = { step, of: new Map() };
    let out = this.neighbourIndex.of.get(i);
    if (!out) {
      const { world, pop } = this.host;
      const ids = world.neighbours ? world.neighbours(this.host.worldState(), pop.ids[i]!, step) : [];
      out = [];
      for (const id of ids) {
        const j = pop.indexOf(id);
        if (j >= 0) out.push(j);
      }
      this.neighbourIndex.of.set(i, out);
    }
    return out;
  }

  /** What an expression about agent i sees (without draws and the step's parts when `ctx` is absent: metrics). */
  scope(i: number, step: number, ctx?: RuleContext): Record<string, unknown> {
    const { pop } = this.host;
    const id = pop.ids[i]!;
    if (!this.snapshot || this.snapshot.step !== step)
      this.snapshot = { step, value: this.host.world.snapshot(this.host.worldState(), step) };
    return {
      ...pop.row(i),
      ...this.states.of(i),
      id,
      step,
      hour: this.host.hourOf(step),
      inputs: this.host.inputs,
      snapshot: this.snapshot.value,
      observation: ctx?.observation ?? null,
      memory: this.host.memoryOf(id),
      last_action: this.states.lastAction[i] ?? null,
      neighbours: neighbourAggregates(this.states, pop, this.neighboursOf(i, step)),
      ...(ctx ? drawFunctions(() => ctx.rng) : {}),
    };
  }

  /** A declared policy: the first case that holds. */
  policy(cases: readonly RuleCase[]): RulePolicy {
    const compiled = compileCases(cases);
    return (ctx) => {
      const i = this.host.pop.indexOf(ctx.agent);
      const scope = this.scope(i, ctx.step, ctx);
      for (const c of compiled) {
        if (c.when && c.when.evaluate(scope) !== true) continue;
        const sets = c.set.map(([k, v]): [string, unknown] => [k, 'expr' in v ? v.expr.evaluate(scope) : structuredClone(v.value)]);
        if (sets.length > 0) this.pending.set(i, { did: c.do !== undefined, sets });
        if (c.do === undefined) return [];
        const args = Object.fromEntries(c.args.map(([k, v]) => [k, 'expr' in v ? v.expr.evaluate(scope) : structuredClone(v.value)]));
        return [{ name: c.do, args }];
      }
      return [];
    };
  }

  /** After the world applied the step: the pending changes of agents whose action went through, and each agent's last action. */
  commit(applied: readonly PopulationAction[]): void {
    const { pop } = this.host;
    const okBy = new Map<number, boolean>();
    for (const a of applied) {
      const i = pop.indexOf(a.agent);
      if (i < 0 || a.tier === 'injected') continue;
      okBy.set(i, a.ok);
      if (a.ok && a.name !== 'idle') this.states.lastAction[i] = a.name;
    }
    for (const [i, p] of this.pending) if (!p.did || okBy.get(i) === true) for (const [k, v] of p.sets) this.states.set(i, k, v);
    this.pending.clear();
    // what follows (the step's metrics) sees the world after the step: neighbours and snapshot anew
    this.neighbourIndex = undefined;
    this.snapshot = undefined;
  }
}
