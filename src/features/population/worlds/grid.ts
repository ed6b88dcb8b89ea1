// The `grid` world: agents on the cells of a width x height grid, at most one a cell, placed at
// random (seeded) at the start. An agent's neighbours are the agents in the cells around it
// (Moore neighbourhood of `radius`, wrapping at the edges with `torus`). `move` takes the agent to
// an empty cell drawn at random among those empty when the move is applied (seeded by (seed,
// step, agent)), so two agents never land on one cell: Schelling's (1971) segregation model.
import type { Rng } from '../../../core/runtime/rng.js';
import { EngineError } from '../../../shared/errors.js';
import { seededRng, shuffleInPlace } from './seed.js';
import { agentIndex, builtinWorld, type ActionSpec, type Metrics, type WorldAgent } from './world.js';

export interface GridParams {
  width: number;
  height: number;
  torus: boolean;
  radius: number;
}

export interface GridState {
  params: GridParams;
  ids: string[];
  /** Cell of each agent (y * width + x), by agent index. */
  cell: number[];
  /** Agent index in each cell, -1 when empty. */
  occupant: number[];
  seed: number;
  moves: number;
}

export const gridParamsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    width: { type: 'integer', minimum: 1, maximum: 10000, default: 20 },
    height: { type: 'integer', minimum: 1, maximum: 10000, default: 20 },
    torus: { type: 'boolean', default: false, description: 'whether the edges wrap around' },
    radius: { type: 'integer', minimum: 1, maximum: 10, default: 1, description: 'the neighbourhood: cells at most this far in x and y' },
  },
} as const;

const actions: ActionSpec[] = [
  {
    name: 'move',
    description: 'Move to an empty cell, drawn at random.',
    parameters: { type: 'object', additionalProperties: false, properties: {} },
  },
  { name: 'idle', description: 'Stay where you are.', parameters: { type: 'object', additionalProperties: false, properties: {} } },
];

/** The agents in the cells around agent i, in cell order (rows top to bottom, left to right). */
export function gridNeighbours(s: GridState, i: number): number[] {
  const { width, height, torus, radius } = s.params;
  const c = s.cell[i]!;
  const x0 = c % width;
  const y0 = Math.floor(c / width);
  const out: number[] = [];
  for (let dy = -radius; dy <= radius; dy++)
    for (let dx = -radius; dx <= radius; dx++) {
      if (dx === 0 && dy === 0) continue;
      let x = x0 + dx;
      let y = y0 + dy;
      if (torus) {
        x = ((x % width) + width) % width;
        y = ((y % height) + height) % height;
      } else if (x < 0 || y < 0 || x >= width || y >= height) continue;
      const j = s.occupant[y * width + x]!;
      if (j >= 0 && j !== i && !out.includes(j)) out.push(j);
    }
  return out;
}

export const grid = builtinWorld<GridState, GridParams>({
  name: 'grid',
  description: 'Agents on the cells of a grid; move takes an agent to a random empty cell.',
  params: gridParamsSchema,
  actions,
  init(params, agents: readonly WorldAgent[], rng: Rng) {
    const cells = params.width * params.height;
    if (agents.length > cells)
      throw new EngineError(`the grid has ${cells} cells for ${agents.length} agents (make width x height larger)`, 'POPULATION');
    const order = shuffleInPlace(
      Array.from({ length: cells }, (_, c) => c),
      rng,
    );
    const occupant = new Array<number>(cells).fill(-1);
    const cell = agents.map((_, i) => order[i]!);
    cell.forEach((c, i) => (occupant[c] = i));
    return { params, ids: agents.map((a) => a.id), cell, occupant, seed: Math.floor(rng.next() * 4294967296), moves: 0 };
  },
  snapshot: (s) => ({ moves: s.moves, empty: s.occupant.length - s.ids.length }),
  observe(s, agentId) {
    const i = agentIndex(s, agentId);
    if (i < 0) return null;
    const c = s.cell[i]!;
    return { x: c % s.params.width, y: Math.floor(c / s.params.width), neighbours: gridNeighbours(s, i).map((j) => s.ids[j]!) };
  },
  neighbours: (s, agentId) => {
    const i = agentIndex(s, agentId);
    return i < 0 ? [] : gridNeighbours(s, i).map((j) => s.ids[j]!);
  },
  apply(s, stepActions, step) {
    s.moves = 0;
    return stepActions.map((a) => {
      const i = agentIndex(s, a.agent);
      if (a.name === 'idle') return { agent: a.agent, name: a.name, ok: true, output: 'stayed' };
      if (a.name !== 'move' || i < 0) return { agent: a.agent, name: a.name, ok: false, output: `cannot ${a.name}` };
      const empty: number[] = [];
      s.occupant.forEach((o, c) => {
        if (o < 0) empty.push(c);
      });
      if (empty.length === 0) return { agent: a.agent, name: a.name, ok: false, output: 'no empty cell' };
      const to = empty[Math.floor(seededRng(s.seed, 'move', step, a.agent).next() * empty.length)]!;
      s.occupant[s.cell[i]!] = -1;
      s.occupant[to] = i;
      s.cell[i] = to;
      s.moves++;
      return { agent: a.agent, name: a.name, ok: true, output: `moved to ${to % s.params.width},${Math.floor(to / s.params.width)}` };
    });
  },
  metrics: (s): Metrics => ({ moves: s.moves, empty: s.occupant.length - s.ids.length }),
});
