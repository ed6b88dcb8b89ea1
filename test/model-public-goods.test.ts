// examples/models/public-goods: a linear public goods game in groups of four, 10 rounds without
// punishment then 10 with (Fehr and Gaechter 2000), rules as data. Each step's mean contribution,
// punishment points and mean earnings are checked against the game computed here from
// players.csv and the documented seeded streams (test/helpers/seeded.ts): the groups world of
// state S shuffles the players (population order) with the stream (seed, "rule", 0, "world:S")
// and puts the k-th in group floor(k / 4); a conditional cooperator starts with 5 + floor(11 u),
// u the first draw of (seed, "state", player), a free rider with 0.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, type RunEvent } from '../src/index.js';
import { csvRows, shuffle, stream } from './helpers/seeded.js';

type Step = { contribution: number | null; points: number | null; earnings: number };

function game(seed: number, state: string, punishment: boolean): Step[] {
  const players = csvRows(readFileSync('examples/models/public-goods/players.csv', 'utf8'));
  const n = players.length;
  const order = shuffle(
    players.map((_, i) => i),
    stream(seed, 'rule', 0, `world:${state}`),
  );
  const group = new Array<number>(n);
  order.forEach((i, k) => (group[i] = Math.floor(k / 4)));
  const mates = (i: number) => players.map((_, j) => j).filter((j) => j !== i && group[j] === group[i]);
  const free = players.map((p) => p.type === 'free_rider');
  let give = players.map((p, i) => (free[i] ? 0 : 5 + Math.floor(stream(seed, 'state', p.id!).next() * 11)));
  let punished = new Array<number>(n).fill(0);
  const out: Step[] = [];
  for (let round = 1; round <= 10; round++) {
    const c = players.map((_, i) => {
      if (free[i]) return Math.min(20, give[i]! + 2 * punished[i]!);
      if (round === 1) return give[i]!;
      const m = mates(i);
      return Math.round(0.9 * (m.reduce((a, j) => a + give[j]!, 0) / m.length));
    });
    give = c;
    const sums = new Map<number, number>();
    players.forEach((_, i) => sums.set(group[i]!, (sums.get(group[i]!) ?? 0) + c[i]!));
    const earnings = players.map((_, i) => 20 - c[i]! + 0.4 * sums.get(group[i]!)!);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    out.push({ contribution: mean(c), points: null, earnings: mean(earnings) });
    if (!punishment) continue;
    punished = new Array<number>(n).fill(0);
    let points = 0;
    players.forEach((_, i) => {
      if (free[i]) return;
      let low: number | undefined;
      for (const j of mates(i)) if (low === undefined || c[j]! < c[low]!) low = j;
      if (low === undefined || c[low]! >= give[i]!) return;
      const p = Math.min(10, Math.ceil((give[i]! - c[low]!) / 5));
      earnings[i]! -= p;
      earnings[low]! -= 3 * p;
      punished[low]! += p;
      points += p;
    });
    out.push({ contribution: null, points, earnings: mean(earnings) });
  }
  return out;
}

async function run(seed: number) {
  const handle = runSop(loadSop('examples/models/public-goods/public-goods.sop.json'), { seed });
  const out: Record<string, Step[]> = {};
  for await (const e of handle as AsyncIterable<RunEvent>)
    if (e.type === 'population_step')
      (out[e.state] ??= []).push({
        contribution: e.metrics.contribution!,
        points: e.metrics.punishment_points!,
        earnings: e.metrics.earnings!,
      });
  expect((await handle.result).status).toBe('finished');
  return out;
}

describe('examples/models/public-goods', () => {
  it.each([1, 2])('follows the independent game, without then with punishment (seed %i)', async (seed) => {
    const got = await run(seed);
    for (const [state, punishment] of [
      ['without_punishment', false],
      ['with_punishment', true],
    ] as const) {
      const expected = game(seed, state, punishment);
      expect(got[state]!.map((s) => [s.contribution, s.points])).toEqual(expected.map((s) => [s.contribution, s.points]));
      got[state]!.forEach((s, i) => expect(s.earnings).toBeCloseTo(expected[i]!.earnings, 9));
    }
    // Fehr and Gaechter's finding: contributions decay without punishment and hold up with it
    const last = (state: string) => got[state]!.filter((s) => s.contribution !== null).at(-1)!.contribution!;
    expect(last('without_punishment')).toBeLessThan(got.without_punishment![0]!.contribution! / 2);
    expect(last('with_punishment')).toBeGreaterThan(last('without_punishment') * 3);
  });
});
