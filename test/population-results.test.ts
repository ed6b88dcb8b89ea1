// A run's population states as data (docs/population.md#results): RUN/population.duckdb written at
// the end of the social-spread example (--llm mock), `sop query` as a table, CSV and JSON, `sop
// export --parquet` read back by DuckDB, the database built again when deleted or stale, a resumed
// run's database holding only the effective history, and one-line errors.
import { DuckDBInstance } from '@duckdb/node-api';
import {
  appendFileSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSop, resumeRun, runSop } from '../src/index.js';
import { queryResults, ResultsError } from '../src/api/results-db.js';
import { readJournal } from '../src/features/journal/reader.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';

const SOP = 'examples/social-spread/social-spread.sop.json';
const tmp = mkdtempSync(join(tmpdir(), 'sop-results-'));
let run: string;
/** Actions per step, from the journal. */
let perStep: number[];

const sop = (...args: string[]) => spawnCliAsync(args, { cwd: process.cwd() });
type Step = Extract<RunEvent, { type: 'population_step' }>;
const steps = (dir: string) => readJournal(dir).events.filter((e): e is Step => e.type === 'population_step');

async function readBack(sql: string): Promise<unknown[][]> {
  const db = await DuckDBInstance.create(':memory:');
  const c = await db.connect();
  try {
    return (await c.runAndReadAll(sql)).getRowsJS();
  } finally {
    c.closeSync();
    db.closeSync();
  }
}

beforeAll(async () => {
  requireBuiltCli();
  const r = await sop('run', SOP, '--llm', 'mock', '--out', join(tmp, 'runs'), '--quiet');
  expect(r.status, r.stderr).toBe(0);
  run = join(tmp, 'runs', readdirSync(join(tmp, 'runs'))[0]!);
  perStep = steps(run).map((e) => e.actions.length);
  expect(perStep).toHaveLength(6);
}, 120_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('sop query', () => {
  it('is written at the end of the run, and prints one row per step as an aligned table', async () => {
    expect(existsSync(join(run, 'population.duckdb'))).toBe(true);
    expect(readdirSync(run).filter((f) => f.includes('.tmp') || f.endsWith('.wal'))).toEqual([]);
    const r = await sop('query', run, 'select step, count(*) as n from actions group by step order by step');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^step {2,}n$/);
    expect(lines[1]).toMatch(/^-{4} {2}-+$/);
    expect(lines.slice(2, 8).map((l) => l.trim().split(/\s+/).map(Number))).toEqual(perStep.map((n, i) => [i + 1, n]));
    expect(lines[8]).toBe('(6 rows)');
  });

  it('prints CSV with --csv and a JSON array with --json', async () => {
    const csv = await sop('query', run, 'select step, clock, active from steps order by step', '--csv');
    expect(csv.status).toBe(0);
    const rows = csv.stdout.split('\r\n');
    expect(rows[0]).toBe('step,clock,active');
    expect(rows.slice(1, 7)).toEqual(steps(run).map((e) => `${e.step},${e.clock},${e.active}`));
    const json = await sop('query', run, "select step, value from metrics where name = 'cascade.news.size' order by step", '--json');
    expect(json.status).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(steps(run).map((e) => ({ step: e.step, value: e.metrics['cascade.news.size'] })));
  });

  it('holds the agents reloaded from the population, typed, joinable with their actions', async () => {
    const r = await sop(
      'query',
      run,
      'select count(*) as n, count(distinct id) as ids, min(age) as young, typeof(any_value(age)) as t, any_value(state) as s from agents',
      '--json',
    );
    expect(JSON.parse(r.stdout)).toEqual([{ n: 1000, ids: 1000, young: expect.any(Number), t: 'BIGINT', s: 'feed' }]);
    const cols = await sop(
      'query',
      run,
      "select column_name from information_schema.columns where table_name = 'agents' order by ordinal_position",
      '--csv',
    );
    expect(cols.stdout.trim().split('\r\n').slice(1)).toEqual(['state', 'id', 'name', 'age', 'party', 'interest', 'followers']);
    const joined = await sop(
      'query',
      run,
      'select count(*) as n from actions x join agents a on a.id = x.agent and a.state = x.state',
      '--json',
    );
    expect(JSON.parse(joined.stdout)).toEqual([{ n: perStep.reduce((a, b) => a + b, 0) }]);
    const args = await sop('query', run, "select args->>'post_id' as post from actions where name = 'repost' and ok limit 1", '--json');
    expect((JSON.parse(args.stdout) as Array<{ post: string }>)[0]!.post).toMatch(/^(news|p\d+)$/);
  });

  it('says a bad statement, a missing run and a run without population states in one line', async () => {
    const bad = await sop('query', run, 'selec step from actions');
    expect(bad.status).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toBe('error: Parser Error: syntax error at or near "selec"\n');
    const unknown = await sop('query', run, 'select nope from actions');
    expect(unknown.stderr.trimEnd().split('\n')).toHaveLength(1);
    const missing = await sop('query', join(tmp, 'no-such-run'), 'select 1');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe(`error: ${join(tmp, 'no-such-run')}: no journal.jsonl here; is it a run folder (sop runs lists them)?\n`);
    const debate = await sop('run', 'examples/debate/debate.sop.json', '--llm', 'mock', '--out', join(tmp, 'debate'), '--quiet');
    expect(debate.status).toBe(0);
    const dir = join(tmp, 'debate', readdirSync(join(tmp, 'debate'))[0]!);
    const none = await sop('query', dir, 'select 1');
    expect(none.status).toBe(1);
    expect(none.stderr).toMatch(
      /^error: .*: this run has no population states, so it has no population\.duckdb \(see docs\/population\.md#results\)\n$/,
    );
    expect(existsSync(join(dir, 'population.duckdb'))).toBe(false);
  }, 60_000);

  it('opens the database read-only with no file access: no reading, writing or attaching files, no settings changed', async () => {
    const before = statSync(join(run, 'population.duckdb')).mtimeMs;
    const tries = [
      "select * from read_csv('/etc/passwd')",
      `select * from read_json('${join(run, 'journal.jsonl')}')`,
      `copy actions to '${join(run, 'journal.jsonl')}'`,
      `copy actions to '${join(tmp, 'out.csv')}'`,
      `attach '${join(tmp, 'other.duckdb')}'`,
      'set enable_external_access = true',
      'install httpfs',
      "insert into steps values ('x', 1, 1, 1, '00:00', 0, 0)",
      'drop table actions',
    ];
    for (const sql of tries) {
      const err = (await queryResults(run, sql).catch((e: unknown) => e)) as Error;
      expect(err, sql).toBeInstanceOf(ResultsError);
      expect(err.message, sql).toMatch(/^(Permission Error|Invalid Input Error|Catalog Error)[^\n]*$/);
    }
    expect(existsSync(join(tmp, 'out.csv'))).toBe(false);
    expect(existsSync(join(tmp, 'other.duckdb'))).toBe(false);
    expect(readFileSync(join(run, 'journal.jsonl'), 'utf8').startsWith('{"type":"run_started"')).toBe(true);
    expect(statSync(join(run, 'population.duckdb')).mtimeMs).toBe(before);
    expect((await queryResults(run, 'select count(*) as n from steps')).rows).toEqual([[6]]);
  });

  it('builds the database again from the journal when it is deleted', async () => {
    const first = (await sop('query', run, 'select count(*) as n from actions', '--json')).stdout;
    rmSync(join(run, 'population.duckdb'));
    const again = await sop('query', run, 'select count(*) as n from actions', '--json');
    expect(again.status).toBe(0);
    expect(again.stdout).toBe(first);
    expect(existsSync(join(run, 'population.duckdb'))).toBe(true);
  });

  it('loads the agents again from another folder: the journal names the data file the run loaded', async () => {
    const ex = join(tmp, 'ex');
    mkdirSync(ex);
    for (const f of ['social-spread.sop.json', 'personas.csv']) copyFileSync(join('examples/social-spread', f), join(ex, f));
    // run from tmp with a relative SOP path (ex/...), queried from the repository's folder
    const r = await spawnCliAsync(['run', 'ex/social-spread.sop.json', '--llm', 'mock', '--out', 'ex-runs', '--quiet'], { cwd: tmp });
    expect(r.status, r.stderr).toBe(0);
    const dir = join(tmp, 'ex-runs', readdirSync(join(tmp, 'ex-runs'))[0]!);
    const started = readJournal(dir).events.find((e) => e.type === 'population_started');
    expect(started).toMatchObject({ source: join(ex, 'personas.csv') });
    rmSync(join(dir, 'population.duckdb'));
    const count = 'select count(*) as n, count(distinct party) as parties, (select agents_loaded from run) as loaded from agents';
    const elsewhere = await sop('query', dir, count, '--json');
    expect(elsewhere.stderr).toBe('');
    expect(JSON.parse(elsewhere.stdout)).toEqual([{ n: 1000, parties: 3, loaded: true }]);
    // the data file gone: its agents are left out with a warning naming it, and the next query tries again
    renameSync(join(ex, 'personas.csv'), join(ex, 'away.csv'));
    rmSync(join(dir, 'population.duckdb'));
    const gone = await sop('query', dir, 'select count(*) as n, (select agents_loaded from run) as loaded from agents', '--json');
    expect(gone.status).toBe(0);
    expect(gone.stderr).toBe(`warning: agents of state "feed" not loaded: ${join(ex, 'personas.csv')}: file not found\n`);
    expect(JSON.parse(gone.stdout)).toEqual([{ n: 0, loaded: false }]);
    renameSync(join(ex, 'away.csv'), join(ex, 'personas.csv'));
    const back = await sop('query', dir, count, '--json');
    expect(back.stderr).toBe('');
    expect(JSON.parse(back.stdout)).toEqual([{ n: 1000, parties: 3, loaded: true }]);
  });

  it("reads a journal that names no data file (an older run's) from the SOP file's path, relative to the current folder", async () => {
    const dir = join(tmp, 'older');
    mkdirSync(dir);
    const lines = readFileSync(join(run, 'journal.jsonl'), 'utf8').replace(/,"source":"[^"]*"/g, '');
    writeFileSync(join(dir, 'journal.jsonl'), lines);
    expect(readJournal(dir).events.find((e) => e.type === 'population_started')).not.toHaveProperty('source');
    const count = 'select count(*) as n from agents';
    const elsewhere = await spawnCliAsync(['query', dir, count, '--json'], { cwd: tmp });
    expect(elsewhere.status).toBe(0);
    expect(elsewhere.stderr).toBe('warning: agents of state "feed" not loaded: personas.csv: file not found\n');
    expect(JSON.parse(elsewhere.stdout)).toEqual([{ n: 0 }]);
    const here = await sop('query', dir, 'select count(*) as n, (select agents_loaded from run) as loaded from agents', '--json');
    expect(here.stderr).toBe('');
    expect(JSON.parse(here.stdout)).toEqual([{ n: 1000, loaded: true }]);
  });

  it('refuses a population.duckdb that is a symbolic link out of the run folder', async () => {
    const dir = join(tmp, 'linked');
    mkdirSync(dir);
    copyFileSync(join(run, 'journal.jsonl'), join(dir, 'journal.jsonl'));
    copyFileSync(join(run, 'population.duckdb'), join(tmp, 'elsewhere.duckdb'));
    symlinkSync(join(tmp, 'elsewhere.duckdb'), join(dir, 'population.duckdb'));
    for (const args of [
      ['query', dir, 'select 1'],
      ['export', dir, '--parquet', join(tmp, 'linked-out')],
    ]) {
      const r = await sop(...args);
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(
        `error: ${join(dir, 'population.duckdb')}: is a symbolic link; population.duckdb must be a file of the run folder\n`,
      );
    }
    expect(existsSync(join(tmp, 'linked-out'))).toBe(false);
  });

  it('has --help text with examples', async () => {
    const r = await sop('query', '--help');
    expect(r.stdout).toContain('population.duckdb');
    expect(r.stdout).toContain('Examples:');
    expect((await sop('export', '--help')).stdout).toContain('--parquet');
  });
});

describe('sop export', () => {
  it('writes one Parquet file per table, which DuckDB reads back with the same row counts', async () => {
    const out = join(tmp, 'parquet');
    const r = await sop('export', run, '--parquet', out);
    expect(r.status, r.stderr).toBe(0);
    const tables = ['run', 'agents', 'steps', 'actions', 'metrics', 'surveys'];
    expect(readdirSync(out).sort()).toEqual(tables.map((t) => `${t}.parquet`).sort());
    for (const table of tables) {
      const n = (await queryResults(run, `select count(*) from ${table}`)).rows[0]![0];
      const back = await readBack(`select count(*) from read_parquet('${join(out, `${table}.parquet`)}')`);
      expect(Number(back[0]![0]), table).toBe(n);
      expect(r.stdout).toContain(`${join(out, `${table}.parquet`)}  ${String(n)} row`);
    }
    const steps6 = await readBack(`select count(*) from read_parquet('${join(out, 'steps.parquet')}')`);
    expect(Number(steps6[0]![0])).toBe(6);
  });
});

describe('a resumed run', () => {
  it('is built again when the journal grows, and after a resume holds only the effective history', async () => {
    const out = join(tmp, 'resume');
    const h = runSop(loadSop(SOP), { llm: 'mock', out, runId: 'stopped' });
    for await (const e of h) if (e.type === 'population_step' && e.step === 3) h.stop();
    expect((await h.result).status).toBe('interrupted');
    const dir = join(out, 'stopped');
    const count = async () =>
      JSON.parse((await sop('query', dir, 'select count(*) as n from steps', '--json')).stdout) as Array<{ n: number }>;
    expect(await count()).toEqual([{ n: 3 }]);
    // what a killed attempt leaves: a step journaled after the last checkpoint (of turn 3), which a resume redoes
    const voided = {
      ...steps(dir)[2]!,
      step: 4,
      turn: 4,
      actions: [{ agent: 'a1', name: 'idle', args: {}, ok: true, output: 'VOIDED', tier: 'rule' }],
    };
    appendFileSync(join(dir, 'journal.jsonl'), JSON.stringify(voided) + '\n');
    expect(await count()).toEqual([{ n: 4 }]); // the journal's new line is read and appended
    const resumed = resumeRun(dir, { llm: 'mock' });
    for await (const e of resumed) void e;
    expect((await resumed.result).status).toBe('finished');
    const r = await sop(
      'query',
      dir,
      "select step, count(*) as n, count(*) filter (where output = 'VOIDED') as v from actions group by step order by step",
      '--json',
    );
    expect(JSON.parse(r.stdout)).toEqual(perStep.map((n, i) => ({ step: i + 1, n, v: 0 })));
  }, 120_000);
});
