// examples/models/sir: an SIR epidemic on a contact network, rules as data. The counts of
// susceptible, infected and recovered people after each step are checked against an epidemic
// computed here from contacts.csv and the documented seeded streams (test/helpers/seeded.ts):
// at each step, person x draws u from the stream (seed, "rule", step, x); a susceptible one with
// k infected contacts catches the disease when u < 1 - (1 - beta)^k, an infected one recovers
// when u < gamma, all on the state at the start of the step.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, type RunEvent } from '../src/index.js';
import { csvRows, stream } from './helpers/seeded.js';

const DIR = 'examples/models/sir';

function epidemic(seed: number, beta: number, gamma: number, seeds: string[]): Array<[number, number, number]> {
  const people = csvRows(readFileSync(`${DIR}/people.csv`, 'utf8')).map((r) => r.id!);
  const near = new Map(people.map((p) => [p, new Set<string>()]));
  for (const e of csvRows(readFileSync(`${DIR}/contacts.csv`, 'utf8'))) {
    near.get(e.source!)!.add(e.target!);
    near.get(e.target!)!.add(e.source!);
  }
  let status = new Map(people.map((p) => [p, seeds.includes(p) ? 'I' : 'S']));
  const out: Array<[number, number, number]> = [];
  for (let step = 1; step <= 100; step++) {
    const next = new Map(status);
    for (const p of people) {
      const s = status.get(p)!;
      if (s === 'R') continue;
      const u = stream(seed, 'rule', step, p).next();
      const k = [...near.get(p)!].filter((q) => status.get(q) === 'I').length;
      if (s === 'S' && u < 1 - Math.exp(k * Math.log(1 - beta))) next.set(p, 'I');
      if (s === 'I' && u < gamma) next.set(p, 'R');
    }
    status = next;
    const count = (x: string) => [...status.values()].filter((v) => v === x).length;
    out.push([count('S'), count('I'), count('R')]);
    if (count('I') === 0) break;
  }
  return out;
}

async function run(seed: number, inputs: Record<string, string> = {}) {
  const handle = runSop(loadSop(`${DIR}/sir.sop.json`), { seed, inputs });
  const out: Array<[number, number, number]> = [];
  for await (const e of handle as AsyncIterable<RunEvent>)
    if (e.type === 'population_step') out.push([e.metrics.susceptible!, e.metrics.infected!, e.metrics.recovered!]);
  expect((await handle.result).status).toBe('finished');
  return out;
}

describe('examples/models/sir', () => {
  it.each([1, 7])('follows the independent epidemic step by step (seed %i)', async (seed) => {
    const expected = epidemic(seed, 0.1, 0.2, ['p0', 'p1', 'p2']);
    expect(expected.at(-1)![1]).toBe(0); // it dies out within 100 steps
    expect(expected.at(-1)![2]).toBeGreaterThan(3); // and it spread
    expect(await run(seed)).toEqual(expected);
  });

  it('spreads less with a lower beta, as the independent epidemic does', async () => {
    const expected = epidemic(3, 0.03, 0.2, ['p0', 'p1', 'p2']);
    expect(await run(3, { beta: '0.03' })).toEqual(expected);
  });
});
