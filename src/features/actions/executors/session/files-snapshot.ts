// Which files a cell of a code session wrote: the (mtime, size) of every file under the working
// directory before and after it (hidden folders, node_modules and __pycache__ skipped; capped).
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const SKIP = new Set(['node_modules', '__pycache__', '.git']);
const MAX_ENTRIES = 5000;
const MAX_FILES = 50;

export function filesSnapshot(root: string): Map<string, string> {
  const seen = new Map<string, string>();
  const walk = (dir: string): void => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (seen.size >= MAX_ENTRIES) return;
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (!SKIP.has(e.name) && !e.name.startsWith('.')) walk(path);
      } else if (e.isFile()) {
        try {
          const st = statSync(path, { bigint: true });
          seen.set(relative(root, path), `${st.mtimeNs}:${st.size}`);
        } catch {
          // gone
        }
      }
    }
  };
  walk(root);
  return seen;
}

export function writtenFiles(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after]
    .filter(([p, s]) => before.get(p) !== s)
    .map(([p]) => p)
    .sort()
    .slice(0, MAX_FILES);
}
