// The check of `calibrate.parameters.NAME.path` that the schema cannot express: a JSON pointer at
// which a calibration can set a value (docs/calibrate.md): inside the SOP, naming a value or a new
// key of an existing object, never an object or a list, never under /plugins (set-pointer.ts).
import type { Diagnostic } from './diagnostics.js';
import { pointerOf } from './json-source.js';
import { setProblem } from './set-pointer.js';
import type { Sop } from './types.js';

export function calibratePathDiagnostics(sop: Sop): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const [name, p] of Object.entries(sop.calibrate?.parameters ?? {})) {
    if (p.path === undefined) continue;
    const problem = setProblem(sop, p.path);
    if (problem)
      out.push({
        severity: 'error',
        pointer: pointerOf(['calibrate', 'parameters', name, 'path']),
        message: `parameter "${name}" cannot set a value at ${p.path}: ${problem}`,
      });
  }
  return out;
}
