// A population state's declared metrics (docs/population.md#metrics): reducers over the step's
// applied actions or over every agent, next to the world's built-in metrics. An expression sees
// the agent's attributes by name, `id`, and for actions `action` (name, args), `ok` and `output`;
// with rules as data, also the agent's state and what a rule expression sees (neighbours...).
import { EngineError } from '../../shared/errors.js';
import { compileExpression, type CompiledExpression } from './worlds/expr.js';
import type { Metrics } from './worlds/world.js';
import type { PopulationAction } from '../../core/runtime/events.js';
import type { Population } from './population.js';
import type { MetricSpec } from './state-spec.js';
import { NEIGHBOUR_METHODS } from './agent-state.js';

/** A metric may read neighbour aggregates (rules as data); it draws nothing. */
export const METRIC_EXPRESSION_OPTIONS = { methods: { neighbours: NEIGHBOUR_METHODS } };

/** A metric a program (a plugin) computes itself: from the step's actions and every agent's scope. */
export type MetricFunction = (ctx: {
  step: number;
  actions: readonly PopulationAction[];
  /** Each agent as a metric over agents sees it (attributes, id, and its state with rules as data). */
  agents: () => Iterable<Record<string, unknown>>;
}) => number | null;

const CUSTOM = new Map<string, MetricFunction>();

/** Adds a metric a SOP can declare as {"reducer": "custom", "fn": NAME} (a name already taken is an error). */
export function registerMetric(name: string, fn: MetricFunction): void {
  if (CUSTOM.has(name)) throw new EngineError(`a metric named "${name}" is already registered`, 'POPULATION');
  CUSTOM.set(name, fn);
}

/** Names of the registered metrics. */
export const metricNames = (): string[] => [...CUSTOM.keys()].sort();

interface Compiled {
  name: string;
  spec: MetricSpec;
  of?: CompiledExpression;
  where?: CompiledExpression;
}

export class DeclaredMetrics {
  private readonly list: Compiled[];

  constructor(specs: Record<string, MetricSpec>) {
    this.list = Object.entries(specs).map(([name, spec]) => ({
      name,
      spec,
      ...(spec.of ? { of: compileExpression(spec.of, METRIC_EXPRESSION_OPTIONS) } : {}),
      ...(spec.where ? { where: compileExpression(spec.where, METRIC_EXPRESSION_OPTIONS) } : {}),
    }));
  }

  /** The declared metrics after a step (a metric not due at this step is left out). */
  compute(step: number, actions: readonly PopulationAction[], pop: Population, scopeOf?: (i: number) => Record<string, unknown>): Metrics {
    const out: Metrics = {};
    for (const m of this.list) {
      if (step % (m.spec.every ?? 1) !== 0) continue;
      if (m.spec.reducer === 'custom') {
        const fn = CUSTOM.get(m.spec.fn ?? '');
        if (!fn) throw new EngineError(`metric "${m.name}": no metric "${m.spec.fn ?? ''}" is registered`, 'POPULATION');
        const value = fn({ step, actions, agents: () => agentScopes(pop, scopeOf) });
        out[m.name] = typeof value === 'number' && Number.isFinite(value) ? value : null;
        continue;
      }
      const scopes = m.spec.over === 'agents' ? agentScopes(pop, scopeOf) : actionScopes(actions, pop, scopeOf);
      reduce(m, scopes, out);
    }
    return out;
  }
}

function* agentScopes(pop: Population, scopeOf?: (i: number) => Record<string, unknown>): Iterable<Record<string, unknown>> {
  for (let i = 0; i < pop.size; i++) yield scopeOf ? scopeOf(i) : { ...pop.row(i), id: pop.ids[i]! };
}

function* actionScopes(
  actions: readonly PopulationAction[],
  pop: Population,
  scopeOf?: (i: number) => Record<string, unknown>,
): Iterable<Record<string, unknown>> {
  for (const a of actions) {
    const i = pop.indexOf(a.agent);
    const attrs = i >= 0 ? (scopeOf ? scopeOf(i) : pop.row(i)) : {};
    yield { ...attrs, id: a.agent, action: { name: a.name, args: a.args }, ok: a.ok, output: a.output };
  }
}

function reduce(m: Compiled, scopes: Iterable<Record<string, unknown>>, out: Metrics): void {
  let all = 0;
  let matched = 0;
  let sum = 0;
  const bins = new Map<string, number>();
  for (const scope of scopes) {
    all++;
    if (m.where && m.where.evaluate(scope) !== true) continue;
    matched++;
    if (m.spec.reducer === 'histogram') {
      const key = String(m.of ? m.of.evaluate(scope) : '');
      bins.set(key, (bins.get(key) ?? 0) + 1);
    } else if (m.of) {
      const v = m.of.number(scope);
      if (!Number.isNaN(v)) sum += v;
    }
  }
  switch (m.spec.reducer) {
    case 'count':
      out[m.name] = matched;
      break;
    case 'sum':
      out[m.name] = sum;
      break;
    case 'mean':
      out[m.name] = matched === 0 ? null : sum / matched;
      break;
    case 'share':
      out[m.name] = all === 0 ? null : matched / all;
      break;
    case 'histogram':
      for (const [k, n] of [...bins].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) out[`${m.name}.${k}`] = n;
      break;
  }
}

/** Metric names as an expression sees them: dots and dashes become underscores (cascade.news.size -> cascade_news_size). */
export function metricScope(metrics: Metrics): Record<string, number | null> {
  const scope: Record<string, number | null> = {};
  for (const [k, v] of Object.entries(metrics)) scope[k.replace(/[^A-Za-z0-9_]/g, '_')] = v;
  return scope;
}
