// The persona template: Handlebars over an agent's row (src/core/prompt/templates.ts compiles and
// renders it in the engine's isolated Handlebars, no HTML escaping); its checks are in
// ./persona-check.ts. Agents whose named columns hold the same values get the same persona text:
// that tuple is their archetype.
import { compileTemplate } from '../../core/prompt/templates.js';
import { checkPersona, personaNames } from './persona-check.js';
import { PopulationError, type Row } from './types.js';

export { checkPersona, personaNames, type PersonaNames } from './persona-check.js';

export interface Persona {
  readonly source: string;
  /** Columns the template names, sorted: the archetype's columns. */
  readonly names: readonly string[];
  /** The persona text of a row. */
  render(row: Row): string;
  /** The archetype of a row: the JSON list of its values of `names` (same key, same persona text). */
  archetypeKey(row: Row): string;
}

/** A compiled persona; its problems (against `columns`, when given) throw one line naming `where`. */
export function compilePersona(source: string, where = 'persona', columns?: readonly string[]): Persona {
  const { names, problems } = personaNames(source);
  const first = problems[0] ?? (columns ? checkPersona(source, columns)[0] : undefined);
  if (first) throw new PopulationError(`${where}: ${first}`);
  const render = compileTemplate(source, where);
  return {
    source,
    names,
    render: (row) => render(row),
    archetypeKey: (row) => JSON.stringify(names.map((n) => row[n] ?? null)),
  };
}
