// What a sandboxed stdio MCP server needs to read besides the system: its folder (cwd), the
// folder of its script (an argument naming a file), and the node_modules its script resolves
// packages from. The sandbox shows / read-only but gives /tmp its own empty folder, so these are
// bound back, read-only, when they live under /tmp (src/shared/sandbox/sandbox.ts).
import { existsSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false;
  }
}

/** The nearest node_modules folder at or above `dir`, if any. */
function nearestNodeModules(dir: string): string | undefined {
  for (let d = dir; ; d = dirname(d)) {
    const nm = join(d, 'node_modules');
    if (existsSync(nm)) return nm;
    if (dirname(d) === d) return undefined;
  }
}

/** The folders a stdio server reads: its cwd, its script's folder, their node_modules. */
export function serverReadPaths(command: string, args: string[], cwd: string): string[] {
  const scripts = [command, ...args]
    .filter((a) => a !== '' && !a.startsWith('-'))
    .map((a) => (isAbsolute(a) ? a : resolve(cwd, a)))
    .filter(isFile)
    .map((f) => dirname(f));
  const dirs = [cwd, ...scripts];
  const modules = dirs.map(nearestNodeModules).filter((d): d is string => d !== undefined);
  return [...new Set([...dirs, ...modules])].filter((d) => existsSync(d));
}
