// The follow graph of the social world: a graphology DirectedGraph whose nodes are agent ids
// and whose edge a -> b means "a follows b". It comes from an edge list (pairs of ids, inline or
// read from a CSV/JSON file by ./graph-file.ts) or from a seeded generator: Erdos-Renyi and
// clusters from graphology-generators, Barabasi-Albert and Watts-Strogatz (which that package
// lacks) built here on graphology with the same seeded generator.
import type { DirectedGraph } from 'graphology';
import { lazyRequire } from '../../../shared/util/lazy-require.js';
import { EngineError } from '../../../shared/errors.js';
import type { Rng } from '../../../core/runtime/rng.js';
import { seededRng } from './seed.js';
import { describeJsonProblem } from '../../../shared/util/json-syntax.js';

const graphology = lazyRequire<typeof import('graphology')>('graphology');
const random = lazyRequire<typeof import('graphology-generators/random/index.js')>('graphology-generators/random/index.js');

export type Edge = readonly [follower: string, followee: string];

export type GraphModel =
  | { model: 'erdos_renyi'; p?: number; mean_degree?: number; seed: number }
  | { model: 'barabasi_albert'; m: number; seed: number }
  | { model: 'watts_strogatz'; k: number; beta: number; seed: number }
  | { model: 'clusters'; clusters: number; mean_degree: number; density?: number; seed: number };

export type GraphSpec =
  | { edges: ReadonlyArray<readonly [string, string]>; reciprocal?: boolean }
  | { file: string; reciprocal?: boolean }
  | { generate: GraphModel; reciprocal?: boolean };

export class GraphError extends EngineError {
  constructor(message: string) {
    super(message, 'WORLD_GRAPH');
    this.name = 'GraphError';
  }
}

const rngFn = (rng: Rng) => () => rng.next();

/** Edges between indices 0..n-1 from a generator model, deterministic for its seed. */
function generatedEdges(model: GraphModel, n: number): Array<[number, number]> {
  const rng = seededRng(model.seed, 'graph', model.model);
  const out: Array<[number, number]> = [];
  if (n < 2) return out;
  switch (model.model) {
    case 'erdos_renyi': {
      const p = model.p ?? Math.min(1, (model.mean_degree ?? 0) / (n - 1));
      const g = random().erdosRenyi.sparse(graphology().DirectedGraph, { order: n, probability: p, rng: rngFn(rng) });
      g.forEachEdge((_e: string, _a: unknown, s: string, t: string) => out.push([Number(s), Number(t)]));
      return out;
    }
    case 'clusters': {
      const size = Math.round((model.mean_degree * n) / 2);
      const g = random().clusters(graphology().DirectedGraph, {
        order: n,
        size,
        clusters: model.clusters,
        clusterDensity: model.density ?? 0.5,
        rng: rngFn(rng),
      });
      g.forEachEdge((_e: string, _a: unknown, s: string, t: string) => out.push([Number(s), Number(t)]));
      return out;
    }
    case 'barabasi_albert': {
      // Each new node follows m distinct earlier nodes, chosen in proportion to their degree.
      const m = Math.max(1, Math.min(model.m, n - 1));
      const repeated: number[] = [];
      for (let i = 1; i < n; i++) {
        const targets = new Set<number>();
        const want = Math.min(m, i);
        while (targets.size < want) {
          const t =
            repeated.length === 0 || rng.next() < want / (repeated.length + want)
              ? Math.floor(rng.next() * i)
              : repeated[Math.floor(rng.next() * repeated.length)]!;
          targets.add(t);
        }
        for (const t of [...targets].sort((a, b) => a - b)) {
          out.push([i, t]);
          repeated.push(t, i);
        }
      }
      return out;
    }
    case 'watts_strogatz': {
      // A ring where each node follows its k nearest (k/2 each side), each edge rewired with probability beta.
      const half = Math.max(1, Math.floor(model.k / 2));
      const follows = Array.from({ length: n }, () => new Set<number>());
      for (let i = 0; i < n; i++)
        for (let d = 1; d <= half; d++) for (const j of [(i + d) % n, (i - d + n) % n]) if (j !== i) follows[i]!.add(j);
      for (let i = 0; i < n; i++) {
        for (const j of [...follows[i]!].sort((a, b) => a - b)) {
          if (rng.next() >= model.beta || follows[i]!.size >= n - 1) continue;
          let t = Math.floor(rng.next() * n);
          while (t === i || follows[i]!.has(t)) t = Math.floor(rng.next() * n);
          follows[i]!.delete(j);
          follows[i]!.add(t);
        }
      }
      follows.forEach((set, i) => [...set].sort((a, b) => a - b).forEach((j) => out.push([i, j])));
      return out;
    }
  }
}

export interface FollowGraphBuild {
  graph: DirectedGraph;
  /** Edges of an edge list naming an agent that is not in the population (e.g. not sampled). */
  dropped: number;
}

/**
 * The follow graph over `agentIds` (generators number the agents in the order given).
 * A `file` spec must have been read into `edges` by the caller (./graph-file.ts).
 */
export function buildFollowGraph(spec: GraphSpec | undefined, agentIds: readonly string[]): FollowGraphBuild {
  const graph = new (graphology().DirectedGraph)();
  for (const id of agentIds) graph.mergeNode(id);
  let dropped = 0;
  const add = (a: string, b: string) => {
    if (a === b) return;
    if (!graph.hasNode(a) || !graph.hasNode(b)) {
      dropped++;
      return;
    }
    graph.mergeEdge(a, b);
    if (spec?.reciprocal) graph.mergeEdge(b, a);
  };
  if (!spec) return { graph, dropped };
  if ('file' in spec) throw new GraphError(`the edge list ${spec.file} must be read before the world starts (readEdgeListFile)`);
  if ('edges' in spec) for (const [a, b] of spec.edges) add(String(a), String(b));
  else for (const [i, j] of generatedEdges(spec.generate, agentIds.length)) add(agentIds[i]!, agentIds[j]!);
  return { graph, dropped };
}

/** Pairs from the text of an edge list: CSV ("follower,followee" lines; a header line is skipped) or JSON. */
export function parseEdgeList(text: string, format: 'csv' | 'json'): Array<[string, string]> {
  if (format === 'json') {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch (e) {
      throw new GraphError(`the edge list is not JSON (${describeJsonProblem(text, e)})`); // never its bytes
    }
    if (!Array.isArray(data)) throw new GraphError('a JSON edge list must be a list of pairs');
    return data.map((pair, i) => {
      if (Array.isArray(pair) && pair.length === 2) return [String(pair[0]), String(pair[1])];
      if (pair && typeof pair === 'object') {
        const o = pair as Record<string, unknown>;
        const a = o.follower ?? o.source ?? o.from;
        const b = o.followee ?? o.target ?? o.to;
        if (a !== undefined && b !== undefined) return [String(a), String(b)];
      }
      throw new GraphError(`edge ${i}: must be a pair [follower, followee] or {"follower", "followee"}`);
    });
  }
  const out: Array<[string, string]> = [];
  text.split(/\r?\n/).forEach((line, i) => {
    try {
      edgeFromCsvLine(line, out.length === 0, out);
    } catch (e) {
      if (e instanceof GraphError) throw new GraphError(`line ${i + 1}: ${e.message}`);
      throw e;
    }
  });
  return out;
}

const HEADER = /^(follower|source|from|src|a)$/i;

/** Adds the pair of one CSV line to `out` (blank lines and a first header line are skipped). */
export function edgeFromCsvLine(line: string, first: boolean, out: Array<[string, string]>): void {
  const trimmed = line.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return;
  const fields = trimmed.split(',').map((f) => f.trim().replace(/^"(.*)"$/, '$1'));
  if (fields.length < 2) throw new GraphError('not "follower,followee": the line has one field'); // never its bytes
  if (first && HEADER.test(fields[0]!)) return;
  out.push([fields[0]!, fields[1]!]);
}
