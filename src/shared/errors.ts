// The one base class of the errors sop throws: each carries a stable `code`, so a program can
// tell them apart without matching messages (`err instanceof EngineError && err.code`). A run
// that stops or moves on for a reason that is no failure (a budget spent, a stop asked for, an
// approval needed) is told with a RunSignal instead.
// A message that names an option of a run carries it as data (`say` below): the message says
// `options.timeoutMs`, and `err.option` is 'timeoutMs', so the CLI says `--timeout` instead
// (src/apps/cli/errors.ts renders the parts with the option table), matching no text.
// This file imports nothing: every layer may use it.

/** The stable codes of EngineError: one per kind of problem. */
export type ErrorCode =
  | 'ACTION'
  | 'ALLOW_FILE'
  | 'ARGUMENT'
  | 'CALIBRATE'
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
  | 'POINTER'
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

/**
 * An option of a run a message names, by its name in the option table (src/api/option-table.ts):
 * the API says `options.NAME` (or `options.PATH`), the CLI its flag.
 */
export interface OptionMention {
  option: string;
  /** Where the API has it, when not at `options.NAME` (budget.tokens). */
  path?: string;
  /**
   * name: the option (with `set`: the value it is set to, as `options.sandbox false`); value: `set`
   * in the option's unit; unit: the option's unit (`api` in the API); resume: how a run is resumed
   * with it; continue: how a stopped run goes on with it, in words (`resume with options.answers`),
   * which a caller that continues runs otherwise (a sweep) says its own way.
   */
  form?: 'name' | 'value' | 'unit' | 'resume' | 'continue';
  set?: string | number | boolean;
  /** The API's unit (form unit). */
  api?: string;
  /** A key of a record option (inputs.goal). */
  key?: string;
  /** The CLI names the flag's argument too (--answers FILE). */
  arg?: boolean;
}

/** A message in parts: text, and the options it names. */
export type MessagePart = string | OptionMention;

/** A message: text, or text in parts naming options. */
export type Message = string | readonly MessagePart[];

/** The text of a message as the API says it. */
export const messageText = (m: Message): string => (typeof m === 'string' ? m : renderMessage(m));

/** Says an option mention in words. */
export type OptionNamer = (m: OptionMention) => string;

/** How the API names an option: `options.timeoutMs`, `options.sandbox false`, `options.inputs.goal`. */
export const apiOptionName: OptionNamer = (m) => {
  const name = `options.${m.path ?? m.option}${m.key !== undefined ? `.${m.key}` : ''}`;
  if (m.form === 'value') return String(m.set);
  if (m.form === 'unit') return m.api ?? '';
  if (m.form === 'resume') return `resumeRun(RUN_DIR) with ${name}`;
  if (m.form === 'continue') return `resume with ${name}`;
  return m.set !== undefined ? `${name} ${String(m.set)}` : name;
};

/** An option mention (`say` keeps it as data). */
export const opt = (option: string, more: Omit<OptionMention, 'option'> = {}): OptionMention => ({ option, ...more });

const isMention = (v: unknown): v is OptionMention =>
  typeof v === 'object' && v !== null && typeof (v as { option?: unknown }).option === 'string' && !(v instanceof Error);

/** A message naming options: say`${opt('timeoutMs')} must be above 0` (other values are text). */
export function say(strings: TemplateStringsArray, ...values: unknown[]): MessagePart[] {
  const out: MessagePart[] = [];
  strings.forEach((s, i) => {
    if (s) out.push(s);
    if (i >= values.length) return;
    const v = values[i];
    if (Array.isArray(v))
      out.push(...(v as MessagePart[])); // a message in parts within another
    else out.push(isMention(v) ? v : String(v));
  });
  return out;
}

/** A message's text, with its options named by `namer` (default: as the API names them). */
export function renderMessage(parts: readonly MessagePart[], namer: OptionNamer = apiOptionName): string {
  return parts.map((p) => (typeof p === 'string' ? p : namer(p))).join('');
}

export class EngineError extends Error {
  /** A stable name of the kind of problem, e.g. "SOP_INVALID", "LLM", "JOURNAL". */
  readonly code: ErrorCode;
  /** The option of the run the message is about (its name in the option table), when it names one. */
  readonly option?: string;
  /** The message in parts, when it names options: the CLI names them by their flags. */
  readonly parts?: readonly MessagePart[];

  constructor(message: Message, code: ErrorCode, options?: { cause?: unknown }) {
    super(typeof message === 'string' ? message : renderMessage(message), options);
    this.code = code;
    if (typeof message !== 'string') {
      this.parts = message;
      this.option = message.find((p): p is OptionMention => typeof p !== 'string')?.option;
    }
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
