// `sop validate`'s checks of rules as data (docs/population.md#rules-as-data) in a population
// state: the agent state's variables and initial values, the rule cases (their actions in the
// menu, the variables they set), and every name their expressions read, each at its JSON pointer:
// a column of the population, a state variable, a name every rule expression sees (`step`,
// `neighbours`...), a declared input (`inputs.theta`), and what a neighbour aggregate reads
// (`neighbours.share('adopted')`). The state's other expressions are checked by ./validate-names.ts.
import type { Diagnostic } from '../../format/sop/diagnostics.js';
import type { Sop } from '../../format/sop/types.js';
import { compileExpression, type CompiledExpression, type ExpressionOptions } from './worlds/expr.js';
import { DRAW_FUNCTIONS, RULE_EXPRESSION_OPTIONS } from './agent-state.js';
import { RULE_SCOPE_NAMES } from './rule-program.js';
import type { PopulationStateSpec } from './state-spec.js';

const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
const list = (names: Iterable<string>) => [...names].sort().join(', ');

export interface RuleCheckContext {
  sop: Sop;
  spec: PopulationStateSpec;
  /** The state's pointer, e.g. /states/spread. */
  at: string;
  /** The raw state (for pointers: cognition as one entry or a list). */
  def: Record<string, unknown>;
  columns: string[] | undefined;
  /** The state's action menu. */
  menu: readonly string[];
}

export function ruleDiagnostics(c: RuleCheckContext): Diagnostic[] {
  const out: Diagnostic[] = [];
  const err = (pointer: string, message: string) => out.push({ severity: 'error', pointer, message });
  const { spec, at, columns, sop } = c;
  const vars = Object.keys(spec.agentState);
  const columnSet = new Set(columns ?? []);
  const inputs = new Set(Object.keys(sop.inputs ?? {}));
  /** What an aggregate over neighbours may read of them. */
  const readable = new Set([...vars, 'action', 'id', ...columnSet]);

  /** Compiles `source` at `pointer`, and checks every name it reads against `known`. */
  const check = (
    pointer: string,
    source: string | undefined,
    known: Set<string>,
    opts: ExpressionOptions = {},
  ): CompiledExpression | undefined => {
    if (source === undefined) return undefined;
    let e: CompiledExpression;
    try {
      e = compileExpression(source, opts);
    } catch (x) {
      err(pointer, (x as Error).message);
      return undefined;
    }
    for (const name of e.uses.names)
      // without the columns (a journaled document, an unreadable file), a name not known may be a column
      if (!known.has(name) && columns !== undefined)
        err(pointer, `"${source}" reads "${name}", which is not a column, a state variable or a name it sees here (${list(known)})`);
    for (const m of e.uses.members)
      if (m.object === 'inputs' && !inputs.has(m.name))
        err(pointer, `"${source}" reads inputs.${m.name}, which the SOP does not declare (inputs: ${list(inputs) || 'none'})`);
    for (const call of e.uses.calls) {
      if (call.object !== 'neighbours' || call.args.length === 0) continue;
      const name = call.args[0];
      if (typeof name !== 'string')
        err(pointer, `"${source}": neighbours.${call.method}'s first argument is the name read, in quotes ('adopted')`);
      else if (columns !== undefined && !readable.has(name))
        err(
          pointer,
          `"${source}": neighbours.${call.method}('${name}') reads "${name}", which is not a column, a state variable, 'action' or 'id' (${list(readable)})`,
        );
    }
    return e;
  };
  const base = new Set([...columnSet, 'id']);
  // agent state: names free, initial values read earlier variables
  const earlier = new Set<string>();
  for (const name of vars) {
    const p = `${at}/agent_state/${esc(name)}`;
    if (columnSet.has(name)) err(p, `"${name}" is a column of the population too; name the state variable otherwise`);
    if ((RULE_SCOPE_NAMES as readonly string[]).includes(name) || (DRAW_FUNCTIONS as readonly string[]).includes(name))
      err(p, `"${name}" is a name every rule expression sees (${list(RULE_SCOPE_NAMES)}); name the state variable otherwise`);
    check(`${p}/expr`, spec.agentState[name]!.expr, new Set([...base, ...earlier, 'inputs']), { functions: DRAW_FUNCTIONS });
    earlier.add(name);
  }
  const ruleKnown = new Set([...base, ...vars, ...RULE_SCOPE_NAMES]);
  const cognitionAt = Array.isArray(c.def.cognition) ? (i: number) => `${at}/cognition/${i}` : () => `${at}/cognition`;
  spec.cognition.forEach((entry, i) => {
    const p = cognitionAt(i);
    if (!entry.cases) return;
    if (entry.tier !== 'rule') err(`${p}/cases`, `only a rule tier follows cases (this one is "${entry.tier}")`);
    if (entry.policy !== undefined) err(`${p}/policy`, 'a rule tier follows either a named policy or its cases, not both');
    entry.cases.forEach((rc, k) => {
      const cp = `${p}/cases/${k}`;
      check(`${cp}/when`, rc.when, ruleKnown, RULE_EXPRESSION_OPTIONS);
      if (rc.do !== undefined && !c.menu.includes(rc.do))
        err(`${cp}/do`, `"${rc.do}" is not in the state's action menu (${c.menu.join(', ')})`);
      for (const [k2, v] of Object.entries(rc.args ?? {}))
        if (typeof v === 'string') check(`${cp}/args/${esc(k2)}`, v, ruleKnown, RULE_EXPRESSION_OPTIONS);
      for (const [k2, v] of Object.entries(rc.set ?? {})) {
        if (!vars.includes(k2))
          err(`${cp}/set/${esc(k2)}`, `"${k2}" is not a state variable (agent_state: ${list(vars) || 'none declared'})`);
        if (typeof v === 'string') check(`${cp}/set/${esc(k2)}`, v, ruleKnown, RULE_EXPRESSION_OPTIONS);
      }
    });
  });
  return out;
}
