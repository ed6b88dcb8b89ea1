// Checks of a population state's `world` (and its `actions` list and `resolution`) for
// `sop validate`: each problem is one diagnostic at a JSON pointer, e.g.
//   /states/feed/actions/2: "retweet" is not an action of world "social" (its actions: post, like, repost, follow, idle)
import type { Diagnostic } from '../../../format/sop/diagnostics.js';
import { compileExpression } from './expr.js';
import { defaultWorlds, type WorldRegistry } from './registry.js';
import { resolutionSchema, worldsSchemaDocument } from './schema.js';
import { schemaErrors } from './schema-check.js';
import { actionNames, resolveParams, worldTools } from './world.js';

const graphWorlds = (worlds: WorldRegistry) => worlds.names().filter((n) => n === 'social' || worlds.get(n)!.graph);

export interface WorldCheckOptions {
  /** The state's `actions` list (names of the world's actions it offers) and its pointer. */
  actions?: unknown;
  actionsPointer?: string;
  /** The worlds a SOP may name (default: the built-ins). */
  worlds?: WorldRegistry;
  /** Why a file named by the spec (the graph's edge list, path as written) cannot be read; undefined when it can. */
  fileProblem?: (file: string) => string | undefined;
}

let specSchemaMemo: Record<string, unknown> | undefined;
/** The document with `$ref` to the world definition, built once (ajv compiles it once, by identity). */
const specSchema = () => {
  if (!specSchemaMemo) {
    const { $id: _id, ...doc } = worldsSchemaDocument();
    specSchemaMemo = { ...doc, $ref: '#/definitions/world' };
  }
  return specSchemaMemo;
};
const error = (pointer: string, message: string): Diagnostic => ({ severity: 'error', pointer, message });

/** Problems of a `world` spec at `pointer` (e.g. "/states/feed/world"). */
export function validateWorldSpec(spec: unknown, pointer: string, opts: WorldCheckOptions = {}): Diagnostic[] {
  const worlds = opts.worlds ?? defaultWorlds();
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  const push = (d: Diagnostic) => {
    const key = `${d.pointer}\u0000${d.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(d);
    }
  };
  for (const p of schemaErrors(specSchema(), spec)) push(error(pointer + p.pointer, p.message));
  if (out.length > 0 || !spec || typeof spec !== 'object') return out;
  const { type, params, graph } = spec as { type: string; params?: unknown; graph?: { file?: unknown } };
  const world = worlds.get(type);
  if (!world) {
    push(error(`${pointer}/type`, `unknown world "${type}" (worlds: ${worlds.names().join(', ')})`));
    return out;
  }
  const resolved = resolveParams(world, params ?? {});
  if (!resolved.ok) for (const p of resolved.problems) push(error(`${pointer}/params${p.pointer}`, p.message));
  if (graph !== undefined && type !== 'social' && !world.graph)
    push(error(`${pointer}/graph`, `world "${type}" takes no graph (${graphWorlds(worlds).join(', ')} do)`));
  const problem = graph && typeof graph.file === 'string' ? opts.fileProblem?.(graph.file) : undefined;
  if (problem) push(error(`${pointer}/graph/file`, problem));
  if (opts.actions !== undefined) {
    const at = opts.actionsPointer ?? `${pointer.replace(/\/world$/, '')}/actions`;
    const names = resolved.ok ? worldTools(world, resolved.params).map((a) => a.name) : actionNames(world);
    if (!Array.isArray(opts.actions)) push(error(at, 'must be a list of action names'));
    else
      opts.actions.forEach((name, i) => {
        if (typeof name !== 'string' || !names.includes(name))
          push(error(`${at}/${i}`, `${JSON.stringify(name)} is not an action of world "${world.name}" (its actions: ${names.join(', ')})`));
      });
  }
  return out;
}

/** Problems of a `resolution` policy at `pointer` (its shape, and that a priority expression parses). */
export function validateResolution(spec: unknown, pointer: string): Diagnostic[] {
  const problems = schemaErrors(resolutionSchema, spec).map((p) => error(pointer + p.pointer, p.message));
  if (problems.length > 0) return problems;
  const { type, expr } = spec as { type: string; expr?: string };
  if (type === 'priority' && typeof expr === 'string') {
    try {
      compileExpression(expr);
    } catch (e) {
      return [error(`${pointer}/expr`, (e as Error).message)];
    }
  }
  return [];
}
