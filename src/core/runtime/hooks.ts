// The hooks of a run: the one declared way features (actions and executors, budgets, MCP, the
// scientist's views, the Agents 1.0 turn, durability) plug into the step loop of
// src/core/runtime/run-loop.ts, which imports none of them. Each hook belongs to one of four rules, and
// each rule has one composer in ./compose.ts:
//
//   decide     the first plugin that answers wins (undefined: ask the next one)
//   transform  a pipeline: each plugin gets what the previous one returned
//   observe    every plugin is told, in order
//   state      a keyed checkpoint: each plugin's state is journaled under its name
//
// A seat's turn (src/core/runtime/seat.ts) asks decide.seat (a person at a web page).
// A plugin is made by a factory from the run's context (./context.ts) and is active only in a SOP
// that uses it (`definePlugin`'s `uses`). Per step: plan (decide.transit, then the state's
// controller) -> observe.beforeTurn -> act (decide.speak, else the agent prompt: transform.view,
// transform.agentPrompt, transform.agentCall) -> observe.beforeCall / afterCall around each LLM
// call -> apply: the message is recorded -> observe.afterMessage -> its effect runs -> summary ->
// checkpoint (state.checkpoint).
import type { ComponentPart } from '../agent/components.js';
import type { NameStripping } from '../agent/output.js';
import type { PipelineHost, PrivateMemoryOption } from '../agent/pipeline.js';
import type { EnvironmentMemory } from '../environment/environment.js';
import type { HumanInput } from '../io/human.js';
import type { SeatQuestion, SeatReply } from '../io/seats.js';
import type { Embedder } from '../memory/embedder.js';
import type { TemplateSet } from '../prompt/templates.js';
import type { ResolvedSop } from '../../format/sop/resolved.js';
import type { ContextVars } from '../../shared/util/context-vars.js';
import type { Redactor } from '../../shared/util/redact.js';
import type { CallDispatch, ManyCall, ManyOutcome, StepRef, Straggler } from './call-many.js';
import type { EffectSpec, Performed } from './effects.js';
import type { RunEvent, UsageTotals } from './events.js';
import type { RunPosition } from './position.js';
import type { RestoreContext } from './checkpoint.js';
import type { Rng } from './rng.js';
import type { ToolSlotExecutor } from '../components/registry.js';
import type { CommandSpec, ExecutorTable } from '../commands/commands.js';
import type { EnvironmentView } from '../environment/environment.js';
import type { Message } from '../environment/message.js';
import type { ModelPrice } from '../llm/pricing.js';
import type { CallMeta, ChatMessage, LlmProvider, Usage } from '../llm/types.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import type { LlmSettings, Sop } from '../../format/sop/types.js';
import type { StateRuntime } from './controller.js';
import type { Effects } from './effects.js';
import type { Semantics } from './semantics.js';
import { pluginOptionsFor, type PluginOptionSpecs, type PluginOptionValues } from './plugin-options.js';

/** What every part of a run may read and call. */
export interface RunContext extends PipelineHost {
  readonly sop: Sop;
  readonly resolved: ResolvedSop;
  /** The SOP file (relative paths in the SOP are resolved from its folder). */
  readonly file: string;
  readonly runId: string;
  readonly inputs: Record<string, string>;
  readonly seed: number;
  readonly rng: Rng;
  readonly signal?: AbortSignal;
  readonly semantics: Semantics;
  /** Secrets out of every prompt and executor result (src/shared/util/redact.ts). */
  readonly redact: Redactor;
  /** Agent replies are streamed (delta events). */
  readonly stream: boolean;
  readonly nameStripping: NameStripping;
  readonly env: EnvironmentMemory;
  readonly templates: TemplateSet;
  readonly usage: UsageTotals;
  readonly human: HumanInput;
  /** Where the run stands (read it; the loop moves it). */
  readonly position: Readonly<RunPosition>;
  /** The run's plugins, in the order they are consulted. */
  readonly plugins: readonly RunPlugin[];
  /** Every outside effect goes through these (durable with the journal's ledger). */
  readonly effects: Effects;
  /** Typed values plugins share with each other (./context-vars.ts). */
  readonly vars: ContextVars;
  /** The run's LLM provider (after every plugin's llm transform). */
  llm(): LlmProvider;
  emit(event: RunEvent): void;
  /** Someone listens to the run's events (a run folder, a display): without, events that cost work to build (checkpoints) are not built. */
  listened?(): boolean;
  /**
   * The LLM calls of a step made at once (./call-many.ts): each through the run's effects under its
   * key, sent by the state's dispatch (a plugin's) or directly under `concurrency`; outcomes in call order.
   */
  callMany(calls: readonly ManyCall[], options: ManyCallsOptions): Promise<ManyOutcome[]>;
  /** Perform an outside effect through the run's effects (journaled and reused when durable). */
  perform<T>(spec: EffectSpec, fn: () => Promise<T>): Promise<Performed<T>>;
  /** The run's embedder (given, else made from environment.embedder on first use). */
  embedder(): Promise<Embedder>;
}

/** How a step's calls are made (`RunContext.callMany`). */
export interface ManyCallsOptions {
  state: ResolvedState;
  step: StepRef;
  /** Calls sent directly at once at most. */
  concurrency: number;
  straggler?: Straggler;
}

/** One agent's part in a step: who acts, where. */
export interface TurnStep {
  state: ResolvedState;
  role: string;
  agent: string;
  /** The first turn of a state's visit (its begin role). */
  begin: boolean;
}

/** A turn's reply, as recorded; `execute` runs once the message is in the environment. */
export interface TurnOutput {
  content: string;
  execute?: () => Promise<void>;
}

export interface Transition {
  target: string;
  reason: 'finish' | 'max_turns' | 'direct';
}

/** What plugins add to an agent's system prompt and template context. */
export interface PromptAdditions {
  parts: ComponentPart[];
  context: Record<string, unknown>;
}

/** The settings and call facts of an agent's LLM call. */
export interface AgentCallSpec {
  settings: LlmSettings;
  meta: Partial<CallMeta>;
}

/** Runs the agent prompt pipeline: `extra` messages go after the last prompt; `privateMemory` gives it Agents 1.0 semantics. */
export type ActFn = (extra?: ChatMessage[], privateMemory?: PrivateMemoryOption) => Promise<string>;

/** Decide: the first plugin whose hook answers (not undefined) wins. */
export interface DecideHooks {
  /** The effects every outside effect goes through (durability: the journal's effect ledger). */
  effects?(): Effects | undefined;
  /** Where a state goes next, when this plugin decides it (command states); undefined: the judge decides. */
  transit?(state: ResolvedState, rt: StateRuntime): Transition | undefined;
  /** The agent's reply, when this plugin produces it (commands, the Agents 1.0 turn). */
  speak?(step: TurnStep, act: ActFn): Promise<TurnOutput | undefined>;
  /** The SOP's result (its last finish command) and summary, when it has one. */
  result?(): { result?: string; summary?: string } | undefined;
  /**
   * A step of this state that the plugin acts out whole (a population state: many agents act at
   * once, then their world applies what they did); undefined: the state's roles take turns.
   */
  ownStep?(state: ResolvedState): OwnStep | undefined;
  /**
   * How the calls of a step made at once (`ctx.callMany`, a population step) are sent, when this
   * plugin sends them (a batch file, shards over workers); undefined: one request each, directly.
   */
  dispatch?(state: ResolvedState): CallDispatch | undefined;
  /**
   * A seat's answer (an agent or population member a person plays from a web page), when this
   * plugin serves that seat (src/core/io/seats.ts); undefined: the run's human input is asked.
   */
  seat?(question: SeatQuestion): Promise<SeatReply | undefined>;
}

/** A step a plugin acts out whole: it makes its calls, applies their effects and emits its events. */
export type OwnStep = () => Promise<void>;

/** Transform: a pipeline, each plugin given what the one before returned. */
export interface TransformHooks {
  /** The run's LLM provider (e.g. Agents 1.0 concise mode). */
  llm?(llm: LlmProvider): LlmProvider;
  /** The run's semantics flags (Agents 1.0 keeps one summary for the whole run). */
  semantics?(semantics: Semantics): Semantics;
  /** Executors bound to tool slots, by name (MCP tools bound with --bind). */
  toolSlots?(slots: Record<string, ToolSlotExecutor>): Record<string, ToolSlotExecutor>;
  /** The template context shared by every prompt (built once per step). */
  context?(context: Record<string, unknown>): Record<string, unknown>;
  /** What the agent sees of the shared memory. */
  view?(view: EnvironmentView, state: ResolvedState, stateStart: number): EnvironmentView;
  /** Parts added to the agent's system prompt, and values added to its template context. */
  agentPrompt?(additions: PromptAdditions, state: ResolvedState, context: Record<string, unknown>): PromptAdditions;
  /** LLM settings and call facts of an agent's call. */
  agentCall?(spec: AgentCallSpec, state: ResolvedState, agent: string, role: string): AgentCallSpec;
  /** The executors a SOP's commands may name, by name: each feature adds its own (src/core/commands/). */
  commandExecutors?(table: ExecutorTable): ExecutorTable;
  /**
   * A state's commands, compiled, at its first turn: a feature adds commands of its own (the tools a
   * state grants). Async: what it adds may have to be asked for (a server's list of tools).
   */
  stateCommands?(
    commands: Record<string, CommandSpec>,
    state: ResolvedState,
  ): Record<string, CommandSpec> | Promise<Record<string, CommandSpec>>;
}

/** Observe: every plugin is told, in order. A hook may refuse what is about to happen by throwing a RunSignal (src/shared/errors.ts). */
export interface ObserveHooks {
  /** Every plugin of the run is made, before its first step: a plugin may check what the others contribute (commands). */
  ready?(): void;
  /** Before an AI agent's turn (begin turns included). */
  beforeTurn?(step: TurnStep): void | Promise<void>;
  /** Before each LLM call, with its model and price (undefined: not priced); budgets refuse a call here. */
  beforeCall?(messages: ChatMessage[], model: string, meta: CallMeta, price: ModelPrice | undefined): void;
  /** After each LLM call, with its usage and USD cost (undefined: not priced), a reply reused from the journal included. */
  afterCall?(meta: CallMeta, usage: Usage, cost: number | undefined): void;
  /** A turn's message was recorded. */
  afterMessage?(message: Message): void;
  /** The run is over (finished, failed or interrupted): release what the plugin holds. */
  close?(): void | Promise<void>;
}

/** State: journaled in each checkpoint under the plugin's name, and handed back on resume. */
export interface StateHooks {
  checkpoint?(): unknown;
  restoreCheckpoint?(state: unknown, context: RestoreContext): void | Promise<void>;
}

export interface RunPlugin extends DecideHooks, TransformHooks, ObserveHooks, StateHooks {
  /** Names the plugin in errors; its checkpoint is journaled under this name. */
  readonly name: string;
}

/** The rule of every hook (./compose.ts composes each hook by its rule). */
export const HOOK_RULES = {
  effects: 'decide',
  transit: 'decide',
  speak: 'decide',
  result: 'decide',
  ownStep: 'decide',
  dispatch: 'decide',
  seat: 'decide',
  llm: 'transform',
  semantics: 'transform',
  toolSlots: 'transform',
  context: 'transform',
  view: 'transform',
  agentPrompt: 'transform',
  agentCall: 'transform',
  commandExecutors: 'transform',
  stateCommands: 'transform',
  ready: 'observe',
  beforeTurn: 'observe',
  beforeCall: 'observe',
  afterCall: 'observe',
  afterMessage: 'observe',
  close: 'observe',
  checkpoint: 'state',
  restoreCheckpoint: 'state',
} as const satisfies Record<keyof Omit<RunPlugin, 'name'>, 'decide' | 'transform' | 'observe' | 'state'>;

export type HookName = keyof typeof HOOK_RULES;

/** Makes a run's plugin from the run's context; undefined when the SOP does not use the feature. */
export type PluginMaker = (ctx: RunContext) => RunPlugin | undefined;

/** Makes a run's plugins, in the order they are consulted. */
export type PluginFactory = (ctx: RunContext) => RunPlugin[];

export interface PluginDefinition<P extends RunPlugin> {
  readonly name: string;
  /** Whether a SOP uses the feature (default: every SOP). A plugin a SOP does not use is not made. */
  uses?(sop: Sop): boolean;
  /**
   * Options of its own (./plugin-options.ts): given to a run by the plugin's name
   * (`pluginOptions: { NAME: { OPTION: value } }`, `--plugin-option NAME.OPTION=VALUE`) and handed
   * to `make`, and to this plugin only.
   */
  options?: PluginOptionSpecs;
  /** The plugin's hooks; any it leaves out pass through (decide: no answer, transform: unchanged, observe: nothing). */
  make(ctx: RunContext, options: PluginOptionValues): Omit<P, 'name'>;
}

/** A plugin maker of definePlugin: its name and declared options travel with it. */
export type DefinedPlugin<P extends RunPlugin> = ((ctx: RunContext) => P | undefined) & {
  readonly pluginName: string;
  readonly options: PluginOptionSpecs;
};

/** A plugin that is made only for SOPs that use it; its hooks left out are pass-through. */
export function definePlugin<P extends RunPlugin>(def: PluginDefinition<P>): DefinedPlugin<P> {
  const specs = def.options ?? {};
  const make = (ctx: RunContext): P | undefined => {
    const options = pluginOptionsFor(ctx, def.name, specs); // checked even when the SOP does not use it
    if (def.uses && !def.uses(ctx.sop)) return undefined;
    return { ...def.make(ctx, options), name: def.name } as P;
  };
  return Object.assign(make, { pluginName: def.name, options: specs });
}
