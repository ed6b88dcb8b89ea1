// examples/models/deffuant: bounded-confidence opinion dynamics with random pairwise meetings,
// rules as data. The meetings and the opinion histogram after each step are checked against the
// model computed here from the documented seeded streams (test/helpers/seeded.ts): agent x's
// initial opinion is the first draw of (seed, "state", x); the network world's pairing seed is
// floor(2^32 u), u the first draw of (seed, "rule", 0, "world:opinions"); at step t the agents
// (in population order) are shuffled with (pairing seed, "pairs", t) and paired off in that order.
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, type RunEvent } from '../src/index.js';
import { shuffle, stream } from './helpers/seeded.js';

function deffuant(seed: number, d: number, mu: number, steps: number) {
  const ids = Array.from({ length: 100 }, (_, i) => `a${i}`);
  let opinion = ids.map((id) => stream(seed, 'state', id).next());
  const pairSeed = Math.floor(stream(seed, 'rule', 0, 'world:opinions').next() * 4294967296);
  const out: Array<{ meet: number; mean: number; bins: Record<string, number> }> = [];
  for (let t = 1; t <= steps; t++) {
    const order = shuffle(
      ids.map((_, i) => i),
      stream(pairSeed, 'pairs', t),
    );
    const next = [...opinion];
    let meet = 0;
    for (let k = 0; k + 1 < order.length; k += 2) {
      const [i, j] = [order[k]!, order[k + 1]!];
      if (Math.abs(opinion[j]! - opinion[i]!) < d) {
        next[i] = opinion[i]! + mu * (opinion[j]! - opinion[i]!);
        next[j] = opinion[j]! + mu * (opinion[i]! - opinion[j]!);
        meet += 2;
      }
    }
    opinion = next;
    const bins: Record<string, number> = {};
    for (const o of opinion) bins[`opinion_bin.${Math.floor(o * 10)}`] = (bins[`opinion_bin.${Math.floor(o * 10)}`] ?? 0) + 1;
    out.push({ meet, mean: opinion.reduce((a, b) => a + b, 0) / opinion.length, bins });
  }
  return { out };
}

async function run(seed: number, inputs: Record<string, string> = {}) {
  const handle = runSop(loadSop('examples/models/deffuant/deffuant.sop.json'), { seed, inputs });
  const out: Array<{ meet: number; mean: number; bins: Record<string, number | null> }> = [];
  for await (const e of handle as AsyncIterable<RunEvent>)
    if (e.type === 'population_step') {
      const bins = Object.fromEntries(Object.entries(e.metrics).filter(([k]) => k.startsWith('opinion_bin.')));
      out.push({ meet: e.metrics.meet!, mean: e.metrics.opinion_mean!, bins });
    }
  expect((await handle.result).status).toBe('finished');
  return out;
}

describe('examples/models/deffuant', () => {
  it.each([
    [1, '0.2'],
    [4, '0.1'],
  ])('follows the independent model step by step (seed %i, d %s)', async (seed, d) => {
    const expected = deffuant(seed, Number(d), 0.5, 100);
    const got = await run(seed, { d });
    expect(got.map((s) => s.meet)).toEqual(expected.out.map((s) => s.meet));
    expect(got.map((s) => s.bins)).toEqual(expected.out.map((s) => s.bins));
    got.forEach((s, i) => expect(s.mean).toBeCloseTo(expected.out[i]!.mean, 12));
  });
});
