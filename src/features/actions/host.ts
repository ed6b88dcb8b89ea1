// What the action runtime (src/features/actions/runtime.ts) is given: its options (run folder, workspace,
// executor flags, what a sub-flow shares with its caller) and its host, the Run it acts in.
import type { EnvironmentMemory } from '../../core/environment/environment.js';
import type { HumanInput } from '../../core/io/human.js';
import type { TemplateSet } from '../../core/prompt/templates.js';
import type { RunEvent, RunListener, UsageTotals } from '../../core/runtime/events.js';
import type { Sop } from '../../format/sop/types.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import type { CommandSpec, ExecutorTable } from '../../core/commands/commands.js';
import type { SubflowResult } from '../../core/commands/executor.js';
import type { MemoryLink } from '../../core/workspace/memory-files.js';
import type { EffectSpec } from '../../core/runtime/effects.js';
import type { Embedder } from '../../core/memory/embedder.js';
import type { Redactor } from '../../shared/util/redact.js';
import type { ContextVars } from '../../shared/util/context-vars.js';
import type { CodeSessions } from './executors/session/code-session.js';

export interface ActionOptions {
  /** The run folder; memory files go to its memory/ folder unless memoryDir is given. */
  runDir?: string;
  memoryDir?: string;
  /** Where code runs and files are written (required by the code and library executors). */
  workspace?: string;
  autoRun?: boolean;
  yes?: boolean;
  sandbox?: boolean;
  /** Network inside the sandbox (an explicit opt-in: --sandbox-network, a code command's `network: true`). */
  sandboxNetwork?: boolean;
  /** Folder sop was started from (default: the current directory). */
  launchDir?: string;
  /** Set for sub-flows: nesting depth, flow path and memory files shared with the caller. */
  depth?: number;
  flow?: string;
  memoryLinks?: Record<string, MemoryLink>;
  /** Set for sub-flows: the top-level run's emitter and turn, for file_written events. */
  root?: { emit(event: RunEvent): void; turn(): number };
  /** A memory folder that lasts across runs (--memory-dir): the top-level memory files and the code library live there. */
  persistentMemoryDir?: string;
  /** The stateful code sessions a sub-flow shares with its caller (made by the run that has none). */
  sessions?: CodeSessions;
}

export interface SubRunRequest {
  sop: Sop;
  file: string;
  runId: string;
  inputs: Record<string, string>;
  listeners: RunListener[];
  actions: ActionOptions;
}

export interface SubRunOutcome {
  status: SubflowResult['status'];
  turns: number;
  result?: string;
  summary?: string;
  error?: Error;
  usage: UsageTotals;
}

/** What the runtime needs from its Run. */
export interface ActionHost {
  sop: Sop;
  file: string;
  runId: string;
  env: EnvironmentMemory;
  templates: TemplateSet;
  usage: UsageTotals;
  human: HumanInput;
  signal?: AbortSignal;
  emit(event: RunEvent): void;
  /** The run's current turn. */
  turn(): number;
  baseContext(): Record<string, unknown>;
  subRun(request: SubRunRequest): Promise<SubRunOutcome>;
  /** The executors commands may name: the actions' own and those the run's features contribute (commandExecutors hook). */
  executors(): ExecutorTable;
  /** A state's commands with those the run's features add at its first turn (stateCommands hook: the tools it grants). */
  stateCommands(commands: Record<string, CommandSpec>, state: ResolvedState): Promise<Record<string, CommandSpec>>;
  /** Whether a feature of the run adds commands to states (a SOP's MCP servers). */
  contributesCommands(): boolean;
  /** Read, parse and check a SOP file with every check (a sub-flow's; the engine hands in its loader). */
  loadSop(file: string): { sop: Sop; file: string };
  /** The run's typed values (src/shared/util/context-vars.ts): the code sessions are shared there. */
  vars?: ContextVars;
  /** The run's effects (RunContext.perform; durable with the journal's ledger): a resumed run reuses journaled results. */
  perform?<T>(spec: EffectSpec, fn: () => Promise<T>): Promise<{ value: T; reused: boolean }>;
  /** secrets: applied to executor results (code output, files read) before anything else sees them. */
  redact?: Redactor;
  // scientist: the run's inputs and embedder, for the task_board and world_model executors
  inputs?: Record<string, string>;
  embedder?: () => Promise<Embedder>;
}
