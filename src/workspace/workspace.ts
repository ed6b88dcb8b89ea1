// The workspace: the folder of a run where code executes and files (reports, the code library)
// are written. Reads and writes by name go through resolveInside, so they cannot leave it.
import { closeSync, constants, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { dirname, relative } from 'node:path';
import { resolveInside } from './safe-path.js';

const WRITE_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW;

/** Write (or append) text without following a symbolic link at the last component. */
export function writeNoFollow(file: string, text: string, append: boolean): void {
  const fd = openSync(file, WRITE_FLAGS | (append ? constants.O_APPEND : constants.O_TRUNC), 0o644);
  try {
    writeSync(fd, text);
  } finally {
    closeSync(fd);
  }
}

export function readNoFollow(file: string): string {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  try {
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
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
    return readNoFollow(this.resolve(path));
  }

  write(path: string, text: string, append = false): string {
    const file = this.resolve(path);
    mkdirSync(dirname(file), { recursive: true });
    // A directory created just now cannot be a link, but re-check the whole way after mkdir.
    resolveInside(this.root, path);
    writeNoFollow(file, text, append);
    return file;
  }

  /** Path shown to people and agents: relative to the workspace. */
  display(file: string): string {
    return relative(this.root, file) || '.';
  }
}
