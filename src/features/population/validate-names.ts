// `sop validate`'s check of the names each expression of a population state reads, against what
// that expression sees when the run evaluates it (docs/population.md#expressions):
//   activation expr             the agent's columns, id, step, hour
//   cognition / survey where    the agent's columns, id
//   metric of / where           the agent's columns, id; over actions (the default) also action, ok, output
//   resolution priority expr    the agent's columns, agent (columns and id), action
//   transition when             the metrics: the world's built-ins and the state's declared ones
// A name it cannot see fails the run after its first step's calls are paid, so it is refused here,
// at the expression's JSON pointer, with the closest names. A world added with defineWorld may make
// its metrics as it goes, so a transition over one gets a warning, not an error.
import type { Diagnostic } from '../../format/sop/diagnostics.js';
import { closestName, closestNames } from '../../shared/util/suggest.js';
import { expressionNames, ExpressionError, type ExpressionOptions } from './worlds/expr.js';
import { seededRng } from './worlds/seed.js';
import { resolveParams, type AnyWorld } from './worlds/world.js';

export interface NameScope {
  /** Free names it sees. */
  names: readonly string[];
  /** Free names that are objects, with the keys they have (`action`: name, args). */
  objects?: Readonly<Record<string, readonly string[]>>;
  /** Prefixes of names that exist only once the run has data (a histogram's bins: `by_party_`). */
  prefixes?: readonly string[];
  /** What it sees, in words, for the message. */
  describe: string;
  /** Unknown names are a warning (a world whose metrics are not known beforehand). */
  warnOnly?: boolean;
}

const ACTION_KEYS = ['name', 'args'] as const;
const TIME = ['step', 'hour'] as const;

/** What an expression over one agent sees. */
export function agentScope(columns: readonly string[], extra: readonly string[] = []): NameScope {
  const names = [...new Set([...columns, 'id', ...extra])];
  return {
    names,
    objects: {
      ...(extra.includes('action') ? { action: ACTION_KEYS } : {}),
      ...(extra.includes('agent') ? { agent: [...new Set([...columns, 'id'])] } : {}),
    },
    describe: `the source's columns and ${['id', ...extra].join(', ')}`,
  };
}

export const activationScope = (columns: readonly string[]) => agentScope(columns, [...TIME]);
export const metricScopeOf = (columns: readonly string[], over: 'actions' | 'agents' | undefined) =>
  agentScope(columns, over === 'agents' ? [] : ['action', 'ok', 'output']);
export const priorityScope = (columns: readonly string[]) => agentScope(columns, ['agent', 'action']);

const sanitise = (k: string) => k.replace(/[^A-Za-z0-9_]/g, '_');

/**
 * The metric names a transition sees: the world's (from its state at the start, before any step)
 * and the declared ones (a histogram's bins by prefix); undefined when the world cannot say.
 */
export function transitionScope(
  world: AnyWorld,
  builtIn: boolean,
  params: unknown,
  declared: Readonly<Record<string, { reducer: string }>>,
): NameScope {
  let worldNames: string[] = [];
  try {
    const resolved = resolveParams(world, params ?? {});
    if (resolved.ok) {
      const state: unknown = world.init(resolved.params, [], seededRng(0, 'validate'), {
        graph: { edges: [] },
        embed: () => new Float32Array(1),
      });
      worldNames = Object.keys(world.metrics(state, 0)).map(sanitise);
    }
  } catch {
    worldNames = []; // a world that needs agents to start: its metrics are not known here
  }
  const names = [...worldNames];
  const prefixes: string[] = [];
  for (const [name, m] of Object.entries(declared)) {
    if (m.reducer === 'histogram') prefixes.push(`${sanitise(name)}_`);
    else names.push(sanitise(name));
  }
  return {
    names: [...new Set(names)],
    prefixes,
    describe: `the metrics (world "${world.name}"'s and the state's declared ones, dots as _)`,
    warnOnly: !builtIn || worldNames.length === 0,
  };
}

const shown = (names: readonly string[], max = 12) =>
  names.length <= max ? names.join(', ') : `${names.slice(0, max).join(', ')}, ... (${names.length - max} more)`;

/** The problems of the names `source` reads, at `pointer` (none when it does not parse: that is told by the compile check). */
export function nameProblems(
  pointer: string,
  source: string | undefined,
  scope: NameScope | undefined,
  opts?: ExpressionOptions,
): Diagnostic[] {
  if (source === undefined || scope === undefined) return [];
  let used;
  try {
    used = expressionNames(source, opts);
  } catch (e) {
    if (e instanceof ExpressionError) return [];
    throw e;
  }
  const out: Diagnostic[] = [];
  const severity = scope.warnOnly ? 'warning' : 'error';
  for (const name of used.roots) {
    if (scope.names.includes(name) || scope.prefixes?.some((p) => name.startsWith(p))) continue;
    const close = closestName(name, scope.names);
    const near = closestNames(name, scope.names, 3);
    out.push({
      severity,
      pointer,
      message:
        `unknown name "${name}" in "${source.length > 120 ? `${source.slice(0, 120)}...` : source}"` +
        `${close ? `; did you mean "${close}"?` : ''} (it sees ${scope.describe}${near.length ? `; the closest: ${near.join(', ')}` : ''}; all: ${shown(scope.names)})`,
    });
  }
  for (const { object, key } of used.members) {
    const keys = scope.objects?.[object];
    if (!keys || keys.includes(key) || !scope.names.includes(object)) continue;
    const close = closestName(key, keys);
    out.push({
      severity,
      pointer,
      message: `"${object}" has no "${key}"${close ? `; did you mean "${object}.${close}"?` : ''} (${object} has ${shown(keys)})`,
    });
  }
  return out;
}
