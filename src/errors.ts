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
