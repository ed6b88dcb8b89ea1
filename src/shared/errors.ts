// The one base class of the errors sop throws: each carries a stable `code`, so a program can
// tell them apart without matching messages (`err instanceof EngineError && err.code`). A run
// that stops or moves on for a reason that is no failure (a budget spent, a stop asked for, an
// approval needed) is told with a RunSignal instead.
// Messages name API options (`options.autoRun`, `options.inputs.goal`), never CLI flags: the
// CLI maps them to its flags (src/apps/cli/errors.ts).
// This file imports nothing: every layer may use it.

/** The stable codes of EngineError: one per kind of problem. */
export type ErrorCode =
  | 'ACTION'
  | 'ALLOW_FILE'
  | 'ARGUMENT'
  | 'COMMAND_CONFIG'
  | 'DISK_FULL'
  | 'EFFECT_NOT_APPROVED'
  | 'EMBEDDER'
  | 'EMBEDDER_LOAD'
  | 'EXECUTOR'
  | 'EXECUTOR_INPUT'
  | 'FILE_ACCESS'
  | 'HUMAN_INPUT'
  | 'INPUT_FILE'
  | 'INTERNAL'
  | 'WORLD_GRAPH'
  | 'WORLD_DEFINITION'
  | 'POPULATION'
  | 'RESULTS'
  | 'RULE_POLICY'
  | 'JUDGE_REPLY'
  | 'EXPRESSION'
  | 'JOURNAL'
  | 'JSON_SYNTAX'
  | 'KNOWLEDGE'
  | 'LLM'
  | 'LLM_CONSENT'
  | 'MCP_ALLOW'
  | 'MCP_APPROVAL'
  | 'MCP_CONFIG'
  | 'MCP_SERVER'
  | 'MEMORY_DIR'
  | 'MEMORY_FILE'
  | 'OPTION'
  | 'PATH_ESCAPE'
  | 'PLUGIN'
  | 'PRICING'
  | 'JOB_REFUSED'
  | 'QUEUE_SECRET'
  | 'QUEUE_URL'
  | 'RENDER_LIMIT'
  | 'REPLY_FAULT'
  | 'RESOURCE'
  | 'RETRIES_EXHAUSTED'
  | 'SANDBOX'
  | 'SHARDS'
  | 'SOP_INVALID'
  | 'SOP_NOT_FOUND'
  | 'SUBFLOW'
  | 'SUBFLOW_DEPTH'
  | 'SWEEP_INPUT'
  | 'SWEEP_OPTION'
  | 'TASK_BOARD'
  | 'TEMPLATE'
  | 'UNSAFE_FILE'
  | 'USER_STOPPED'
  | 'USER_TESTS'
  | 'VECTOR_STORE'
  | 'WORKER_STOPPED'
  | 'WORLD_MODEL';

export class EngineError extends Error {
  /** A stable name of the kind of problem, e.g. "SOP_INVALID", "LLM", "JOURNAL". */
  readonly code: ErrorCode;

  constructor(message: string, code: ErrorCode, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** What a RunSignal asks of the run. */
export type RunSignalKind = 'stop' | 'divert' | 'approval';

/** What a RunSignal carries besides its kind and message. */
export interface RunSignalDetail {
  /**
   * stop: the status the run ends with, e.g. "budget" (a budget spent, no on_exhausted state)
   * or "interrupted" (a stop the user asked for).
   */
  status?: string;
  /** divert: the state the run moves to (a spent budget's on_exhausted state). */
  target?: string;
  /** What raised it, e.g. "budget", "user". */
  source?: string;
  /** divert: why the state is entered, in its state_entered event. */
  reason?: 'budget';
  /** Facts recorded on the run's result and its run_finished event, e.g. { budget: "..." }. */
  record?: Record<string, string>;
  /** approval: what waits for a person's yes (e.g. "run_code in state \"code\""). */
  action?: string;
  /** approval: the effect waiting for approval in the journal's effect ledger. */
  effect?: number;
}

/**
 * Control flow, not a failure (so not an EngineError): the run stops (`stop`, with a status),
 * moves to another state (`divert`, with a target), or waits for a person (`approval`). Thrown
 * by a plugin or a step and caught by the run loop: `if (isRunSignal(err)) ...`.
 */
export class RunSignal extends Error {
  constructor(
    readonly kind: RunSignalKind,
    message: string,
    readonly detail: RunSignalDetail = {},
  ) {
    super(message);
    this.name = 'RunSignal';
  }
}

/** Whether `e` is a RunSignal (control flow), not an error. */
export function isRunSignal(e: unknown): e is RunSignal {
  return e instanceof RunSignal;
}
