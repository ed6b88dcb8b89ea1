// `sop validate` (and every load of a SOP) checks each text the engine renders with Handlebars:
// component texts, environment prompts, begin queries, controller and summary prompts, sub-flow
// inputs, initial contents of memory files, and the inline templates overriding prompts/*.hbs. Each problem names the JSON
// pointer of the text: syntax errors, unknown helpers and partials, runaway partials, and
// variables the engine does not give that text ({{inputs.gaol}} when only "goal" is declared).
import { checkTemplate, describeProblem, type TemplateScope } from './template-check.js';
import { BASE_VARIABLES, TEMPLATE_VARIABLES } from './template-context.js';
import type { Diagnostic } from './diagnostics.js';
import { pointerOf } from './json-source.js';
import type { Sop, TemplateName } from './types.js';

type Path = Array<string | number>;

const MEMORY_INITIAL_VARIABLES = ['inputs', 'goal'] as const;

/** The texts of a SOP that are rendered as templates, with the variables each sees. */
export function templateTexts(sop: Sop): Array<{ path: Path; source: string; variables: readonly string[] }> {
  const out: Array<{ path: Path; source: string; variables: readonly string[] }> = [];
  const text = (path: Path, v: unknown, variables: readonly string[] = BASE_VARIABLES) => {
    if (typeof v === 'string') out.push({ path, source: v, variables });
  };
  const list = (path: Path, v: unknown) => {
    if (Array.isArray(v)) v.forEach((t, i) => text([...path, i], t));
    else text(path, v);
  };
  const prompts = (path: Path, p: unknown) => {
    if (!p || typeof p !== 'object') return;
    const o = p as Record<string, unknown>;
    text([...path, 'system_prompt'], o.system_prompt);
    text([...path, 'last_prompt'], o.last_prompt);
  };

  for (const [name, source] of Object.entries(sop.templates ?? {})) {
    if (Object.prototype.hasOwnProperty.call(TEMPLATE_VARIABLES, name))
      text(['templates', name], source, TEMPLATE_VARIABLES[name as TemplateName]);
  }
  prompts(['environment', 'summary'], sop.environment?.summary);
  const styled = new Set<string>(); // agents whose style is rendered by a style component
  for (const [stateName, state] of Object.entries(sop.states)) {
    const at = (...rest: Path) => ['states', stateName, ...rest];
    text(at('environment_prompt'), state.environment_prompt);
    text(at('observe'), state.observe, TEMPLATE_VARIABLES.population_observe); // a population state's view of a step
    text(at('begin_query'), state.begin_query);
    prompts(at('controller', 'judge'), state.controller?.judge);
    prompts(at('controller', 'speaker'), state.controller?.speaker);
    prompts(at('summary'), state.summary);
    for (const [role, comps] of Object.entries(state.components ?? {})) {
      const c = comps as Record<string, unknown>;
      const here = (...rest: Path) => at('components', role, ...rest);
      if (typeof c.style === 'string') text(here('style'), c.style);
      else if (c.style && typeof c.style === 'object') {
        const s = c.style as Record<string, unknown>;
        text(here('style', 'role'), s.role);
        text(here('style', 'style'), s.style);
      }
      if (c.style !== undefined && (typeof c.style === 'string' || (c.style as { style?: unknown }).style === undefined)) {
        for (const [agent, def] of Object.entries(sop.agents)) if (def.roles?.[stateName] === role) styled.add(agent);
      }
      for (const key of ['task', 'rule', 'system', 'last'] as const) text(here(key), c[key]);
      for (const key of ['demonstrations', 'cot'] as const) list(here(key), c[key]);
      if (sop.agents_v1) {
        // agents-v1: components that run in the Agents 1.0 prompt path only
        const custom = c.customize as { template?: unknown } | undefined;
        text(here('customize', 'template'), custom?.template);
        prompts(here('extract'), c.extract);
      }
    }
    for (const [command, def] of Object.entries(state.commands ?? {})) {
      if (def.executor !== 'sop') continue;
      const inputs = (def.settings as { inputs?: unknown } | undefined)?.inputs;
      if (inputs && typeof inputs === 'object') {
        for (const [name, v] of Object.entries(inputs)) text(at('commands', command, 'settings', 'inputs', name), v);
      }
    }
  }
  for (const agent of styled) text(['agents', agent, 'style'], sop.agents[agent]?.style);
  // initial contents of memory files are rendered with the inputs (src/features/actions/memory-initial.ts)
  for (const [name, v] of Object.entries(sop.memory ?? {})) text(['memory', name], v, MEMORY_INITIAL_VARIABLES);
  return out;
}

/** Why a variable of the engine is missing from this SOP's templates. */
function absentBecause(sop: Sop): Map<string, string> {
  const why = new Map<string, string>();
  const types = Object.values((sop.memory_types ?? {}) as Record<string, string>);
  if (!types.includes('task_board')) why.set('task_board', '"task_board" is given only to SOPs with a task_board in "memory_types"');
  if (!types.includes('world_model')) why.set('world_model', '"world_model" is given only to SOPs with a world_model in "memory_types"');
  // "mood" is there only while mood.enabled; templates test it with {{#if mood}}, so it is never refused.
  return why;
}

export function templateDiagnostics(sop: Sop): Diagnostic[] {
  const out: Diagnostic[] = [];
  const inputs = new Set(Object.keys(sop.inputs ?? {}));
  const memory = new Set([...Object.keys(sop.memory ?? {}), ...Object.keys(sop.memory_types ?? {}), 'logs']);
  const why = absentBecause(sop);
  const scopes = new Map<readonly string[], TemplateScope>();
  for (const t of templateTexts(sop)) {
    if (!t.source.includes('{{')) continue; // rendered as it is
    let scope = scopes.get(t.variables);
    if (!scope) {
      const roots = new Set(t.variables.filter((v) => !why.has(v)));
      const because = new Map([...why].filter(([name]) => t.variables.includes(name)));
      scope = { roots, inputs: roots.has('inputs') ? inputs : undefined, memory: roots.has('memory') ? memory : undefined, why: because };
      scopes.set(t.variables, scope);
    }
    const multiline = t.source.includes('\n');
    for (const p of checkTemplate(t.source, scope)) {
      out.push({ severity: 'error', pointer: pointerOf(t.path), message: describeProblem(p, multiline) });
    }
  }
  return out;
}

const readCache = new WeakMap<Sop, ReadonlySet<string>>();

/** The inputs some text of the SOP reads as a template (`{{inputs.NAME}}`, `{{goal}}`). */
export function inputsRead(sop: Sop): ReadonlySet<string> {
  let reads = readCache.get(sop);
  if (reads === undefined) {
    const found = new Set<string>();
    for (const t of templateTexts(sop)) if (t.source.includes('{{')) checkTemplate(t.source, { reads: found });
    reads = found;
    readCache.set(sop, reads);
  }
  return reads;
}
