// A run's inputs: the SOP's declared inputs with their defaults, and the values given.
import { EngineError } from '../errors.js';
import type { Sop } from '../sop/types.js';

/** Inputs with defaults applied; a required input without a value is an error. */
export function resolveInputs(sop: Sop, given: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, def] of Object.entries(sop.inputs ?? {})) {
    const value = Object.prototype.hasOwnProperty.call(given, name) ? given[name] : def.default;
    if (value === undefined) {
      if (def.required)
        throw new EngineError(
          `input "${name}" is required${def.description ? ` (${def.description})` : ''}; pass options.inputs.${name}`,
          'OPTION',
        );
      continue;
    }
    out[name] = value;
  }
  for (const [name, value] of Object.entries(given)) if (!(name in out)) out[name] = value;
  return out;
}

/** Names given that the SOP does not declare. */
export function undeclaredInputs(sop: Sop, given: Record<string, string>): string[] {
  return Object.keys(given).filter((n) => !Object.prototype.hasOwnProperty.call(sop.inputs ?? {}, n));
}
