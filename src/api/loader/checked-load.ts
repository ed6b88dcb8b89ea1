// Loading a SOP with every check: the format (src/format/sop/sop-file.ts), the checks of the layers above it
// (src/api/loader/checks.ts), and Agents 1.0 configs (recognised by their shape) imported in memory.
import { isAgentsV1Config } from '../../features/agents-v1/import/detect.js';
import { importAndValidate } from './import-and-validate.js';
import * as format from '../../format/sop/sop-file.js';
import type { LoadedSop } from '../../format/sop/sop-file.js';
import { SOP_CHECKS } from './checks.js';

export {
  MAX_DIAGNOSTICS,
  MAX_SOP_BYTES,
  capDiagnostics,
  locate,
  parseSopText,
  readSopText,
  type LoadedSop,
} from '../../format/sop/sop-file.js';

/** Validate an already parsed SOP document; `text` (when known) gives line and column. */
export function validateSopDocument(doc: unknown, file: string, text?: string): LoadedSop {
  return format.validateSopDocument(doc, file, text, SOP_CHECKS);
}

/** Read, parse and validate a SOP file, or import an Agents 1.0 config; throws SopError. */
export function loadSopFile(file: string): LoadedSop {
  return format.loadSopFile(file, {
    checks: SOP_CHECKS,
    convert: (doc, f, text) => (isAgentsV1Config(doc) ? importAndValidate(doc, { file: f }, text) : undefined),
  });
}
