// examples/models/schelling: Schelling's segregation model on a 20 x 20 grid, rules as data. The
// moves, the unhappy residents and the mean share of like neighbours after each step are checked
// against the model computed here from residents.csv and the documented seeded streams
// (test/helpers/seeded.ts): the grid world shuffles its 400 cells with the stream
// (seed, "rule", 0, "world:town") and gives resident i (file order) the i-th; the next draw u of
// that stream makes its move seed floor(2^32 u). At a step every resident decides on the state at
// the step's start; the moves are applied in the shuffle order of the residents, each to the empty
// cell (in cell order, as empty when it is applied) of index floor(n v), v the first draw of
// (move seed, "move", step, resident).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, type RunEvent } from '../src/index.js';
import { csvRows, shuffle, shuffledAgents, stream } from './helpers/seeded.js';

const W = 20;
const H = 20;

function schelling(seed: number, similar: number) {
  const residents = csvRows(readFileSync('examples/models/schelling/residents.csv', 'utf8'));
  const ids = residents.map((r) => r.id!);
  const colour = residents.map((r) => r.colour!);
  const init = stream(seed, 'rule', 0, 'world:town');
  const cells = shuffle(
    Array.from({ length: W * H }, (_, c) => c),
    init,
  );
  const moveSeed = Math.floor(init.next() * 4294967296);
  const cell = ids.map((_, i) => cells[i]!);
  const occupant = new Array<number>(W * H).fill(-1);
  cell.forEach((c, i) => (occupant[c] = i));
  const around = (i: number) => {
    const out: number[] = [];
    const [x0, y0] = [cell[i]! % W, Math.floor(cell[i]! / W)];
    for (let dy = -1; dy <= 1; dy++)
      for (let dx = -1; dx <= 1; dx++) {
        const [x, y] = [x0 + dx, y0 + dy];
        if ((dx || dy) && x >= 0 && y >= 0 && x < W && y < H && occupant[y * W + x]! >= 0) out.push(occupant[y * W + x]!);
      }
    return out;
  };
  const like = (i: number) => {
    const n = around(i);
    return n.length === 0 ? null : n.filter((j) => colour[j] === colour[i]).length / n.length;
  };
  const unhappy = () => ids.map((_, i) => i).filter((i) => like(i) !== null && like(i)! < similar);
  const out: Array<{ moves: number; unhappy: number; similarity: number }> = [];
  for (let step = 1; step <= 50; step++) {
    const movers = new Set(unhappy().map((i) => ids[i]!));
    let moves = 0;
    for (const id of shuffledAgents(ids, seed, step)) {
      if (!movers.has(id)) continue;
      const i = ids.indexOf(id);
      const empty = occupant.flatMap((o, c) => (o < 0 ? [c] : []));
      const to = empty[Math.floor(stream(moveSeed, 'move', step, id).next() * empty.length)]!;
      occupant[cell[i]!] = -1;
      occupant[to] = i;
      cell[i] = to;
      moves++;
    }
    const likes = ids.map((_, i) => like(i)).filter((v): v is number => v !== null);
    out.push({ moves, unhappy: unhappy().length, similarity: likes.reduce((a, b) => a + b, 0) / likes.length });
    if (unhappy().length === 0) break;
  }
  return out;
}

async function run(seed: number, inputs: Record<string, string> = {}) {
  const handle = runSop(loadSop('examples/models/schelling/schelling.sop.json'), { seed, inputs });
  const out: Array<{ moves: number; unhappy: number; similarity: number }> = [];
  for await (const e of handle as AsyncIterable<RunEvent>)
    if (e.type === 'population_step') out.push({ moves: e.metrics.moves!, unhappy: e.metrics.unhappy!, similarity: e.metrics.similarity! });
  expect((await handle.result).status).toBe('finished');
  return out;
}

describe('examples/models/schelling', () => {
  it.each([
    [1, '0.375'],
    [2, '0.5'],
  ])('follows the independent model step by step (seed %i, similar %s)', async (seed, similar) => {
    const expected = schelling(seed, Number(similar));
    const got = await run(seed, { similar });
    expect(got.map((s) => [s.moves, s.unhappy])).toEqual(expected.map((s) => [s.moves, s.unhappy]));
    got.forEach((s, i) => expect(s.similarity).toBeCloseTo(expected[i]!.similarity, 12));
    // mild preferences, strong segregation: the like share ends well above the 0.5 of a random town
    expect(got.at(-1)!.similarity).toBeGreaterThan(0.7);
  });
});
