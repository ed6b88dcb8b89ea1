// A full disk (ENOSPC, or a quota: EDQUOT) while the engine writes a run file. It stops the run
// as `interrupted`: every journal line written before is intact, so the run can be resumed once
// there is room again. The message names the file (Node's own says only "write").
import { EngineError } from '../errors.js';
export const DISK_FULL_CODES = new Set(['ENOSPC', 'EDQUOT']);

export class DiskFullError extends EngineError {
  /** Stops a run as `interrupted`, not `failed` (see isResumableError). */
  readonly resumable = true;
  /** ENOSPC or EDQUOT. */
  readonly errno: string;
  constructor(
    readonly file: string,
    cause: NodeJS.ErrnoException,
    /** How to go on once there is room (default: a run's, `sop resume`). */
    then = 'continue with sop resume',
  ) {
    super(
      `disk full: cannot write ${file} (${cause.code}); nothing written before it was lost; free some space, then ${then}`,
      'DISK_FULL',
    );
    this.name = 'DiskFullError';
    this.errno = cause.code ?? 'ENOSPC';
  }
}

export function isDiskFull(err: unknown): err is NodeJS.ErrnoException {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' && DISK_FULL_CODES.has(code) && !(err instanceof DiskFullError);
}

/** The error to throw for a failed write of `file`: a DiskFullError when the disk is full. */
export function writeFailure(err: unknown, file: string, then?: string): unknown {
  return isDiskFull(err) ? new DiskFullError(file, err, then) : err;
}

/** What to do after a full disk stopped a sweep: its finished runs are in results.jsonl. */
export const SWEEP_AGAIN = 'run the same sop sweep again (the runs it finished are kept)';
