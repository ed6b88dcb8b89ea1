// The checks of a persona template (Handlebars over an agent's row), without rendering it: the
// columns it names, found by the engine's static template check (src/format/sop/template-check.ts), so
// `each`, `with`, block params and `@root` are read as they are everywhere else. `sop validate`
// uses these; ./persona.ts compiles and renders. Kept apart so validating loads no template runtime.
import { checkTemplate, describeProblem } from '../../format/sop/template-check.js';
import { listColumns } from './types.js';

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
  return names.filter((n) => !have.has(n)).map((n) => `names column "${n}", which the source does not have (${listColumns(columns)})`);
}
