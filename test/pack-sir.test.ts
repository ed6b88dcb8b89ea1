// The SIR replication pack (issue 33): its targets are the mean-field results for the network of
// contacts.csv, computed here without the engine: Newman's (2002) final size from the degree
// distribution's generating functions, and the curve of infected people of Miller, Slim and
// Volz's (2012) edge-based compartmental model, written for this model's discrete time (a
// susceptible person catches the disease from each infected contact with probability beta in a
// step, an infected one recovers with probability gamma at the end of a step). Then the pack's
// sweep passes `sop report --check`.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from './helpers/cli.js';
import { MODELS_DIR, packTargets, sweepAndReport } from './helpers/pack.js';

const BETA = 0.1;
const GAMMA = 0.2;
const SEEDED = 3;

/** The degree distribution p_k of the contact network (people.csv, contacts.csv). */
function degrees(): number[] {
  const people = readFileSync(`${MODELS_DIR}/sir/people.csv`, 'utf8').trim().split('\n').slice(1);
  const deg = new Map(people.map((p) => [p.trim(), 0]));
  for (const line of readFileSync(`${MODELS_DIR}/sir/contacts.csv`, 'utf8').trim().split('\n').slice(1)) {
    for (const v of line.split(',')) deg.set(v.trim(), deg.get(v.trim())! + 1);
  }
  const pk: number[] = [];
  for (const d of deg.values()) pk[d] = (pk[d] ?? 0) + 1 / people.length;
  return Array.from(pk, (p) => p ?? 0);
}

const pk = degrees();
const N = readFileSync(`${MODELS_DIR}/sir/people.csv`, 'utf8').trim().split('\n').length - 1;
const meanDegree = pk.reduce((s, p, k) => s + p * k, 0);
const G0 = (x: number) => pk.reduce((s, p, k) => s + p * x ** k, 0);
const G1 = (x: number) => pk.reduce((s, p, k) => (k > 0 ? s + p * k * x ** (k - 1) : s), 0) / meanDegree;
/** The chance that an infected person infects a given contact before recovering (infectious for D >= 1 steps, D geometric). */
const T = 1 - (GAMMA * (1 - BETA)) / (1 - (1 - GAMMA) * (1 - BETA));

/** Newman (2002): the share reached by a large outbreak, 1 - G0(u) with u = 1 - T + T G1(u). */
function newmanFinalShare(): number {
  let u = 0;
  for (let i = 0; i < 10_000; i++) u = 1 - T + T * G1(u);
  return 1 - G0(u);
}

/** The edge-based compartmental model in discrete time: [step, S, I, R] as numbers of people. */
function ebcm(steps: number): Array<[number, number, number, number]> {
  const rho = SEEDED / N;
  let theta = 1; // a contact has not passed the disease on to a given person
  let phi = rho; // a contact is infected and has not passed it on yet
  const xiS = (th: number) => (1 - rho) * G1(th); // a contact is still susceptible
  let S = (1 - rho) * G0(1);
  let I = rho;
  let R = 0;
  const out: Array<[number, number, number, number]> = [[0, S * N, I * N, R * N]];
  for (let t = 1; t <= steps; t++) {
    const theta2 = theta - BETA * phi;
    phi = (1 - BETA) * (1 - GAMMA) * phi + (xiS(theta) - xiS(theta2));
    theta = theta2;
    const S2 = (1 - rho) * G0(theta);
    R += GAMMA * I;
    I = I * (1 - GAMMA) + (S - S2);
    S = S2;
    out.push([t, S * N, I * N, R * N]);
  }
  return out;
}

beforeAll(() => requireBuiltCli());

describe('the SIR pack', () => {
  it('states the mean-field final size and curve computed from contacts.csv as its targets', () => {
    expect(T).toBeCloseTo(0.357, 3);
    const curve = ebcm(200);
    const final = curve.at(-1)!;
    const t = packTargets('sir');
    // final size: everyone ever infected (the run ends when no one is infected, so recovered)
    expect(t.final_size!.value).toBe(Math.round(final[3] + final[2]));
    // Newman's large-outbreak share, without the seeded people, agrees within a person
    expect(Math.abs(newmanFinalShare() * N - final[3])).toBeLessThan(1.5);
    const points = t.infected_curve!.points as Array<[number, number]>;
    expect(points.length).toBeGreaterThanOrEqual(6);
    for (const [step, value] of points) expect(value).toBeCloseTo(curve[step]![2], 1);
    // the band is 5% of the town, not a band that any curve would pass: the peak is 46 people
    expect(t.infected_curve!.band).toBe(N / 20);
    expect(t.final_size!.tolerance).toBeLessThanOrEqual(N / 20);
  });

  it('passes sop report --check after a sweep over 8 seeds', async () => {
    const r = await sweepAndReport('sir', '1-8');
    expect(r.sweep.status, r.sweep.stderr).toBe(0);
    expect(r.report.status, r.report.stdout + r.report.stderr).toBe(0);
    expect(r.report.stdout).toContain('final_size');
    expect(r.report.stdout).toContain('infected_curve');
  }, 120_000);
});
