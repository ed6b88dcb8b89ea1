// The one way files are replaced whole: written to a temporary file beside them, then renamed over
// them, so a kill at any moment leaves the old content or the new one, never a torn file.
import { renameSync, rmSync, writeFileSync } from 'node:fs';

export function writeFileAtomic(file: string, content: string | Uint8Array): void {
  // The process id keeps two processes replacing the same file from sharing a temporary file.
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, content);
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
}
