// Loading, validating and defining SOPs from code.
import { resolve } from 'node:path';
import { loadSopFile, validateSopDocument } from './loader/checked-load.js';
import { SopError, type Diagnostic } from '../format/sop/diagnostics.js';
import type { Sop } from '../format/sop/types.js';

/** The file each SOP loaded from disk came from (relative paths in it are resolved from its folder). */
const files = new WeakMap<object, string>();

/** The file a SOP was loaded from, if it was. */
export function sopFileOf(sop: Sop): string | undefined {
  return files.get(sop);
}

/**
 * A SOP from a file (a .sop.json, or an Agents 1.0 config, imported in memory) or from an
 * object, checked against the schema, the graph rules and its commands. Throws SopError,
 * whose `diagnostics` hold every problem (file, JSON pointer, line and column).
 */
export function loadSop(source: string | object, options: { file?: string } = {}): Sop {
  if (typeof source === 'string') {
    const { sop, file } = loadSopFile(source);
    files.set(sop, resolve(file));
    return sop;
  }
  const file = options.file ?? '<object>';
  const { sop } = validateSopDocument(source, file);
  if (options.file) files.set(sop, resolve(options.file));
  return sop;
}

export interface Validation {
  ok: boolean;
  errors: Diagnostic[];
  warnings: Diagnostic[];
}

/** Every problem of a SOP (file or object), without throwing. */
export function validateSop(source: string | object, options: { file?: string } = {}): Validation {
  try {
    const loaded = typeof source === 'string' ? loadSopFile(source) : validateSopDocument(source, options.file ?? '<object>');
    return { ok: true, errors: [], warnings: loaded.warnings };
  } catch (err) {
    if (!(err instanceof SopError)) throw err;
    return {
      ok: false,
      errors: err.diagnostics.filter((d) => d.severity === 'error'),
      warnings: err.diagnostics.filter((d) => d.severity === 'warning'),
    };
  }
}

/**
 * A SOP written in TypeScript: returns its argument, typed by the SOP schema, so an editor
 * completes its keys and a wrong value (e.g. `controller: { type: 'ordr' }`) is a compile error.
 * Run it through loadSop (or runSop, which does) for the checks a type cannot express.
 */
export function defineSop<const S extends Sop>(sop: S): S {
  return sop;
}
