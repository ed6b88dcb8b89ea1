// Which failures of a sub-flow come back to its caller as a failed result, and which stop the
// whole run. A sub-flow that fails on its own (no valid command after the retries, an executor
// error, its max_turns) is a step that went wrong: its caller, like the seed's CtrlExMem loop, is
// told and can re-plan or ask the user. Failures that the caller would meet just the same (the
// LLM or the answers file gone, a full disk, a stop asked for, a SOP that cannot work) stop the
// run: only the top level fails it.
import { EngineError } from '../../../shared/errors.js';
import { isResumableError } from '../../../core/runtime/checkpoint.js';

/** The user chose to stop the run (e.g. after rejecting a plan several times). */
export class UserStoppedError extends EngineError {
  constructor(message: string) {
    super(message, 'USER_STOPPED');
    this.name = 'UserStoppedError';
  }
}

/** Sub-flows nested too deep (a SOP calling itself): re-planning cannot help. */
export class SubflowDepthError extends EngineError {
  constructor(message: string) {
    super(message, 'SUBFLOW_DEPTH');
    this.name = 'SubflowDepthError';
  }
}

/** Codes of errors that stop the whole run when a sub-flow meets them (see EngineError.code). */
const RUN_WIDE = new Set([
  'LLM', // the model or the cassette: the caller's next call would fail too
  'LLM_CONSENT', // a server the sub-flow's SOP names, which the user did not allow: told, never re-planned around
  'RETRIES_EXHAUSTED',
  'HUMAN_INPUT', // no answer left in --answers, no terminal
  'JOURNAL',
  'SOP_INVALID',
  'TEMPLATE',
  'COMMAND_CONFIG',
  'USER_STOPPED',
  'SUBFLOW_DEPTH',
]);

/** Whether a sub-flow's error stops the whole run rather than coming back as a failed result. */
export function stopsTheRun(err: Error | undefined, signal?: AbortSignal): boolean {
  if (err === undefined) return false;
  if (signal?.aborted || isResumableError(err)) return true;
  return err instanceof EngineError && RUN_WIDE.has(err.code);
}
