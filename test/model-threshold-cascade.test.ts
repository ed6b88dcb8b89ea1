// examples/models/threshold-cascade: a linear-threshold cascade on Zachary's karate club, rules as
// data (no code). Its adopters after each step are checked against a cascade computed here from
// karate.csv alone: simultaneous moves, an agent adopts when at least theta of its neighbours had
// adopted at the start of the step.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, type RunEvent } from '../src/index.js';

const DIR = 'examples/models/threshold-cascade';

/** Adopters after each of `steps` steps, from the edge list (independent of the engine). */
function cascade(theta: number, seeds: string[], steps: number): number[] {
  const near = new Map<string, Set<string>>();
  const add = (a: string, b: string) => {
    if (!near.has(a)) near.set(a, new Set());
    near.get(a)!.add(b);
  };
  for (const line of readFileSync(`${DIR}/karate.csv`, 'utf8').trim().split('\n').slice(1)) {
    const [a, b] = line.split(',');
    add(a!, b!);
    add(b!, a!);
  }
  let adopted = new Set(seeds);
  const out: number[] = [];
  for (let s = 0; s < steps; s++) {
    const next = new Set(adopted);
    for (const [v, ns] of near) if (!adopted.has(v) && [...ns].filter((n) => adopted.has(n)).length / ns.size >= theta) next.add(v);
    adopted = next;
    out.push(adopted.size);
  }
  return out;
}

async function adopters(inputs: Record<string, string>): Promise<{ values: number[]; calls: number; status: string }> {
  const handle = runSop(loadSop(`${DIR}/threshold-cascade.sop.json`), { inputs });
  const values: number[] = [];
  let calls = 0;
  for await (const e of handle as AsyncIterable<RunEvent>) {
    if (e.type === 'population_step') values.push(e.metrics.adopters!);
    if (e.type === 'llm_call') calls++;
  }
  return { values, calls, status: (await handle.result).status };
}

describe('examples/models/threshold-cascade', () => {
  it('gives 16, 22, 27, 29, 29, 29 adopters at theta 0.4 from members 0 and 33, as the independent cascade does', async () => {
    const expected = cascade(0.4, ['0', '33'], 6);
    expect(expected).toEqual([16, 22, 27, 29, 29, 29]);
    const run = await adopters({ theta: '0.4' });
    expect(run).toEqual({ values: expected, calls: 0, status: 'finished' });
  });

  it.each([
    ['0.2', '0'],
    ['0.3', '0,33'],
    ['0.5', '0,33'],
    ['0.25', '5,16,24'],
  ])('matches the independent cascade at theta %s from %s', async (theta, seeds) => {
    const run = await adopters({ theta, seeds });
    expect(run.values).toEqual(cascade(Number(theta), seeds.split(','), 6));
  });
});
