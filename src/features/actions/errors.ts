// The errors of the actions: ActionError fails the run; the errors an agent can fix by issuing
// another command come back to it as a failed command's result.
import { EngineError } from '../../shared/errors.js';
import { ExecutorInputError } from '../../core/commands/executor.js';
import { MemoryError } from '../../core/workspace/memory-files.js';
import { PathEscapeError } from '../../shared/workspace/safe-path.js';
import { FileAccessError, UnsafeFileError } from '../../shared/workspace/safe-file.js';
import { InputFileError } from '../../shared/io/read-input-file.js';

export class ActionError extends EngineError {
  constructor(message: string) {
    super(message, 'ACTION');
    this.name = 'ActionError';
  }
}

/** Errors an agent can fix by issuing another command; anything else fails the run. */
export function recoverable(err: unknown): boolean {
  if (err instanceof ExecutorInputError || err instanceof PathEscapeError || err instanceof MemoryError) return true;
  if (err instanceof UnsafeFileError || err instanceof FileAccessError) return true; // files: refused or ordinary path errors
  const code = err instanceof InputFileError ? err.errno : (err as NodeJS.ErrnoException)?.code;
  return (
    typeof code === 'string' &&
    [
      'ENOENT',
      'EISDIR',
      'ENOTDIR',
      'ELOOP',
      'EACCES',
      'EROFS',
      'ENAMETOOLONG',
      'EEXIST',
      'ENOTEMPTY',
      'EFBIG',
      'ENXIO',
      'EPERM',
      'EINVAL',
      'EMLINK',
      'ETXTBSY',
    ].includes(code)
  );
}
