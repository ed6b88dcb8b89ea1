// The sub-SOP files a SOP's `sop` commands name must be regular files under the SOP size cap:
// `sop validate` refuses a sub-SOP that is a device (/dev/zero), a named pipe or a
// directory, as `sop run` would, without reading it. A missing file is left to the start-up
// checks (startup-checks.ts), which also load the files that exist. A sub-flow whose file is
// this SOP's own, or leads back to it through other files (a cycle across files), is refused:
// such a run starts itself again and again.
import { existsSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { subflowFile } from '../../features/actions/executors/sop.js';
import { InputFileError, checkInputFile, readInputFile } from '../../shared/io/read-input-file.js';
import type { Diagnostic } from '../../format/sop/diagnostics.js';
import { pointerOf } from '../../format/sop/json-source.js';
import { MAX_SOP_BYTES } from '../../format/sop/sop-file.js';
import type { Sop } from '../../format/sop/types.js';

export function subflowFileDiagnostics(sop: Sop, file: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const baseDir = dirname(resolve(file));
  for (const [stateName, state] of Object.entries(sop.states)) {
    for (const [name, def] of Object.entries(state.commands ?? {})) {
      if (def.executor !== 'sop' || typeof def.settings?.file !== 'string') continue;
      const sub = subflowFile(def.settings, baseDir);
      if (!existsSync(sub)) continue;
      const cycle = cycleBack(resolve(file), sub);
      if (cycle) {
        out.push({
          severity: 'error',
          pointer: pointerOf(['states', stateName, 'commands', name, 'settings', 'file']),
          message: `sub-flow cycle: ${cycle.map((f) => basename(f)).join(' -> ')}; a SOP that runs itself as a sub-flow never ends`,
        });
        continue;
      }
      try {
        checkInputFile(sub, { maxBytes: MAX_SOP_BYTES, what: 'a SOP file' });
      } catch (err) {
        if (!(err instanceof InputFileError)) throw err;
        out.push({
          severity: 'error',
          pointer: pointerOf(['states', stateName, 'commands', name, 'settings', 'file']),
          message: `sub-SOP ${err.message}`,
        });
      }
    }
  }
  return out;
}

/** The sub-SOP files a SOP file's `sop` commands name (none when it cannot be read as one). */
function subflowsOf(file: string): string[] {
  let doc: unknown;
  try {
    doc = JSON.parse(readInputFile(file, { maxBytes: MAX_SOP_BYTES, what: 'a SOP file' }));
  } catch {
    return []; // its own problems are told when it is validated or run
  }
  const states = (doc as { states?: unknown } | null)?.states;
  if (typeof states !== 'object' || states === null) return [];
  const out: string[] = [];
  for (const state of Object.values(states as Record<string, { commands?: unknown }>)) {
    const commands = state?.commands;
    if (typeof commands !== 'object' || commands === null) continue;
    for (const def of Object.values(commands as Record<string, { executor?: unknown; settings?: Record<string, unknown> }>)) {
      if (def?.executor === 'sop' && typeof def.settings?.file === 'string') out.push(subflowFile(def.settings, dirname(file)));
    }
  }
  return out;
}

/** The files from `root` through `sub` back to `root`, when `sub` leads back to it (depth first, each file once). */
function cycleBack(root: string, sub: string): string[] | undefined {
  const seen = new Set<string>();
  const walk = (file: string, path: string[]): string[] | undefined => {
    if (file === root) return [...path, file];
    if (seen.has(file) || !existsSync(file)) return undefined;
    seen.add(file);
    for (const next of subflowsOf(file)) {
      const found = walk(next, [...path, file]);
      if (found) return found;
    }
    return undefined;
  };
  return walk(sub, [root]);
}
