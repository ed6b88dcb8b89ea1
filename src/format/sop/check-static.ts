// Checks of a SOP that a run would otherwise meet only when it starts (or later): names that
// become file names too long for the file system, and memory files named in command settings
// that the SOP does not declare. Templates are checked in check-templates.ts.
import type { Diagnostic } from './diagnostics.js';
import { pointerOf } from './json-source.js';
import type { Sop } from './types.js';
import { templateDiagnostics } from './check-templates.js';
import { audienceDiagnostics } from './check-audience.js';
import { targetDiagnostics } from './check-targets.js';
import { calibratePathDiagnostics } from './check-calibrate.js';

/** Memory files become memory/NAME.md (or .json); a sub-flow command, the folder memory/NAME-N. */
export const MAX_FILE_NAME = 200;
const MEMORY_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

export function staticDiagnostics(sop: Sop): Diagnostic[] {
  const out: Diagnostic[] = [];
  const err = (path: Array<string | number>, message: string) => out.push({ severity: 'error', pointer: pointerOf(path), message });
  const warn = (path: Array<string | number>, message: string) => out.push({ severity: 'warning', pointer: pointerOf(path), message });
  const tooLong = (name: string) => name.length > MAX_FILE_NAME;

  for (const key of ['memory', 'memory_types'] as const) {
    for (const name of Object.keys(sop[key] ?? {})) {
      if (tooLong(name))
        err(
          [key, name],
          `memory file name is ${name.length} characters; at most ${MAX_FILE_NAME} (it becomes the file memory/${name.slice(0, 20)}...)`,
        );
    }
  }
  const declared = new Set([...Object.keys(sop.memory ?? {}), ...Object.keys(sop.memory_types ?? {}), 'logs']);
  for (const [stateName, state] of Object.entries(sop.states)) {
    for (const [command, def] of Object.entries(state.commands ?? {})) {
      const at = (...rest: Array<string | number>) => ['states', stateName, 'commands', command, ...rest];
      const settings = (def.settings ?? {}) as Record<string, unknown>;
      if (def.executor === 'sop') {
        if (tooLong(command))
          err(
            at(),
            `a sub-flow command's name is at most ${MAX_FILE_NAME} characters (its sub-flows get the folder memory/${command.slice(0, 20)}...-N); this one has ${command.length}`,
          );
        const shared = settings.memory;
        if (shared && typeof shared === 'object') {
          for (const [sub, mine] of Object.entries(shared as Record<string, unknown>)) {
            if (!MEMORY_NAME.test(sub) || tooLong(sub))
              err(
                at('settings', 'memory', sub),
                `"${sub.slice(0, 60)}" is not a memory file name (letters, digits, _ . -, at most ${MAX_FILE_NAME} characters)`,
              );
            if (typeof mine === 'string' && !declared.has(mine))
              err(
                at('settings', 'memory', sub),
                `this SOP declares no memory file "${mine}" to share (declared: ${[...declared].join(', ')})`,
              );
          }
        }
      }
      // Memory files a command always uses: undeclared, every use fails (told to the agent).
      const named: Array<[string, unknown]> =
        def.executor === 'human'
          ? [['save_to', settings.save_to]]
          : def.executor === 'library'
            ? [['draft', settings.draft]]
            : def.executor === 'memory' && settings.target !== 'workspace'
              ? [['file', settings.file]]
              : [];
      for (const [key, name] of named) {
        if (typeof name === 'string' && !declared.has(name))
          warn(
            at('settings', key),
            `memory file "${name}" is not declared in "memory" (declared: ${[...declared].join(', ')}), so this command fails unless a calling SOP shares it`,
          );
      }
    }
  }
  out.push(...templateDiagnostics(sop));
  out.push(...audienceDiagnostics(sop)); // groups and audiences
  out.push(...targetDiagnostics(sop)); // targets, experiment, calibrate (docs/validity.md)
  out.push(...calibratePathDiagnostics(sop)); // where a calibration sets its values (docs/calibrate.md)
  return out;
}
