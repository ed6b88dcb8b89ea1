// The workspace: the folder of a run where code executes and files (reports, the code library)
// are written. Reads and writes by name go through resolveInside, so they cannot leave it.
import { mkdirSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { resolveInside } from '../../shared/workspace/safe-path.js';
import { fileFailure, readPlainFile, writePlainFile } from '../../shared/workspace/safe-file.js';

/**
 * Write (or append) text to a plain file: not through a symbolic link, a hard link, a pipe or
 * a device (see safe-file.ts).
 */
export function writeNoFollow(file: string, text: string, append: boolean, label?: string): void {
  writePlainFile(file, text, append, label);
}

/** Read a plain file (capped, by default at MAX_FILE_READ_BYTES; see safe-file.ts). */
export function readNoFollow(file: string, label?: string, maxBytes?: number): string {
  return readPlainFile(file, label, maxBytes);
}

export class Workspace {
  constructor(readonly root: string) {}

  /** Create the folder if needed. */
  ensure(): this {
    mkdirSync(this.root, { recursive: true });
    return this;
  }

  /** Absolute path of a relative path inside the workspace (PathEscapeError otherwise). */
  resolve(path: string): string {
    return resolveInside(this.ensure().root, path);
  }

  read(path: string): string {
    const file = this.resolve(path);
    return readNoFollow(file, path);
  }

  write(path: string, text: string, append = false): string {
    const file = this.resolve(path);
    try {
      mkdirSync(dirname(file), { recursive: true });
    } catch (err) {
      throw fileFailure(err, dirname(file), path, 'create the folder of');
    }
    // A directory created just now cannot be a link, but re-check the whole way after mkdir.
    resolveInside(this.root, path);
    writeNoFollow(file, text, append, path);
    return file;
  }

  /** Path shown to people and agents: relative to the workspace. */
  display(file: string): string {
    return relative(this.root, file) || '.';
  }
}
