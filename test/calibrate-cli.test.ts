// `sop calibrate` through the built CLI (docs/calibrate.md): the threshold cascade's theta is
// recovered from an adopters curve made by running the model at theta = 0.35 (within 0.05, the
// truth inside the 90% interval); the posterior is written as Parquet and a DuckDB table, one row
// per particle with its weight; and a calibration SIGKILLed after a completed round continues from
// it when the same command is given again, ending with the posterior of one that was never killed.
import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runCliKillable, spawnCliAsync } from './helpers/cli.js';
import { until } from './helpers/until.js';

const MODEL = resolve('examples/models/threshold-cascade');
let dir: string;
let sopFile: string;

interface Posterior {
  parameters: Record<string, { median: number; lo90: number; hi90: number; prior_width: number }>;
  runs: number;
}

beforeAll(async () => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-calibrate-'));
  // the targets: the adopters after each step of a run at theta = 0.35, read with sop query
  const made = await spawnCliAsync(
    ['run', join(MODEL, 'threshold-cascade.sop.json'), '--llm', 'mock', '--input', 'theta=0.35', '--out', join(dir, 'truth'), '--quiet'],
    { timeout: 60_000 },
  );
  expect(made.status, made.stderr).toBe(0);
  const runDir = /Run folder: (\S+)/.exec(made.stdout + made.stderr)![1]!;
  const q = await spawnCliAsync(['query', runDir, "select step, value from metrics where name = 'adopters' order by step", '--json'], {
    timeout: 60_000,
  });
  expect(q.status, q.stderr).toBe(0);
  const points = (JSON.parse(q.stdout) as Array<{ step: number; value: number }>).map((r) => [r.step, r.value]);
  expect(points).toHaveLength(6);
  const sop = JSON.parse(readFileSync(join(MODEL, 'threshold-cascade.sop.json'), 'utf8')) as Record<string, unknown> & {
    states: { cascade: { population: { source: { file: string } }; world: { graph: { file: string } } } };
  };
  sop.states.cascade.population.source.file = join(MODEL, 'members.csv');
  sop.states.cascade.world.graph.file = join(MODEL, 'karate.csv');
  delete sop.$schema;
  sop.targets = { adopters: { source: 'a run of this model at theta = 0.35', kind: 'curve', metric: 'adopters', points, band: 1 } };
  sop.calibrate = { parameters: { theta: { input: 'theta', prior: { uniform: [0.05, 0.95] } } }, targets: ['adopters'] };
  sopFile = join(dir, 'cascade.sop.json');
  writeFileSync(sopFile, JSON.stringify(sop, null, 2));
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const calibrate = (out: string) => ['calibrate', sopFile, '--llm', 'mock', '--budget', '200', '--population', '20', '--out', out, '--json'];

describe('sop calibrate', () => {
  let straight: Posterior;

  it('recovers the threshold cascade theta of 0.35 within 0.05, and writes the posterior', async () => {
    const out = join(dir, 'cal');
    const r = await spawnCliAsync(calibrate(out), { timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    straight = JSON.parse(r.stdout) as Posterior;
    const theta = straight.parameters.theta!;
    expect(Math.abs(theta.median - 0.35)).toBeLessThanOrEqual(0.05);
    expect(theta.lo90).toBeLessThanOrEqual(0.35);
    expect(theta.hi90).toBeGreaterThanOrEqual(0.35);
    expect(theta.prior_width).toBeCloseTo(0.9, 12);
    expect(theta.hi90 - theta.lo90).toBeLessThan(0.9 / 5);
    expect(straight.runs).toBeGreaterThan(0);
    expect(straight.runs).toBeLessThanOrEqual(200);
    // one row per particle with its weight, in the Parquet file and the DuckDB table alike
    const db = await DuckDBInstance.create(':memory:');
    const c = await db.connect();
    try {
      const parquet = (
        await c.runAndReadAll(`select count(*), sum(weight), min(theta), max(theta) from '${join(out, 'posterior.parquet')}'`)
      ).getRowsJS()[0]!;
      // a population of 20, or fewer when the budget cut its last round short (at least a fifth, and 10)
      const n = Number(parquet[0]);
      expect(n).toBeGreaterThanOrEqual(10);
      expect(n).toBeLessThanOrEqual(20);
      expect(parquet[1] as number).toBeCloseTo(1, 9);
      expect(parquet[2] as number).toBeGreaterThan(0.3);
      await c.run(`attach '${join(out, 'calibration.duckdb')}' as cal (read_only)`);
      const table = (await c.runAndReadAll('select count(*), sum(weight) from cal.posterior')).getRowsJS()[0]!;
      expect(Number(table[0])).toBe(n);
      expect(table[1] as number).toBeCloseTo(1, 9);
    } finally {
      c.closeSync();
      db.closeSync();
    }
    const report = readFileSync(join(out, 'report.md'), 'utf8');
    expect(report).toMatch(/\| theta \| input `theta` \| uniform \[0\.05, 0\.95\] \|/);
    expect(report).toContain(`Runs spent: **${straight.runs}**`);
    expect(report).toMatch(/## Best-fitting particle[\s\S]*\| adopters \| metric adopters \|/);
    expect(existsSync(join(out, 'hist-theta.svg'))).toBe(true);
  }, 120_000);

  it('is predicted by sop plan --budget: its runs, calls and tokens from one dry run', async () => {
    const r = await spawnCliAsync(['plan', sopFile, '--budget', '1200', '--json'], { timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout) as { total: { calls: number }; calibration: Record<string, number> };
    expect(plan.calibration).toMatchObject({ budget: 1200, runs: 1200, particles: 1200, population: 20, seeds_per_particle: 1 });
    expect(plan.calibration.calls).toBe(1200 * plan.total.calls); // rule agents: 0 calls a run, so 0 in all
    const refused = await spawnCliAsync(['plan', join(MODEL, 'threshold-cascade.sop.json'), '--budget', '10'], { timeout: 60_000 });
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/--budget predicts a calibration, and threshold-cascade has no "calibrate" block/);
    // and sop calibrate on it: one line, no stack trace, no folder
    const none = await spawnCliAsync(
      ['calibrate', join(MODEL, 'threshold-cascade.sop.json'), '--budget', '10', '--out', join(dir, 'none')],
      {
        timeout: 60_000,
      },
    );
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(/^error: threshold-cascade has no "calibrate" block/m);
    expect(none.stderr).not.toMatch(/^\s+at /m);
    expect(existsSync(join(dir, 'none'))).toBe(false);
  }, 120_000);

  it('continues from its last completed round after a SIGKILL, to the same posterior', async () => {
    const out = join(dir, 'killed');
    const state = join(out, 'calibration.json');
    const rounds = () =>
      existsSync(state) ? (JSON.parse(readFileSync(state, 'utf8')) as { state: { rounds: unknown[] } }).state.rounds.length : 0;
    const killed = await runCliKillable(calibrate(out), process.env, (kill) => {
      void until(() => rounds() >= 1, { timeoutMs: 60_000, intervalMs: 10 }).then(kill);
    });
    expect(killed.signal).toBe('SIGKILL');
    const done = rounds();
    expect(done).toBeGreaterThanOrEqual(1);
    const again = await spawnCliAsync(calibrate(out), { timeout: 120_000 });
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toMatch(new RegExp(`continuing after round ${done - 1} \\(\\d+ runs spent\\)`));
    expect(again.stderr).not.toMatch(/^round 0:/m); // round 0 was not made again
    expect(JSON.parse(again.stdout)).toEqual(straight);
  }, 240_000);
});
