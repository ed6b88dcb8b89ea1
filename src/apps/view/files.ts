// Files of a run folder the viewer shows: its memory files and workspace files, read-only and
// size-capped. Only regular files whose real path lies inside the run's memory/ or workspace/
// folder are ever read; symbolic links are not followed, and a hard-linked file (more than one
// name: it may be a file from outside the run, linked in by code the run ran) is refused too.
import { closeSync, constants, fstatSync, lstatSync, openSync, readdirSync, readSync, realpathSync, type Stats } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';

export const FILE_CAP = 64 * 1024;
const AREAS = ['memory', 'workspace'] as const;
const MAX_FILES = 200;

/** A file the viewer may read: regular, and its only name (not a hard link to a file elsewhere). */
const readable = (st: Stats) => st.isFile() && st.nlink === 1;

export interface RunFile {
  /** Path relative to the run folder, with "/" separators. */
  path: string;
  size: number;
}

/** The regular files under memory/ and workspace/ (no symbolic or hard links, at most 200). */
export function listRunFiles(runDir: string): RunFile[] {
  const out: RunFile[] = [];
  const walk = (dir: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      if (out.length >= MAX_FILES) return;
      const full = join(dir, e.name);
      if (e.isDirectory() && depth < 8) walk(full, depth + 1);
      else if (e.isFile()) {
        const st = lstatSync(full, { throwIfNoEntry: false });
        if (st && readable(st)) out.push({ path: relative(runDir, full).split(sep).join('/'), size: st.size });
      }
    }
  };
  for (const area of AREAS) if (realArea(runDir, area)) walk(join(runDir, area), 0);
  return out;
}

/** The real path of memory/ or workspace/, when it is a folder of the run itself (not a link out). */
function realArea(runDir: string, area: string): string | undefined {
  try {
    const dir = join(runDir, area);
    if (!lstatSync(dir).isDirectory()) return undefined;
    const real = realpathSync(dir);
    return real === join(realpathSync(runDir), area) ? real : undefined;
  } catch {
    return undefined;
  }
}

/** The path of a run file named in a request, or undefined if it is not one the viewer may read. */
export function safeRunFile(runDir: string, name: string): string | undefined {
  if (name.includes('\0')) return undefined;
  const full = resolve(runDir, name);
  const rel = relative(runDir, full);
  const area = rel.split(sep)[0];
  if (rel.startsWith('..') || rel === '' || !AREAS.includes(area as (typeof AREAS)[number])) return undefined;
  try {
    if (!readable(lstatSync(full))) return undefined; // a symbolic or hard link (or folder, FIFO, device) is refused
    const real = realpathSync(full);
    const areaReal = realArea(runDir, area!);
    if (!areaReal || !real.startsWith(areaReal + sep)) return undefined;
    return real;
  } catch {
    return undefined;
  }
}

/**
 * The start of a text file (up to FILE_CAP bytes); binary files are not shown. Undefined when the
 * file opened is no longer one the viewer may read (swapped for a link, a FIFO or a device).
 */
export function readCapped(file: string): { text: string; truncated: boolean; binary: boolean; size: number } | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (constants.O_NOCTTY ?? 0));
  } catch {
    return undefined;
  }
  try {
    const st = fstatSync(fd);
    if (!readable(st)) return undefined;
    const buf = Buffer.alloc(Math.min(st.size, FILE_CAP));
    const n = readSync(fd, buf, 0, buf.length, 0);
    const bytes = buf.subarray(0, n);
    const binary = bytes.includes(0);
    return { text: binary ? '' : bytes.toString('utf8'), truncated: st.size > n, binary, size: st.size };
  } finally {
    closeSync(fd);
  }
}
