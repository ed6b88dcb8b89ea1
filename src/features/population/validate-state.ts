// `sop validate`'s checks of a SOP's population states, as diagnostics at JSON pointers: the
// population (its data file read up to its first row), the world, its action menu and
// resolution, every expression, the rule policies, the interventions, and
// that the state has a way on (next_states["1"], taken after max_steps).
import { dirname } from 'node:path';
import type { Diagnostic } from '../../format/sop/diagnostics.js';
import type { Sop } from '../../format/sop/types.js';
import { compileExpression, type ExpressionOptions } from './worlds/expr.js';
import { edgeListFileProblem } from './worlds/graph-file.js';
import { BUILT_IN_WORLDS, defaultWorlds, type WorldRegistry } from './worlds/registry.js';
import { validateResolution, validateWorldSpec } from './worlds/validate.js';
import { actionNames, checkActionArgs, resolveParams, worldTools } from './worlds/world.js';
import { ruleDiagnostics } from './validate-rules.js';
import { RULE_SCOPE_NAMES } from './rule-program.js';
import { metricNames as registeredMetrics, METRIC_EXPRESSION_OPTIONS } from './metrics.js';
import { rulePolicyNames } from './rules.js';
import { isPopulationState, populationStateSpec } from './state-spec.js';
import { checkPopulationSpec, shapeProblem, sourcePath } from './validate.js';
import { inputDefaults, isTemplatedPath, renderPathTemplate } from '../../format/sop/file-template.js';
import {
  activationScope,
  agentScope,
  metricScopeOf,
  nameProblems,
  priorityScope,
  transitionScope,
  type NameScope,
} from './validate-names.js';

const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** The settings only a population state reads (schemas/sop.schema.json). */
const POPULATION_ONLY = [
  'world',
  'actions',
  'resolution',
  'activation',
  'observe',
  'cognition',
  'max_steps',
  'minutes_per_step',
  'start_time',
  'agent_memory',
  'agent_state',
  'metrics',
  'interventions',
  'llm_mode',
  'straggler',
  'transitions',
] as const;

/** Problems of every population state of a SOP read from `file`, and population settings on other states. */
export function populationDiagnostics(sop: Sop, file: string | undefined, worlds: WorldRegistry = defaultWorlds()): Diagnostic[] {
  const out: Diagnostic[] = [];
  const baseDir = file ? dirname(file) : process.cwd();
  // A run's journaled document (resume, fork) was checked with its data files when the run
  // started; they are relative to the SOP file, not the journal, and are read again when a visit starts.
  const journaled = file?.endsWith('#/document') === true;
  const defaults = inputDefaults(sop);
  for (const [name, def] of Object.entries(sop.states)) {
    if (!isPopulationState(def)) {
      // a population state's settings on a state without `population` would be silently ignored
      for (const key of POPULATION_ONLY)
        if ((def as Record<string, unknown>)[key] !== undefined)
          out.push({
            severity: 'error',
            pointer: `/states/${esc(name)}/${key}`,
            message: `"${key}" is a population state's setting, and this state has no "population" (docs/population.md)`,
          });
      continue;
    }
    const at = `/states/${esc(name)}`;
    const err = (pointer: string, message: string) => out.push({ severity: 'error', pointer, message });
    const d = def as Record<string, unknown>;
    let columns: string[] | undefined;
    if (!journaled) {
      // a data file that names inputs is read as the inputs' defaults name it; without them, at the run's start
      const population = withDefaultFile(d.population, defaults);
      if (population === undefined) {
        const shape = shapeProblem(d.population);
        if (shape) err(`${at}/population${shape.pointer}`, shape.message);
      } else {
        const checked = checkPopulationSpec(population, baseDir, `${at}/population`);
        out.push(...checked.diagnostics);
        columns = checked.columns;
      }
    }
    if (d.world === undefined) {
      err(at, `a population state needs a "world" (social, market, board, or one added with defineWorld)`);
      continue;
    }
    const worldProblems = validateWorldSpec(d.world, `${at}/world`, {
      ...(d.actions !== undefined ? { actions: d.actions, actionsPointer: `${at}/actions` } : {}),
      worlds,
      ...(journaled
        ? {}
        : {
            fileProblem: (f: string) => {
              const r = isTemplatedPath(f) ? renderPathTemplate(f, defaults) : { path: f };
              return 'path' in r ? edgeListFileProblem(sourcePath(r.path, baseDir), f) : undefined;
            },
          }),
    });
    out.push(...worldProblems);
    if (d.resolution !== undefined) {
      const resolution = validateResolution(d.resolution, `${at}/resolution`);
      out.push(...resolution);
      const r = d.resolution as { type?: unknown; expr?: unknown };
      if (resolution.length === 0 && r.type === 'priority' && typeof r.expr === 'string' && columns)
        out.push(...nameProblems(`${at}/resolution/expr`, r.expr, priorityScope(columns)));
    }
    if (!def.next_states?.['1']) err(at, `a population state needs next_states["1"], the state its run goes to after max_steps`);
    if (worldProblems.length > 0) continue;
    const spec = populationStateSpec(def);
    const world = worlds.get(spec.world.type)!;
    const resolvedParams = resolveParams(world, spec.world.params ?? {});
    const offered = resolvedParams.ok ? worldTools(world, resolvedParams.params).map((t) => t.name) : actionNames(world);
    const menu = spec.actions ?? offered;
    // rules as data (./validate-rules.ts): the agent state and the cases; the state's variables are
    // seen by its activation and metrics, and with rules the metrics see what a case sees
    out.push(...ruleDiagnostics({ sop, spec, at, def: d, columns, menu }));
    const vars = Object.keys(spec.agentState);
    const usesRules = vars.length > 0 || spec.cognition.some((c) => c.cases);
    const plus = (scope: NameScope, names: readonly string[]): NameScope =>
      names.length === 0
        ? scope
        : { ...scope, names: [...new Set([...scope.names, ...names])], describe: `${scope.describe}, the agent state` };
    // each expression compiles, and names only what it sees (./validate-names.ts)
    const agents = columns ? agentScope(columns) : undefined;
    const expr = (pointer: string, source: string | undefined, scope?: NameScope, opts?: ExpressionOptions) => {
      if (source === undefined) return;
      try {
        compileExpression(source, opts);
      } catch (e) {
        err(pointer, (e as Error).message);
        return;
      }
      out.push(...nameProblems(pointer, source, scope, opts));
    };
    if ('expr' in spec.activation) expr(`${at}/activation/expr`, spec.activation.expr, columns && plus(activationScope(columns), vars));
    const cognitionAt = Array.isArray(d.cognition) ? (i: number) => `${at}/cognition/${i}` : () => `${at}/cognition`;
    spec.cognition.forEach((c, i) => {
      expr(`${cognitionAt(i)}/where`, c.where, agents);
      if (c.tier === 'rule' && c.policy === undefined && c.cases === undefined)
        err(cognitionAt(i), `a rule tier needs a "policy" (${rulePolicyNames().join(', ')}) or "cases" (docs/population.md#rules-as-data)`);
      if (c.policy !== undefined && !rulePolicyNames().includes(c.policy))
        err(`${cognitionAt(i)}/policy`, `unknown rule policy "${c.policy}" (policies: ${rulePolicyNames().join(', ')})`);
    });
    for (const [m, spec_] of Object.entries(spec.metrics)) {
      const seen = columns && plus(metricScopeOf(columns, spec_.over), usesRules ? [...vars, ...RULE_SCOPE_NAMES] : []);
      const opts = usesRules ? METRIC_EXPRESSION_OPTIONS : undefined;
      expr(`${at}/metrics/${esc(m)}/of`, spec_.of, seen, opts);
      expr(`${at}/metrics/${esc(m)}/where`, spec_.where, seen, opts);
      if (spec_.reducer === 'custom' && !registeredMetrics().includes(spec_.fn ?? ''))
        err(
          `${at}/metrics/${esc(m)}${spec_.fn === undefined ? '' : '/fn'}`,
          spec_.fn === undefined
            ? 'a custom metric needs "fn", the name a plugin registered it under'
            : `no metric "${spec_.fn}" is registered (registered: ${registeredMetrics().join(', ') || 'none'}; a plugin adds one with registerMetric)`,
        );
      if ((spec_.reducer === 'sum' || spec_.reducer === 'mean' || spec_.reducer === 'histogram') && spec_.of === undefined)
        err(`${at}/metrics/${esc(m)}`, `a ${spec_.reducer} metric needs "of"`);
    }
    const metricNames = transitionScope(world, BUILT_IN_WORLDS.includes(world), spec.world.params, spec.metrics);
    spec.transitions.forEach((t, i) => expr(`${at}/transitions/${i}/when`, t.when, metricNames));
    spec.interventions.forEach((iv, i) => {
      const ivAt = `${at}/interventions/${i}`;
      if (!iv.act && !iv.set && !iv.survey) err(ivAt, 'an intervention needs "act", "set" or "survey"');
      if (iv.at > spec.maxSteps) err(`${ivAt}/at`, `step ${iv.at} is after max_steps (${spec.maxSteps}), so it never happens`);
      if (iv.act && !offered.includes(iv.act.name))
        err(`${ivAt}/act/name`, `"${iv.act.name}" is not an action of world "${world.name}" (its actions: ${offered.join(', ')})`);
      if (iv.set) {
        const merged = resolveParams(world, { ...(spec.world.params ?? {}), ...iv.set });
        if (!merged.ok) for (const p of merged.problems) err(`${ivAt}/set${p.pointer}`, p.message);
      }
      if (iv.survey) expr(`${ivAt}/survey/where`, iv.survey.where, agents);
    });
    if (menu.length === 0) err(`${at}/actions`, 'the action menu is empty');
    const late = spec.straggler?.default;
    if (late && late.name !== 'idle') {
      if (!menu.includes(late.name))
        err(`${at}/straggler/default/name`, `"${late.name}" is not in the state's action menu (${menu.join(', ')})`);
      else {
        const problem = checkActionArgs(world, { agent: '', name: late.name, args: late.args, seq: 0 });
        if (problem) err(`${at}/straggler/default/args`, problem);
      }
    }
    if (spec.straggler && spec.straggler.then !== 'default' && late)
      err(`${at}/straggler/default`, `a default action is only taken with "then": "default" (here "${spec.straggler.then}")`);
    // the `observe` template is checked with every other SOP text (src/format/sop/check-templates.ts)
  }
  return out;
}

/** A population spec whose data file names inputs, with the path the inputs' defaults give it (undefined: some input has none). */
function withDefaultFile(population: unknown, defaults: Readonly<Record<string, string>>): unknown {
  const source = (population as { source?: { file?: unknown } } | undefined)?.source;
  const file = source?.file;
  if (typeof file !== 'string' || !isTemplatedPath(file)) return population;
  const r = renderPathTemplate(file, defaults);
  if ('problem' in r) return undefined;
  return { ...(population as object), source: { ...source, file: r.path } };
}
