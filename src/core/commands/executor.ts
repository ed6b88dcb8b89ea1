// What an executor is: a named effect a command can invoke, with the schema of its settings
// (written in the SOP) and of its arguments (written by the agent), and a run function.
import { EngineError } from '../../shared/errors.js';
import type { HumanInput } from '../io/human.js';
import type { TemplateSet } from '../prompt/templates.js';
import type { MemoryFiles } from '../workspace/memory-files.js';
import type { Workspace } from '../workspace/workspace.js';
import type { Embedder } from '../memory/embedder.js';
import type { Sop } from '../../format/sop/types.js';
import type { ContextVars } from '../../shared/util/context-vars.js';

/** One argument of a command, as the agent is told about it and as it is checked. */
export interface ArgSpec {
  type: 'string' | 'integer' | 'number' | 'boolean';
  description: string;
  required?: boolean;
  enum?: string[];
}
export type ArgSpecs = Record<string, ArgSpec>;

export interface ArgsEnv {
  /** Folder of the SOP file declaring the command (undefined when unknown, e.g. in schema checks). */
  baseDir?: string;
  /** Load and check another SOP file (the sop executor reads a sub-flow's inputs); given by the run. */
  loadSop?(file: string): Sop;
}

export interface SubflowRequest {
  /** SOP file of the sub-flow (absolute or relative to the current directory). */
  file: string;
  inputs: Record<string, string>;
  /** Memory files shared with the caller: sub-flow name -> caller name. */
  memory: Record<string, string>;
}

export interface SubflowResult {
  flow: string;
  status: 'finished' | 'max_turns' | 'failed' | 'interrupted' | 'budget';
  result?: string;
  summary?: string;
  turns: number;
  error?: Error;
}

export interface ExecContext {
  command: string;
  settings: Record<string, unknown>;
  state: string;
  agent: string;
  role: string;
  turn: number;
  memory: MemoryFiles;
  /** The run's workspace (throws a clear error when the run has none). */
  workspace(): Workspace;
  human: HumanInput;
  /** Run code without asking the human first (--auto-run). */
  autoRun: boolean;
  /** Accept every question and approval without asking (--yes). */
  yes: boolean;
  /** Run code under bubblewrap (--sandbox). */
  sandbox: boolean;
  /** Network inside the sandbox (--sandbox-network, or a code command's `network: true`). */
  sandboxNetwork?: boolean;
  /** The code that really ran in this run so far, oldest first (the code executor's results): its turn and command. */
  codeRuns?(): Array<{ turn: number; command: string }>;
  /** Typed values of the run (src/shared/util/context-vars.ts), such as the code executor's sessions. */
  vars?: ContextVars;
  /** The workspace's code library (the library executor's): a framework of code saved by another executor goes there. */
  library?: CodeLibrary;
  templates: TemplateSet;
  signal?: AbortSignal;
  /** Folder of the SOP file (relative paths in settings are resolved from it). */
  baseDir: string;
  /** Folder sop was started from (given to code as SOP_LAUNCH_DIR). */
  launchDir: string;
  /** Render a template string with the run's context (inputs, goal, memory). */
  renderText(text: string, where: string): string;
  runSubflow(request: SubflowRequest): Promise<SubflowResult>;
  /** Drafts of this command the user rejected in a row, in this visit of the state (human reviews). */
  rejections?: number;
  /** What this executor noted (ExecResult.note) at its last call in this state, e.g. a failed test. */
  note?: unknown;
  // scientist: what the task_board and world_model executors read (resources, memory_types, user_away)
  /** The SOP being run. */
  sop?: Sop;
  /** The run's inputs. */
  inputs?: Record<string, string>;
  /** The run's embedder (environment.embedder), created on first use. */
  embedder?(): Promise<Embedder>;
}

/** A top-level function of a piece of library code. */
export interface FunctionInfo {
  name: string;
  signature: string;
  doc: string;
}

export type LibraryLanguage = 'python' | 'javascript';

/** The workspace's code library: what an executor may check and save there. */
export interface CodeLibrary {
  /** Syntax check and the top-level functions of `code`, or the syntax error. */
  inspect(code: string, lang: LibraryLanguage): { ok: true; functions: FunctionInfo[] } | { ok: false; error: string };
  /** Save `functions` of `code` to `module` of the workspace and list them in the code library memory file. */
  save(code: string, functions: readonly FunctionInfo[], lang: LibraryLanguage, module: string): { listed?: string; importHint: string };
}

export interface ExecResult {
  /** False when the effect did not happen as asked (non-zero exit, refused approval, bad path...). */
  ok: boolean;
  /** What the agent is told (becomes a message in the environment). */
  result: string;
  /** One line for the logs memory file. */
  summary: string;
  /** End the current state with this result (finish, an accepted review); `next` is the
   * next_states key to take (default "1"). */
  finish?: { result: string; summary?: string; next?: string };
  /** A review the user rejected (true) or accepted (false): counts rejections in a row. */
  rejected?: boolean;
  /** Something to remember for the executor's next call in this state (JSON; journaled with the result). */
  note?: unknown;
}

export interface Executor {
  name: string;
  description: string;
  /** JSON schema of the command's "settings" in the SOP. */
  settings: Record<string, unknown>;
  /** The arguments the agent gives, given the settings; undefined when not knowable yet. */
  args(settings: Record<string, unknown>, env: ArgsEnv): ArgSpecs | undefined;
  run(args: Record<string, unknown>, ctx: ExecContext): Promise<ExecResult>;
  /** How a resumed run treats a call a crash interrupted (default: perform it again). */
  durability?: ExecutorDurability;
}

/** An executor's durability policy (see EffectSpec in src/core/runtime/effects.ts). */
export interface ExecutorDurability {
  /** Its effects are not idempotent (running code): performed again only with approval or --auto-run. */
  rerunNeedsApproval?: boolean;
  /** Its own steps are journaled effects (a sub-flow): replayed, reusing each step, rather than its result reused. */
  composite?: boolean;
}

/** A problem with what the agent asked for: told to the agent, who can correct it. */
export class ExecutorInputError extends EngineError {
  constructor(message: string) {
    super(message, 'EXECUTOR_INPUT');
    this.name = 'ExecutorInputError';
  }
}

/** Words a person uses to accept or approve (an empty answer accepts too). */
export function isAcceptance(answer: string): boolean {
  return /^\s*(?:y|yes|ok|okay|sure|accept(?:ed)?|approve[d]?|lgtm|looks good|go ahead|run( it)?|fine|good|continue)?\s*[.!]*\s*$/i.test(
    answer,
  );
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
