// RUN/population.duckdb is appended step by step as a run goes (src/api/results-writer.ts), not
// built from the whole journal at the end: a run SIGKILLed in the middle leaves a database that
// already holds its steps up to about the kill, `sop query` of the killed run works (it reads the
// journal's lines past where the database stands), and after `sop resume` the tables are those
// of an uninterrupted run of the same seed.
import { DuckDBInstance } from '@duckdb/node-api';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, spawnCli, spawnCliAsync } from './helpers/cli.js';
import { zicMarketSop } from './helpers/zic-market-sop.js';

// The run's first append (DuckDB loaded, the population written) takes as long as about 100 rule
// steps of 500 traders, on a quiet machine and a loaded one alike (both are CPU): 400 steps leave
// the kill far from the end.
const STEPS = 400;
/** The step after which the run is killed, once its database exists. */
const KILL_AFTER = 20;
/** Past the default of 200 (a step is a turn); a resume keeps it. */
const MAX_TURNS = String(STEPS + 10);
let root: string;
let sopFile: string;

const onlyDir = (out: string) => join(out, readdirSync(out).filter((d) => !d.startsWith('.'))[0]!);
const sop = (...args: string[]) => spawnCliAsync(args, { cwd: process.cwd() });
const query = async (dir: string, sql: string) => {
  const r = await sop('query', dir, sql, '--json');
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Array<Record<string, unknown>>;
};
const TABLES = {
  steps: 'select * from steps order by state, visit, step',
  actions: 'select * from actions order by state, visit, step, seq',
  metrics: 'select * from metrics order by state, visit, step, name',
  agents: 'select * from agents order by state, id',
};
const tables = async (dir: string): Promise<Record<keyof typeof TABLES, Array<Record<string, unknown>>>> => ({
  steps: await query(dir, TABLES.steps),
  actions: await query(dir, TABLES.actions),
  metrics: await query(dir, TABLES.metrics),
  agents: await query(dir, TABLES.agents),
});

/** The database as the run left it, read directly (no catch-up from the journal). */
async function direct(dir: string, sql: string): Promise<unknown[][]> {
  const db = await DuckDBInstance.create(join(dir, 'population.duckdb'), { access_mode: 'READ_ONLY' });
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowsJS();
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

beforeAll(() => {
  requireBuiltCli();
  root = mkdtempSync(join(tmpdir(), 'sop-results-stream-'));
  sopFile = join(root, 'market.sop.json');
  writeFileSync(sopFile, JSON.stringify(zicMarketSop({ name: 'market-stream', n: 500, steps: STEPS })));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('population.duckdb during a run', () => {
  it('holds the steps of a SIGKILLed run, is caught up by sop query, and after sop resume has the tables of an uninterrupted run', async () => {
    const whole = join(root, 'whole');
    const r = await sop('run', sopFile, '--seed', '3', '--max-turns', MAX_TURNS, '--out', whole, '--quiet');
    expect(r.status, r.stderr).toBe(0);
    const reference = await tables(onlyDir(whole));
    expect(reference.steps).toHaveLength(STEPS);

    const out = join(root, 'killed');
    const child = spawnCli(['run', sopFile, '--seed', '3', '--max-turns', MAX_TURNS, '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    const closed = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal })));
    // killed as soon as it prints a step at or after KILL_AFTER and its database exists (the step
    // lines are read as they come, not polled, so the run is far from its end when killed); a run
    // that ends first fails the test below, as its database could not be checked
    const killed = new Promise<boolean>((resolve) => {
      let seen = '';
      child.stdout.on('data', (chunk: Buffer) => {
        seen = (seen + chunk.toString()).slice(-200);
        const step = [...seen.matchAll(/^step (\d+) /gm)].pop();
        const db = existsSync(out) && readdirSync(out).length > 0 && existsSync(join(onlyDir(out), 'population.duckdb'));
        if (step && Number(step[1]) >= KILL_AFTER && db && !child.killed) {
          child.kill('SIGKILL');
          resolve(true);
        }
      });
      child.on('close', () => resolve(false));
    });
    expect(await killed, 'the run ended before its database was first appended').toBe(true);
    expect(await closed).toMatchObject({ signal: 'SIGKILL' });
    const dir = onlyDir(out);
    // the journal's whole lines: what follows its last newline, if anything, is a line the SIGKILL
    // cut short while it was being written, which every reader drops (src/features/journal/reader.ts)
    const lines = readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n').slice(0, -1);
    const journaled = lines.filter((l) => l.startsWith('{"type":"population_step"')).length;
    expect(journaled).toBeLessThan(STEPS);

    // the run appended its steps as it went: the database it left has steps, with nothing read from the journal after the kill
    const [[written]] = (await direct(dir, 'select count(*) from steps')) as [[bigint]];
    expect(Number(written)).toBeGreaterThan(0);
    expect(Number(written)).toBeLessThanOrEqual(journaled);

    // sop query of the killed run: every journaled step, and the run said killed
    expect(await query(dir, 'select count(*) as n from steps')).toEqual([{ n: journaled }]);
    expect(await query(dir, 'select status from run')).toEqual([{ status: 'killed' }]);
    const partial = await tables(dir);
    expect(partial.actions).toEqual(reference.actions.filter((a) => (a.step as number) <= journaled));

    const resumed = await sop('resume', dir, '--quiet');
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(await tables(dir)).toEqual(reference);
    const run = 'select status, turns from run';
    expect(await query(dir, run)).toEqual(await query(onlyDir(whole), run));
    expect(await query(dir, run)).toEqual([{ status: 'finished', turns: expect.any(Number) }]);
  }, 600_000);
});
