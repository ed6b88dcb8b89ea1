// Resolving a relative path inside a folder so that it can never leave it: no absolute paths,
// no ".." segments, no symbolic links anywhere on the way (a link planted by code that ran in
// the workspace could otherwise point a later write at any file on the machine).
import { EngineError } from '../errors.js';
import { lstatSync, realpathSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';

export class PathEscapeError extends EngineError {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`path "${path}" refused: ${reason}`, 'PATH_ESCAPE');
    this.name = 'PathEscapeError';
  }
}

/** The path split into plain segments, or a PathEscapeError naming what is wrong. */
export function checkRelative(path: string): string[] {
  if (typeof path !== 'string' || path.trim() === '') throw new PathEscapeError(String(path), 'empty path');
  if (path.includes('\0')) throw new PathEscapeError(path.replace(/\0/g, '\\0'), 'contains a NUL byte');
  if (isAbsolute(path) || /^[A-Za-z]:[\\/]/.test(path) || path.startsWith('\\') || path.startsWith('~')) {
    throw new PathEscapeError(path, 'absolute paths are not allowed; give a path relative to the folder');
  }
  const segments = path.split(/[\\/]+/).filter((s) => s !== '' && s !== '.');
  if (segments.length === 0) throw new PathEscapeError(path, 'names the folder itself, not a file in it');
  if (segments.some((s) => s === '..')) throw new PathEscapeError(path, '".." is not allowed');
  return segments;
}

/**
 * Absolute path of `path` inside `root`. Every existing component below the root must be a
 * plain file or directory, not a symbolic link. Missing components are fine (a file about to
 * be created); writers should still open with O_NOFOLLOW to close the race.
 */
export function resolveInside(root: string, path: string): string {
  const segments = checkRelative(path);
  let realRoot: string;
  try {
    realRoot = realpathSync(root);
  } catch {
    realRoot = root;
  }
  let current = realRoot;
  for (const segment of segments) {
    current = join(current, segment);
    let isLink: boolean;
    try {
      isLink = lstatSync(current).isSymbolicLink();
    } catch {
      break; // does not exist yet: nothing below it can be a link either
    }
    if (isLink) throw new PathEscapeError(path, `"${current.slice(realRoot.length + 1)}" is a symbolic link`);
  }
  const full = join(realRoot, ...segments);
  if (full !== realRoot && !full.startsWith(realRoot + sep)) throw new PathEscapeError(path, 'leaves the folder');
  return full;
}
