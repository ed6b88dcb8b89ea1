// The hooks of a run: the one declared way features (actions and executors, the scientist's task
// board and world model, the Agents 1.0 turn, durability) plug into the loop of src/runtime/run.ts,
// which imports none of them. A run is given a factory that makes its plugins from the RunHost
// (what the run offers them); each hook is optional, and plugins are consulted in order.
//
// Per turn: controller (transit, then the state's controller strategy) -> beforeTurn -> speak
// (or the agent prompt: agentPrompt parts, view, agentCall) -> LLM -> the message is recorded
// -> afterMessage -> execute (a command's executor) -> summary -> checkpoint (plugin checkpoint()).
import type { ComponentPart } from '../agent/components.js';
import type { PrivateMemoryOption } from '../agent/pipeline.js';
import type { EnvironmentMemory, EnvironmentView } from '../environment/environment.js';
import type { Message } from '../environment/message.js';
import type { HumanInput } from '../io/human.js';
import type { CallMeta, ChatMessage, LlmProvider, Usage } from '../llm/types.js';
import type { ModelPrice } from '../llm/pricing.js';
import type { Embedder } from '../memory/embedder.js';
import type { TemplateSet } from '../prompt/templates.js';
import type { ResolvedSop, ResolvedState } from '../sop/resolved.js';
import type { LlmSettings, Sop } from '../sop/types.js';
import type { StateRuntime } from './controller.js';
import type { EffectSpec, Effects, Performed } from './effects.js';
import type { RunEvent } from './events.js';
import type { UsageTotals } from './usage.js';
import type { Redactor } from '../util/redact.js';

/** Who speaks next, where. */
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

/** What a run offers its plugins. */
export interface RunHost {
  readonly sop: Sop;
  readonly resolved: ResolvedSop;
  /** The SOP file (relative paths in the SOP are resolved from its folder). */
  readonly file: string;
  readonly runId: string;
  readonly env: EnvironmentMemory;
  readonly templates: TemplateSet;
  readonly usage: UsageTotals;
  readonly inputs: Record<string, string>;
  readonly human: HumanInput;
  readonly seed: number;
  readonly signal?: AbortSignal;
  readonly compat?: 'agents-v1';
  /** Secrets out of every prompt and executor result (src/util/redact.ts). */
  readonly redact: Redactor;
  /** Agent replies are streamed (delta events). */
  readonly stream: boolean;
  /** The run's LLM provider (after every plugin's wrapLlm). */
  llm(): LlmProvider;
  emit(event: RunEvent): void;
  /** The run's current turn. */
  turn(): number;
  /** Turns taken in the state's current visit. */
  turnInState(state: string): number;
  /** Template context shared by every prompt: inputs, goal, SOP facts and every plugin's context(). */
  baseContext(): Record<string, unknown>;
  /** One LLM call of the run (usage, llm_call event, effects). */
  call(messages: ChatMessage[], settings: LlmSettings, meta: CallMeta, stream?: boolean): Promise<string>;
  /** Perform an outside effect through the run's effects (journaled and reused when durable). */
  perform<T>(spec: EffectSpec, fn: () => Promise<T>): Promise<Performed<T>>;
  /** The run's embedder (given, else made from environment.embedder on first use). */
  embedder(): Promise<Embedder>;
}

export interface RunPlugin {
  /** Names the plugin; its checkpoint() is journaled under this name. */
  readonly name: string;
  /** The effects every outside effect goes through (durability: the journal's effect ledger). */
  readonly effects?: Effects;
  /** A state's competitive visibility keeps the run's summary on entry (Agents 1.0: one summary, read by every judge). */
  readonly keepsSummary?: boolean;
  /** Wrap the run's LLM provider (e.g. Agents 1.0 concise mode). */
  wrapLlm?(llm: LlmProvider): LlmProvider;
  /** Values added to every prompt's template context. */
  context?(): Record<string, unknown>;
  /** Where a state goes next, when this plugin decides it (command states); undefined: the judge decides. */
  transit?(state: ResolvedState, rt: StateRuntime): Transition | undefined;
  /**
   * Before each LLM call of the run, with its model and price (undefined: not priced; budgets throw
   * BudgetExhaustedError to refuse the call).
   */
  beforeCall?(messages: ChatMessage[], model: string, meta: CallMeta, price: ModelPrice | undefined): void;
  /** After each LLM call, with its usage and USD cost (undefined: not priced), a reply reused from the journal included. */
  afterCall?(meta: CallMeta, usage: Usage, cost: number | undefined): void;
  /** Before an AI agent's turn (begin turns included). */
  beforeTurn?(step: TurnStep): Promise<void>;
  /**
   * The agent's reply, when this plugin produces it (commands, the Agents 1.0 turn); `act`
   * runs the agent prompt pipeline (`extra` messages are appended to the prompt; `privateMemory`
   * gives it Agents 1.0 semantics).
   */
  speak?(
    step: TurnStep,
    act: (extra?: ChatMessage[], privateMemory?: PrivateMemoryOption) => Promise<string>,
  ): Promise<TurnOutput | undefined>;
  /** Parts added to the agent's system prompt, and values added to its template context. */
  agentPrompt?(state: ResolvedState, context: Record<string, unknown>): { parts?: ComponentPart[]; context?: Record<string, unknown> };
  /** Narrow what the agent sees of the shared memory. */
  view?(view: EnvironmentView, state: ResolvedState, stateStart: number): EnvironmentView;
  /** LLM settings and call facts of an agent's call. */
  agentCall?(
    state: ResolvedState,
    agent: string,
    role: string,
    settings: LlmSettings,
  ): { settings?: Partial<LlmSettings>; meta?: Partial<CallMeta> };
  /** A turn's message was recorded. */
  afterMessage?(message: Message): void;
  /** State journaled in each checkpoint, and restored from it on resume. */
  checkpoint?(): unknown;
  restoreCheckpoint?(state: unknown, context: { files: Record<string, string> }): void | Promise<void>;
  /** The SOP's result (its last finish command) and summary, when it has one. */
  result?(): { result?: string; summary?: string };
  /** The run is over (finished, failed or interrupted): release what the plugin holds (e.g. code sessions). */
  close?(): void;
}

/** Makes a run's plugins, in the order they are consulted. */
export type PluginFactory = (host: RunHost) => RunPlugin[];
