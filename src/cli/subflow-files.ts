// The sub-SOP files a SOP's `sop` commands name must be regular files under the SOP size cap:
// `sop validate` refuses a sub-SOP that is a device (/dev/zero), a named pipe or a
// directory, as `sop run` would, without reading it. A missing file is left to the start-up
// checks (startup-checks.ts), which also load the files that exist.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { subflowFile } from '../executors/sop.js';
import { InputFileError, checkInputFile } from '../io/read-input-file.js';
import type { Diagnostic } from '../sop/diagnostics.js';
import { pointerOf } from '../sop/json-source.js';
import { MAX_SOP_BYTES } from '../sop/load.js';
import type { Sop } from '../sop/types.js';

export function subflowFileDiagnostics(sop: Sop, file: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const baseDir = dirname(resolve(file));
  for (const [stateName, state] of Object.entries(sop.states)) {
    for (const [name, def] of Object.entries(state.commands ?? {})) {
      if (def.executor !== 'sop' || typeof def.settings?.file !== 'string') continue;
      const sub = subflowFile(def.settings, baseDir);
      if (!existsSync(sub)) continue;
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
