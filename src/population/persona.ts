// The persona template: Handlebars over an agent's row (src/prompt/templates.ts compiles and
// renders it in the engine's isolated Handlebars, no HTML escaping). The columns it names are
// found by the engine's static template check (src/prompt/template-check.ts), so `each`, `with`,
// block params and `@root` are read as they are everywhere else. Agents whose named columns hold
// the same values get the same persona text: that tuple is their archetype.
import { checkTemplate, describeProblem } from '../sop/template-check.js';
import { compileTemplate } from '../prompt/templates.js';
import { listColumns, PopulationError, type Row } from './types.js';

/** A set that answers "yes" to every name and remembers what it was asked: the template's top-level names. */
class NameRecorder extends Set<string> {
  readonly asked: string[] = [];
  override has(name: string): boolean {
    if (!this.asked.includes(name)) this.asked.push(name);
    return true;
  }
}

export interface PersonaNames {
  /** Columns the template reads, sorted. */
  names: string[];
  /** Template problems (syntax, unknown helpers, ...), one line each. */
  problems: string[];
}

/** The columns a persona template reads and its problems, without rendering it. */
export function personaNames(source: string): PersonaNames {
  const recorder = new NameRecorder();
  const problems = checkTemplate(source, { roots: recorder }).map((p) => describeProblem(p, source.includes('\n')));
  return { names: [...recorder.asked].sort(), problems };
}

/** One line per problem of the template against the source's columns (empty when it is fine). */
export function checkPersona(source: string, columns: readonly string[]): string[] {
  const { names, problems } = personaNames(source);
  if (problems.length) return problems;
  const have = new Set(columns);
  return names
    .filter((n) => !have.has(n))
    .map((n) => `names column "${n}", which the source does not have (columns: ${listColumns(columns)})`);
}

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
