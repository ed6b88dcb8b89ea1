// A run's inputs: the SOP's declared inputs with their defaults, and the values given. An input
// is required when it says so (`required: true`), or when a text of the SOP reads it as a
// template and it has no default (`required: false` lets such an input be empty).
import { EngineError, opt, say } from '../../shared/errors.js';
import { inputsRead } from '../../format/sop/check-templates.js';
import type { Sop } from '../../format/sop/types.js';
import { closestName } from '../../shared/util/suggest.js';

type InputDef = NonNullable<Sop['inputs']>[string];

/** Whether a run of `sop` must be given input `name` (it has no default). */
export function inputRequired(sop: Sop, name: string, def: InputDef): boolean {
  if (def.default !== undefined) return false;
  return def.required ?? inputsRead(sop).has(name);
}

/** The error for a required input without a value (API wording; the CLI names its flag). */
export function missingInputError(sop: Sop, name: string, def: InputDef): EngineError {
  const why = def.required ? '' : ', which its templates read and which has no default';
  return new EngineError(
    say`${sop.name} needs the input "${name}"${def.description ? ` (${def.description})` : ''}${why}: pass ${opt('inputs', { key: name })}`,
    'OPTION',
  );
}

/** Inputs with defaults applied; a required input without a value is an error. */
export function resolveInputs(sop: Sop, given: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, def] of Object.entries(sop.inputs ?? {})) {
    const value = Object.prototype.hasOwnProperty.call(given, name) ? given[name] : def.default;
    if (value === undefined) {
      if (inputRequired(sop, name, def)) throw missingInputError(sop, name, def);
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

/**
 * The inputs given on a command line, checked before anything starts: a name the SOP does not
 * declare is an error suggesting the declared name it is closest to, and a required input
 * without a value is an error naming it.
 */
export function checkGivenInputs(sop: Sop, given: Record<string, string>): void {
  checkInputNames(sop, Object.keys(given));
  for (const [name, def] of Object.entries(sop.inputs ?? {})) {
    if (!Object.prototype.hasOwnProperty.call(given, name) && inputRequired(sop, name, def)) throw missingInputError(sop, name, def);
  }
}

/** A name the SOP does not declare is an error, suggesting the declared name it is closest to. */
export function checkInputNames(sop: Sop, names: readonly string[]): void {
  const declared = Object.keys(sop.inputs ?? {});
  for (const name of names.filter((n) => !Object.prototype.hasOwnProperty.call(sop.inputs ?? {}, n))) {
    const near = closestName(name, declared);
    throw new EngineError(
      `${sop.name} has no input "${name}"${near ? `; did you mean "${near}"?` : ''} (${declared.length ? `its inputs: ${declared.join(', ')}` : 'it declares no inputs'})`,
      'OPTION',
    );
  }
}
