// What a population visit's world starts from: its init context (the follow graph read from its
// file, an embedder) and its parameters (text rendered as templates, checked against the world's
// schema). Moved out of ./step.ts, which opens a visit with them.
import { EngineError } from '../../shared/errors.js';
import { renderText } from '../../core/prompt/templates.js';
import { LocalEmbedder } from '../../core/memory/local-embedder.js';
import { readEdgeListFile } from './worlds/graph-file.js';
import { resolveParams, type AnyWorld, type WorldInitContext } from './worlds/world.js';
import type { PopulationStateSpec } from './state-spec.js';
import { sourcePath } from './validate.js';
import { inputFilePath } from './input-files.js';

/** What a world's init needs beyond its parameters: the follow graph (an edge list read from its file), an embedder. */
export async function initContext(
  spec: PopulationStateSpec,
  baseDir: string,
  inputs: Readonly<Record<string, string>>,
  pointer: string,
): Promise<WorldInitContext> {
  let graph = spec.world.graph;
  const given = (graph as { file?: unknown } | undefined)?.file;
  const file = typeof given === 'string' ? inputFilePath(given, inputs, `${pointer}/world/graph/file`) : given;
  if (typeof file === 'string') {
    const { file: _f, ...rest } = graph as Record<string, unknown>;
    graph = { ...rest, edges: await readEdgeListFile(sourcePath(file, baseDir), file) };
  }
  const embedder = new LocalEmbedder();
  return { ...(graph !== undefined ? { graph } : {}), embed: (text: string) => embedder.embedOne(text, false) };
}

/** The world's parameters with their text rendered as templates (a seed post's text may name an input). */
export function renderStrings(value: unknown, context: object, where: string): unknown {
  if (typeof value === 'string') return value.includes('{{') ? renderText(value, context, where) : value;
  if (Array.isArray(value)) return value.map((v, i) => renderStrings(v, context, `${where}/${i}`));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, renderStrings(v, context, `${where}/${k}`)]));
  return value;
}

export function resolveWorldParams(world: AnyWorld, params: unknown, pointer: string): unknown {
  const r = resolveParams(world, params ?? {});
  if (r.ok) return r.params;
  const p = r.problems[0]!;
  throw new EngineError(`${pointer}${p.pointer}: ${p.message}`, 'POPULATION');
}
