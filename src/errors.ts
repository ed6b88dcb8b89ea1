// The one base class of the errors sop throws on purpose: each carries a stable `code`, so a
// program can tell them apart without matching messages (`err instanceof EngineError && err.code`).
// This file imports nothing: every layer may use it.

export class EngineError extends Error {
  /** A stable name of the kind of problem, e.g. "SOP_INVALID", "LLM", "JOURNAL". */
  readonly code: string;

  constructor(message: string, code: string) {
    super(message);
    this.code = code;
  }
}

/**
 * Control flow, not a failure: a hook asks the run to stop (a budget spent, the user's stop) or
 * to move to another state (a budget's on_exhausted). The loop tells it apart with isRunSignal()
 * and never by class name; what it carries is recorded as the signal says.
 */
export class RunSignal extends Error {
  constructor(
    /** stop: the run ends with `status`; divert: the run moves to `target` and goes on. */
    readonly kind: 'stop' | 'divert',
    message: string,
    readonly detail: {
      /** The run's status when it stops (e.g. "budget", "interrupted"). */
      status?: 'budget' | 'interrupted';
      /** The state entered next (divert). */
      target?: string;
      /** Why the state is entered, in its state_entered event (divert). */
      reason?: 'budget';
      /** Facts recorded on the run's result and its run_finished event, e.g. { budget: "..." }. */
      record?: Record<string, string>;
    } = {},
  ) {
    super(message);
    this.name = 'RunSignal';
  }
}

export function isRunSignal(err: unknown): err is RunSignal {
  return err instanceof RunSignal;
}
