// The threshold-cascade replication pack (issue 33): its targets are the cascade computed here
// from karate.csv alone (Granovetter's rule: a member adopts once at least theta of its friends
// had adopted at the start of the step), and its sweep passes `sop report --check`.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from './helpers/cli.js';
import { MODELS_DIR, packTargets, sweepAndReport } from './helpers/pack.js';

/** Adopters after each of `steps` steps, and who never adopts, from the edge list (independent of the engine). */
function cascade(theta: number, seeds: string[], steps: number): { adopters: number[]; never: string[] } {
  const near = new Map<string, Set<string>>();
  const add = (a: string, b: string) => {
    if (!near.has(a)) near.set(a, new Set());
    near.get(a)!.add(b);
  };
  for (const line of readFileSync(`${MODELS_DIR}/threshold-cascade/karate.csv`, 'utf8').trim().split('\n').slice(1)) {
    const [a, b] = line.split(',');
    add(a!, b!);
    add(b!, a!);
  }
  let adopted = new Set(seeds);
  const adopters: number[] = [];
  for (let s = 0; s < steps; s++) {
    const next = new Set(adopted);
    for (const [v, ns] of near) if (!adopted.has(v) && [...ns].filter((n) => adopted.has(n)).length / ns.size >= theta) next.add(v);
    adopted = next;
    adopters.push(adopted.size);
  }
  const never = [...near.keys()].filter((v) => !adopted.has(v)).sort((a, b) => Number(a) - Number(b));
  return { adopters, never };
}

beforeAll(() => requireBuiltCli());

describe('the threshold-cascade pack', () => {
  it('states the cascade computed independently from karate.csv as its targets', () => {
    const expected = cascade(0.4, ['0', '33'], 6);
    const t = packTargets('threshold-cascade');
    expect(t.adopters_curve!.points).toEqual(expected.adopters.map((v, i) => [i + 1, v]));
    expect(t.adopters_final!.value).toBe(expected.adopters.at(-1));
    expect(expected.never).toEqual(['4', '5', '6', '10', '16']);
    expect(String(t.adopters_final!.source)).toContain('members 4, 5, 6, 10 and 16 never adopt');
  });

  it('passes sop report --check after a sweep over 3 seeds', async () => {
    const r = await sweepAndReport('threshold-cascade', '1-3');
    expect(r.sweep.status, r.sweep.stderr).toBe(0);
    expect(r.report.status, r.report.stdout + r.report.stderr).toBe(0);
    expect(r.report.stdout).toContain('adopters_curve');
    expect(r.report.stdout).toContain('adopters_final');
  }, 120_000);
});
