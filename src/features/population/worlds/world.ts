// A world: the shared thing a population's actions change (a social network, a market, a board).
// A world is data plus pure functions: its parameters' JSON Schema, the actions it accepts (each
// a JSON-Schema tool for function calling), and init / snapshot / observe / apply / metrics.
// `apply` takes a step's actions in the order given: the caller orders them (./order.ts), so a
// world never sees completion order. Users add worlds with `defineWorld`, checked like the built-ins.
import { EngineError } from '../../../shared/errors.js';
import type { ToolSpec } from '../../../core/llm/types.js';
import type { Rng } from '../../../core/runtime/rng.js';
import { compileSchema, schemaErrors } from './schema-check.js';

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** One agent as a world sees it: its id and its row of attributes (from the population). */
export interface WorldAgent {
  id: string;
  attrs: Readonly<Record<string, unknown>>;
}

/** One action of a step: the agent, the tool it called and the tool's arguments. */
export interface StepAction {
  agent: string;
  name: string;
  args: Record<string, unknown>;
  /** Index among this agent's actions of the step (0 for its first); keeps an agent's own order. */
  seq?: number;
  /**
   * The agent's place among the agents the world was made with (init's `agents`), when the caller
   * knows it: a world may find the agent by it without a look-up by id (checking that the id is
   * the one at that place). A hint only: the id is who acts.
   */
  index?: number;
}

/** What applying one action did, as a short line for the agent's memory and the journal. */
export interface ActionOutcome {
  agent: string;
  name: string;
  ok: boolean;
  /** Short by default: one line, e.g. "posted p17", "bid 120 rests", "traded 1 at 104". */
  output: string;
}

/** A tool of the action menu (the same shape as the LLM layer's function tools). */
export type ActionSpec = ToolSpec;

/** Metrics of a step: named numbers; null where a figure is undefined (the spread of an empty book). */
export type Metrics = Record<string, number | null>;

/** Things a world's `init` may need beyond its parameters (already read from files by the caller). */
export interface WorldInitContext {
  /** The world spec's `graph` (social): a generator, or edges read from the edge-list file. */
  graph?: unknown;
  /** Text embedder for interest ranking (social): one unit vector per text. */
  embed?: (text: string) => Float32Array;
}

export interface World<S = unknown, P = Record<string, unknown>> {
  /** Lower-case name used as `world.type` in a SOP, e.g. "social". */
  readonly name: string;
  readonly description: string;
  /** JSON Schema (draft-07) of the parameters; `init` gets them with defaults applied. */
  readonly params: Record<string, unknown>;
  /** Every action the world accepts; a population state offers a subset of them. */
  readonly actions: readonly ActionSpec[];
  /** The tools with parameter schemas narrowed by the world's parameters (e.g. a board's keys). */
  actionsFor?(params: P): ActionSpec[];
  init(params: P, agents: readonly WorldAgent[], rng: Rng, ctx?: WorldInitContext): S;
  /** The step's public snapshot, seen by every agent of the step (JSON). */
  snapshot(state: S, step: number): Json;
  /**
   * What one agent sees at the start of a step: its feed, inbox or book; `k` items at most.
   * `index`: the agent's place among init's agents, when the caller knows it (a hint, as
   * StepAction's `index`).
   */
  observe(state: S, agentId: string, k: number, index?: number): Json;
  /** Applies the step's actions in the order given and says what each did. Mutates `state`. */
  apply(state: S, actions: readonly StepAction[], step: number): ActionOutcome[];
  metrics(state: S, step: number): Metrics;
  /**
   * The agents next to one at a step (its graph neighbours, the occupants of the cells around it,
   * its partner of the step): what `neighbours.share('adopted')` and the other aggregates of a
   * rule expression read. A world without it gives every agent no neighbours.
   */
  neighbours?(state: S, agentId: string, step: number): readonly string[];
  /** Whether the world takes a `graph` (world.graph: an edge list or a generator), given to `init` as `ctx.graph`. */
  readonly graph?: boolean;
  /** The object an action touches (for a judge: actions on the same object are contested). */
  objectOf?(action: StepAction): string | undefined;
  /** State to JSON for a checkpoint; absent: the state is JSON already. */
  save?(state: S): Json;
  /** Inverse of `save`. */
  restore?(saved: Json, ctx?: WorldInitContext): S;
}

/** A world's definition is wrong (bad name, duplicate action, schema that does not compile). */
export class WorldDefinitionError extends EngineError {
  constructor(message: string) {
    super(message, 'WORLD_DEFINITION');
    this.name = 'WorldDefinitionError';
  }
}

const NAME = /^[a-z][a-z0-9_-]{0,63}$/;
const ACTION_NAME = /^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$/;

/** Checks a world's definition and returns it frozen; throws WorldDefinitionError with one line. */
export function defineWorld<S, P = Record<string, unknown>>(world: World<S, P>): World<S, P> {
  return checkedWorld(world, true);
}

/**
 * A built-in world: checked as defineWorld checks, but its schemas are compiled at their first use,
 * not when `import 'sop'` loads it (ajv stays unloaded until then); test/worlds-define.test.ts
 * passes each built-in world through defineWorld.
 */
export function builtinWorld<S, P = Record<string, unknown>>(world: World<S, P>): World<S, P> {
  return checkedWorld(world, false);
}

function checkedWorld<S, P>(world: World<S, P>, compile: boolean): World<S, P> {
  const where = `world "${String(world.name)}"`;
  if (typeof world.name !== 'string' || !NAME.test(world.name))
    throw new WorldDefinitionError(`${where}: the name must be lower-case letters, digits, _ or - (at most 64), starting with a letter`);
  if (typeof world.description !== 'string' || world.description.trim() === '')
    throw new WorldDefinitionError(`${where}: needs a description`);
  if (world.params?.type !== 'object') throw new WorldDefinitionError(`${where}: params must be a JSON Schema of type "object"`);
  try {
    if (compile) compileSchema(world.params);
  } catch (e) {
    throw new WorldDefinitionError(`${where}: its params schema does not compile: ${(e as Error).message}`);
  }
  const actions: readonly unknown[] | undefined = world.actions; // Array.isArray would narrow a readonly array to any[]
  if (!Array.isArray(actions) || actions.length === 0) throw new WorldDefinitionError(`${where}: declares no action`);
  const seen = new Set<string>();
  for (const [i, action] of world.actions.entries()) {
    const at = `${where}: action ${i}`;
    if (typeof action.name !== 'string' || !ACTION_NAME.test(action.name))
      throw new WorldDefinitionError(`${at}: the name must be letters, digits, _ or - (a function-calling tool name)`);
    if (seen.has(action.name)) throw new WorldDefinitionError(`${where}: action "${action.name}" is declared twice`);
    seen.add(action.name);
    if (typeof action.description !== 'string' || action.description.trim() === '')
      throw new WorldDefinitionError(`${where}: action "${action.name}" needs a description`);
    if (action.parameters?.type !== 'object')
      throw new WorldDefinitionError(`${where}: action "${action.name}": parameters must be a JSON Schema of type "object"`);
    try {
      if (compile) compileSchema(action.parameters);
    } catch (e) {
      throw new WorldDefinitionError(`${where}: action "${action.name}": its parameters do not compile: ${(e as Error).message}`);
    }
  }
  for (const fn of ['init', 'snapshot', 'observe', 'apply', 'metrics'] as const)
    if (typeof world[fn] !== 'function') throw new WorldDefinitionError(`${where}: ${fn} must be a function`);
  if ((world.save === undefined) !== (world.restore === undefined))
    throw new WorldDefinitionError(`${where}: save and restore go together`);
  return Object.freeze({ ...world });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a registry holds worlds of any state and params
export type AnyWorld = World<any, any>;

const agentIndexes = new WeakMap<object, Map<string, number>>();

/** The index of an agent in a world state's `ids`, or -1 (the map is made once per state object, so again after a restore). */
export function agentIndex(state: { readonly ids: readonly string[] }, id: string): number {
  let index = agentIndexes.get(state);
  if (!index) {
    index = new Map(state.ids.map((x, i) => [x, i]));
    agentIndexes.set(state, index);
  }
  return index.get(id) ?? -1;
}

export const actionNames = (world: AnyWorld): string[] => world.actions.map((a) => a.name);

/** The function-calling tools of an action menu: the named actions, narrowed by the params. */
export function worldTools<S, P>(world: World<S, P>, params: P, names?: readonly string[]): ActionSpec[] {
  const all = world.actionsFor ? world.actionsFor(params) : [...world.actions];
  if (!names) return all;
  const byName = new Map(all.map((a) => [a.name, a]));
  return names.map((n) => {
    const spec = byName.get(n);
    if (!spec) throw new WorldDefinitionError(`"${n}" is not an action of world "${world.name}"`);
    return spec;
  });
}

/** The params with the schema's defaults filled in, or the problems (JSON pointers relative to the params). */
export function resolveParams<S, P>(
  world: World<S, P>,
  params: unknown,
): { ok: true; params: P } | { ok: false; problems: Array<{ pointer: string; message: string }> } {
  const copy = structuredClone(params ?? {});
  const problems = schemaErrors(world.params, copy, { defaults: true });
  return problems.length === 0 ? { ok: true, params: copy as P } : { ok: false, problems };
}

/** Problems with one action's arguments against its tool schema ("" when fine), as a short line. */
export function checkActionArgs(world: AnyWorld, action: StepAction, tools?: readonly ActionSpec[]): string {
  const spec = (tools ?? world.actions).find((a) => a.name === action.name);
  if (!spec) return `"${action.name}" is not an action of world "${world.name}"`;
  const problems = schemaErrors(spec.parameters, action.args);
  return problems.map((p) => `${action.name}${p.pointer === '' ? '' : ` ${p.pointer}`}: ${p.message}`).join('; ');
}

/** A world's state as JSON, for a checkpoint. */
export function saveState<S, P>(world: World<S, P>, state: S): Json {
  return world.save ? world.save(state) : (structuredClone(state) as Json);
}

/** Inverse of saveState. */
export function restoreState<S, P>(world: World<S, P>, saved: Json, ctx?: WorldInitContext): S {
  return world.restore ? world.restore(saved, ctx) : (structuredClone(saved) as S);
}
