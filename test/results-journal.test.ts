// RUN/population.duckdb caught up with its journal a stretch at a time (src/api/results-journal.ts):
// the database says how far into the journal it has read, a torn last line is left for later, and
// a damaged line keeps the rows up to the last good checkpoint before it, with the warning the
// other readers give (sop show), until a resume from there.
import { DuckDBInstance } from '@duckdb/node-api';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadSop, runSop } from '../src/index.js';
import { queryResults, updateResultsDb } from '../src/api/results-db.js';
import { damageWarning, loadRunRecord } from '../src/features/journal/record.js';

let root: string;
let dir: string;
const STEPS = 8;

const position = async (d: string): Promise<{ bytes: number; lines: number; turn: number }> => {
  const db = await DuckDBInstance.create(join(d, 'population.duckdb'), { access_mode: 'READ_ONLY' });
  const c = await db.connect();
  try {
    return JSON.parse(String((await c.runAndReadAll('select position from journal_position')).getRowsJS()[0]![0])) as never;
  } finally {
    c.closeSync();
    db.closeSync();
  }
};
const steps = async (d: string) => (await queryResults(d, 'select step from steps order by step')).rows.map((r) => r[0]);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sop-results-journal-'));
  const file = join(root, 'market.sop.json');
  writeFileSync(
    file,
    JSON.stringify({
      name: 'market-catch-up',
      agents: {},
      root: 'trading',
      states: {
        trading: {
          population: { source: { generate: { n: 30, seed: 5, columns: { role: { categorical: { buyer: 0.5, seller: 0.5 } } } } } },
          world: { type: 'market', params: { assign: { units: 3 } } },
          actions: ['bid', 'ask', 'idle'],
          activation: { probability: 0.6 },
          cognition: { tier: 'rule', policy: 'zic' },
          max_steps: STEPS,
          next_states: { 1: 'closed' },
        },
        closed: { final: true },
      },
    }),
  );
  const h = runSop(loadSop(file), { llm: 'mock', out: join(root, 'runs'), runId: 'r' });
  for await (const e of h) void e;
  expect((await h.result).status).toBe('finished');
  dir = join(root, 'runs', 'r');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the results database and its journal', () => {
  it('has read the whole journal when the run ends; a torn line after it is left for later', async () => {
    const size = statSync(join(dir, 'journal.jsonl')).size;
    expect(await position(dir)).toMatchObject({ bytes: size });
    appendFileSync(join(dir, 'journal.jsonl'), '{"type":"population_step","state":"trad'); // a kill in the middle of a write
    expect((await updateResultsDb(dir)).warnings).toEqual([]);
    expect(await position(dir)).toMatchObject({ bytes: size });
    expect(await steps(dir)).toEqual(Array.from({ length: STEPS }, (_, i) => i + 1));
  });

  it('keeps the rows up to the last good checkpoint before a damaged line, with the warning sop show gives', async () => {
    const copy = join(root, 'damaged');
    const lines = readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n');
    const at = lines.findIndex((l) => l.startsWith('{"type":"checkpoint","turn":4,'));
    lines[at + 1] = lines[at + 1]!.slice(0, 25) + '#';
    mkdirSync(copy);
    writeFileSync(join(copy, 'journal.jsonl'), lines.join('\n'));
    const record = loadRunRecord(copy);
    const r = await queryResults(copy, 'select count(*) as n, max(step) as last from steps');
    expect(r.warnings).toEqual([damageWarning(record.damage!).replace(/^warning: /, '')]);
    expect(r.rows).toEqual([[4, 4]]);
    expect((await queryResults(copy, 'select status, turns from run')).rows).toEqual([['killed', 4]]);
  });
});
