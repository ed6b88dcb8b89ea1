// What a run is given (RunOptions) and what it gives back (RunResult).
import type { NameStripping } from '../agent/output.js';
import type { ToolSlotExecutor } from '../components/registry.js';
import type { EnvironmentMemory } from '../environment/environment.js';
import type { Message } from '../environment/message.js';
import type { HumanInput } from '../io/human.js';
import type { PricingTable } from '../llm/pricing.js';
import type { LlmProvider } from '../llm/types.js';
import type { Embedder } from '../memory/embedder.js';
import type { LlmSettings, Sop } from '../../format/sop/types.js';
import type { Redactor } from '../../shared/util/redact.js';
import type { RunListener, RunSettings, UsageTotals } from './events.js';
import type { PluginFactory } from './hooks.js';
import type { GivenPluginOptions } from './plugin-options.js';
import type { RestorePoint } from './position.js';
import type { Semantics } from './semantics.js';

export interface RunOptions {
  sop: Sop;
  file: string;
  llm: LlmProvider;
  runId?: string;
  inputs?: Record<string, string>;
  seed?: number;
  /** Global guard on the number of turns. */
  maxTurns?: number;
  /** Force this model for every call. */
  model?: string;
  /**
   * The LLM block whose server (base_url, api_key_env) is the provider's own: the top-level SOP's
   * (default: this SOP's). A sub-flow's blocks that name another server are answered there.
   */
  serverLlm?: LlmSettings;
  human?: HumanInput;
  environment?: EnvironmentMemory;
  /** Embedder for retrieval when environment.top_k > 0 (default: created from environment.embedder). */
  embedder?: Embedder;
  listeners?: RunListener[];
  signal?: AbortSignal;
  /** The run's semantics flags (default: sop's clean behaviours): src/core/runtime/semantics.ts. */
  semantics?: Semantics;
  /** Settings recorded with the run's own in run_started and resumed events (a resume or fork behaves the same). */
  settings?: Omit<RunSettings, 'max_turns' | 'model' | 'name_stripping' | 'stream'>;
  nameStripping?: NameStripping;
  /** Stream agent replies (deltas are emitted as events). */
  stream?: boolean;
  /** Continue from a journaled checkpoint instead of starting afresh (resumeRun, forkRun). */
  resume?: RestorePoint;
  /** Recorded in run_started: how the LLM and human input were chosen. */
  launch?: Record<string, string | number | boolean>;
  /** The features plugged into this run (src/core/runtime/hooks.ts); src/api/engine/run-with-features.ts gives the built-in ones. */
  plugins?: PluginFactory;
  /** Options of plugins of one's own, by plugin name: each plugin is handed only those it declares (./plugin-options.ts). */
  pluginOptions?: GivenPluginOptions;
  /** The run's workspace folder (code components write output_code/ there). */
  workspace?: string;
  /** Executors bound to tool slots (tools components), by executor name (or slot name when the slot names none). */
  toolExecutors?: Record<string, ToolSlotExecutor>;
  /** secrets: applied to every prompt and executor result (default: secrets of the environment). */
  redact?: Redactor;
  /** Prices of models for the cost of calls (pricing.json and its overrides); without it no cost is counted. */
  pricing?: PricingTable;
}

export const RUN_STATUSES = ['finished', 'max_turns', 'failed', 'interrupted', 'budget'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/** A run signal's status, when it is one a run ends with (else the run is interrupted, resumable). */
export function runStatus(s: string | undefined): RunStatus {
  return (RUN_STATUSES as readonly string[]).includes(s ?? '') ? (s as RunStatus) : 'interrupted';
}

export interface RunResult {
  status: RunStatus;
  turns: number;
  finalState?: string;
  error?: Error;
  usage: UsageTotals;
  messages: readonly Message[];
  /** The SOP's result (its last finish command) and summary, when it has one. */
  result?: string;
  summary?: string;
  /** Status "budget": which budget was spent (docs/cost.md). */
  budget?: string;
}
