// The `network` world: agents on an undirected graph (world.graph: an edge list, inline or from a
// file, or a seeded generator; ./graph.ts), or meeting in random pairs each step (`meet: "pairs"`:
// a seeded perfect matching of the agents, drawn anew every step; Deffuant et al. 2000). It holds
// no state of its own beyond who is next to whom: its actions are the names declared in
// `params.actions`, which always go through, and its metrics count them. It is the world of
// rules as data (docs/population.md#rules-as-data), where agent state variables carry the model:
// a rule reads `neighbours.share('adopted')`, and the action's `set` changes the agent's state.
import type { Rng } from '../../../core/runtime/rng.js';
import { buildFollowGraph, type GraphSpec } from './graph.js';
import { seededRng, shuffleInPlace } from './seed.js';
import { agentIndex, builtinWorld, type ActionSpec, type Metrics, type WorldAgent } from './world.js';

export interface NetworkParams {
  /** The actions agents may take (besides idle): names only, any arguments. */
  actions: string[];
  /** Who an agent's neighbours are: its graph neighbours, or its partner of the step. */
  meet: 'graph' | 'pairs';
}

export interface NetworkState {
  params: NetworkParams;
  ids: string[];
  /** Neighbours by agent index (graph), sorted; empty with meet "pairs". */
  adj: number[][];
  /** Seed of the pairings. */
  seed: number;
  /** Actions of the last step by name, and since the start. */
  last: Record<string, number>;
  total: Record<string, number>;
}

export const networkParamsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    actions: {
      type: 'array',
      uniqueItems: true,
      items: { type: 'string', pattern: '^[a-zA-Z_][a-zA-Z0-9_-]{0,63}$', not: { const: 'idle' } },
      default: ['act'],
      description: 'the actions agents may take besides idle (any arguments); each is counted as a metric',
    },
    meet: {
      enum: ['graph', 'pairs'],
      default: 'graph',
      description:
        "graph: an agent's neighbours are its neighbours in world.graph (undirected); pairs: its partner in a random matching drawn each step",
    },
  },
} as const;

const idle: ActionSpec = {
  name: 'idle',
  description: 'Do nothing this step.',
  parameters: { type: 'object', additionalProperties: false, properties: {} },
};

const declared = (name: string): ActionSpec => ({
  name,
  description: `${name} (a declared action of the network world)`,
  parameters: { type: 'object', additionalProperties: true, properties: {} },
});

/** Partners of one step, by agent index (-1: unmatched, the odd one out). */
const pairings = new WeakMap<NetworkState, { step: number; partner: Int32Array }>();

function partnersAt(state: NetworkState, step: number): Int32Array {
  const cached = pairings.get(state);
  if (cached && cached.step === step) return cached.partner;
  const order = shuffleInPlace(
    state.ids.map((_, i) => i),
    seededRng(state.seed, 'pairs', step),
  );
  const partner = new Int32Array(state.ids.length).fill(-1);
  for (let k = 0; k + 1 < order.length; k += 2) {
    partner[order[k]!] = order[k + 1]!;
    partner[order[k + 1]!] = order[k]!;
  }
  pairings.set(state, { step, partner });
  return partner;
}

function neighbourIndices(state: NetworkState, i: number, step: number): number[] {
  if (i < 0) return [];
  if (state.params.meet === 'pairs') {
    const j = partnersAt(state, step)[i]!;
    return j >= 0 ? [j] : [];
  }
  return state.adj[i] ?? [];
}

export const network = builtinWorld<NetworkState, NetworkParams>({
  name: 'network',
  description: 'Agents on an undirected graph, or meeting in random pairs each step; the actions are declared names.',
  params: networkParamsSchema,
  actions: [idle],
  graph: true,
  actionsFor: (params) => [...(params.actions ?? []).map(declared), idle],
  init(params, agents: readonly WorldAgent[], rng: Rng, ctx) {
    const ids = agents.map((a) => a.id);
    const adj: number[][] = ids.map(() => []);
    if (params.meet === 'graph') {
      const { graph } = buildFollowGraph(ctx?.graph as GraphSpec | undefined, ids);
      const index = new Map(ids.map((id, i) => [id, i]));
      const sets = ids.map(() => new Set<number>());
      graph.forEachEdge((_e, _a, s, t) => {
        const a = index.get(s)!;
        const b = index.get(t)!;
        sets[a]!.add(b);
        sets[b]!.add(a);
      });
      sets.forEach((set, i) => (adj[i] = [...set].sort((x, y) => x - y)));
    }
    return { params, ids, adj, seed: Math.floor(rng.next() * 4294967296), last: {}, total: {} };
  },
  snapshot: (s) => ({ last: s.last, total: s.total }),
  observe(s, agentId, k) {
    const i = agentIndex(s, agentId);
    const near = s.params.meet === 'pairs' ? [] : neighbourIndices(s, i, 0);
    return { neighbours: near.slice(0, k).map((j) => s.ids[j]!), degree: near.length };
  },
  neighbours: (s, agentId, step) => neighbourIndices(s, agentIndex(s, agentId), step).map((j) => s.ids[j]!),
  apply(s, actions) {
    s.last = Object.fromEntries(s.params.actions.map((a) => [a, 0]));
    return actions.map((a) => {
      if (a.name === 'idle') return { agent: a.agent, name: a.name, ok: true, output: 'idle' };
      if (!s.params.actions.includes(a.name))
        return { agent: a.agent, name: a.name, ok: false, output: `"${a.name}" is not an action of this network` };
      s.last[a.name] = (s.last[a.name] ?? 0) + 1;
      s.total[a.name] = (s.total[a.name] ?? 0) + 1;
      return { agent: a.agent, name: a.name, ok: true, output: a.name };
    });
  },
  metrics(s): Metrics {
    const out: Metrics = {};
    for (const a of s.params.actions) out[a] = s.last[a] ?? 0;
    return out;
  },
});
