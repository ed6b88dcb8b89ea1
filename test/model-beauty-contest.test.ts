// examples/models/beauty-contest: Nagel's p-beauty contest over rounds with level-k players, rules
// as data. The mean, the target and the number of winners of each round are checked against the
// contest computed here from players.csv and the documented seeded streams
// (test/helpers/seeded.ts): with r the last round's mean (none in round 1), a level-0 player
// chooses u * min(100, 2r) (u * 100 in round 1), u the first draw of (seed, "rule", round,
// player); a level-k player chooses r p^k (50 p^k in round 1).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, type RunEvent } from '../src/index.js';
import { csvRows, stream } from './helpers/seeded.js';

const P = 2 / 3;

function contest(seed: number, rounds: number) {
  const players = csvRows(readFileSync('examples/models/beauty-contest/players.csv', 'utf8'));
  let last: number | null = null;
  const out: Array<{ mean: number; target: number; winners: number }> = [];
  for (let t = 1; t <= rounds; t++) {
    const choices = players.map((pl) => {
      const level = Number(pl.level);
      if (level === 0) return stream(seed, 'rule', t, pl.id!).next() * (last === null ? 100 : Math.min(100, 2 * last));
      return (last ?? 50) * Math.pow(P, level);
    });
    const mean = choices.reduce((a, b) => a + b, 0) / choices.length;
    const target = P * mean;
    const best = Math.min(...choices.map((c) => Math.abs(c - target)));
    out.push({ mean, target, winners: choices.filter((c) => Math.abs(Math.abs(c - target) - best) < 1e-9).length });
    last = mean;
  }
  return out;
}

async function run(seed: number) {
  const handle = runSop(loadSop('examples/models/beauty-contest/beauty-contest.sop.json'), { seed });
  const out: Array<{ mean: number; target: number; winners: number }> = [];
  for await (const e of handle as AsyncIterable<RunEvent>)
    if (e.type === 'population_step') out.push({ mean: e.metrics.mean!, target: e.metrics.target!, winners: e.metrics.winners! });
  expect((await handle.result).status).toBe('finished');
  return out;
}

describe('examples/models/beauty-contest', () => {
  it.each([1, 2, 3])('follows the independent contest round by round (seed %i)', async (seed) => {
    const expected = contest(seed, 10);
    const got = await run(seed);
    expect(got.map((r) => r.winners)).toEqual(expected.map((r) => r.winners));
    got.forEach((r, i) => {
      expect(r.mean).toBeCloseTo(expected[i]!.mean, 9);
      expect(r.target).toBeCloseTo(expected[i]!.target, 9);
    });
    // the mean falls round after round towards the equilibrium of 0, as in Nagel's experiments
    expect(got.at(-1)!.mean).toBeLessThan(got[0]!.mean / 10);
  });
});
