// RUN/population.duckdb kept up with its journal a stretch at a time (docs/population.md#results):
// the database remembers where in the journal it stands (`journal_position`: the byte offset and
// line number past the last line it read, the last good checkpoint's turn, the population states
// seen), and a catch-up reads the journal from there on, streamed, and appends what those lines
// add, in one transaction. A run does one after each checkpoint (src/api/results-writer.ts), so
// a killed run's database lacks at most the steps since the last one, which the next catch-up
// (a resume, `sop query`) reads from the journal; a full build is a catch-up from byte 0. The
// journal's effective history is kept as the whole-journal readers keep it
// (src/features/journal/reader.ts effectiveHistory, record.ts): a `resumed` line voids the rows
// of the turns after the checkpoint it continued from, and a damaged line voids those after the
// last good checkpoint before it, until a resume from there.
import type { DuckDBAppender, DuckDBConnection } from '@duckdb/node-api';
import { isAbsolute, resolve } from 'node:path';
import type { RunEvent } from '../core/runtime/events.js';
import { JournalError, readRunStarted, streamJournalLines } from '../features/journal/reader.js';
import { checkpointProblem, damageWarning, type CheckpointEvent, type JournalDamage } from '../features/journal/record.js';
import { LineCounter, miscountWarning } from '../features/journal/line-count.js';
import { addStepRows, agentsTable, stepEvent, type PopulationResults } from '../features/population/results.js';
import { describeJsonProblem } from '../shared/util/json-syntax.js';

type SqlType = 'VARCHAR' | 'INTEGER' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN' | 'JSON';
export interface Column {
  name: string;
  type: SqlType;
}

const cols = (spec: string): Column[] =>
  spec.split(',').map((c) => {
    const [name, type] = c.trim().split(' ');
    return { name: name!, type: type as SqlType };
  });

/** The fixed tables' columns (agents has the population's columns besides `state` and `id`). */
export const SCHEMA = {
  run: cols(
    'run_id VARCHAR, sop VARCHAR, seed BIGINT, status VARCHAR, turns INTEGER, journal_bytes BIGINT, agents_loaded BOOLEAN, built VARCHAR',
  ),
  steps: cols('state VARCHAR, visit INTEGER, step INTEGER, turn INTEGER, clock VARCHAR, minute INTEGER, active INTEGER'),
  actions: cols(
    'state VARCHAR, visit INTEGER, step INTEGER, turn INTEGER, seq INTEGER, agent VARCHAR, name VARCHAR, args JSON, ok BOOLEAN, output VARCHAR, tier VARCHAR',
  ),
  metrics: cols('state VARCHAR, visit INTEGER, step INTEGER, name VARCHAR, value DOUBLE'),
  surveys: cols('state VARCHAR, visit INTEGER, step INTEGER, survey VARCHAR, agent VARCHAR, question VARCHAR, answer VARCHAR'),
};

/** The table where the database says how far into the journal it has read (one row, one JSON text). */
export const POSITION_TABLE = 'journal_position';

/** A name as a SQL identifier. */
export const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** How far into the journal the database has read, and what it needs to go on from there. */
export interface JournalPosition {
  /** Byte offset just past the last line read. */
  bytes: number;
  /** Lines read. */
  lines: number;
  /** Turn of the last good top-level checkpoint of the effective history (-1: none yet). */
  turn: number;
  /** Lines since that checkpoint (the journal's own count of them: src/features/journal/line-count.ts). */
  since: number;
  /** Events of the effective history after that checkpoint. */
  after: number;
  /** The run as run_started says it. */
  run?: { run_id: string; sop: string; seed: number };
  /** Population states visited: what their first visit loaded, and the turn it began in. */
  states: Record<string, { agents?: number; columns?: string[]; source?: string; turn: number }>;
  /** The journal is damaged here: what follows counts only from a resume from before it. */
  damage?: JournalDamage;
  /** run_finished, unless a resume followed it. */
  finished?: { status: string; turns: number };
  /** The agents of every state in `states` are in the agents table. */
  agentsLoaded: boolean;
  /** The states whose agents the agents table holds (or tried to). */
  agentsOf: string[];
}

const START: JournalPosition = { bytes: 0, lines: 0, turn: -1, since: 0, after: 0, states: {}, agentsLoaded: true, agentsOf: [] };

/** Create the tables of a new database. */
export async function createTables(c: DuckDBConnection): Promise<void> {
  for (const [table, columns] of Object.entries(SCHEMA))
    await c.run(`CREATE TABLE ${ident(table)} (${columns.map((col) => `${ident(col.name)} ${col.type}`).join(', ')})`);
  await c.run(`CREATE TABLE agents (state VARCHAR, id VARCHAR)`);
  await c.run(`CREATE TABLE ${POSITION_TABLE} (position VARCHAR)`);
  await c.run(`INSERT INTO ${POSITION_TABLE} VALUES ('${JSON.stringify(START)}')`);
}

/** Where a database stands in its journal; undefined for a database this module did not write. */
export async function readPosition(c: DuckDBConnection): Promise<JournalPosition | undefined> {
  try {
    const rows = (await c.runAndReadAll(`SELECT position FROM ${POSITION_TABLE}`)).getRowsJS();
    const p = JSON.parse(String(rows[0]?.[0])) as JournalPosition;
    return typeof p.bytes === 'number' && typeof p.turn === 'number' ? p : undefined;
  } catch {
    return undefined;
  }
}

type Rows = Pick<PopulationResults, 'steps' | 'actions' | 'metrics' | 'surveys'>;
const noRows = (): Rows => ({ steps: [], actions: [], metrics: [], surveys: [] });
const rowCount = (r: Rows) => r.steps.length + r.actions.length + r.metrics.length + r.surveys.length;

/** Rows held before they are appended: a catch-up appends them every so many (its memory stays bounded). */
const BATCH_ROWS = 50_000;

/** Prefixes of lines a catch-up of its own run's lines need not parse (prompts and calls are most of an LLM run's bytes). */
const SKIPPED = ['{"type":"prompt', '{"type":"llm_call', '{"type":"message"', '{"type":"prompt_part"'];
const CHECKPOINT = /^\{"type":"checkpoint","turn":(\d+),/;

export interface CatchUpOptions {
  /** Lines from this byte offset on were written by this process: parsed only as far as the tables need. */
  trustedFrom?: number;
  /** The run's status when its journal has no end: running (this process writes it) or killed. */
  unfinished: () => 'running' | 'killed';
  /** Load the agents of a state that could not be loaded before again (default: yes). */
  retryAgents?: boolean;
}

/**
 * Read the journal from where the database stands to its last whole line, and append what it
 * adds, in one transaction. Returns warnings (damaged or miscounted lines, agents not loaded),
 * without a "warning: " prefix.
 */
export async function catchUp(c: DuckDBConnection, dir: string, o: CatchUpOptions): Promise<string[]> {
  const warnings: string[] = [];
  await c.run('BEGIN TRANSACTION');
  try {
    const pos = (await readPosition(c)) ?? { ...START };
    const counter = new LineCounter(pos.since);
    let rows = noRows();
    /** Rows already in the database past this turn are void (a resume or damage). */
    let voidAfter: number | undefined;
    let first: Record<string, unknown> | undefined;
    const flush = async () => {
      if (voidAfter !== undefined) {
        await voidRows(c, voidAfter);
        voidAfter = undefined;
      }
      await appendRows(c, rows);
      rows = noRows();
    };
    const voidPast = (turn: number) => {
      for (const k of ['steps', 'actions'] as const) rows[k] = (rows[k] as Array<{ turn: number }>).filter((r) => r.turn <= turn) as never;
      const kept = new Set(rows.steps.map((s) => `${s.state}\u0000${s.visit}\u0000${s.step}`));
      rows.metrics = rows.metrics.filter((m) => kept.has(`${m.state}\u0000${m.visit}\u0000${m.step}`));
      rows.surveys = rows.surveys.filter((m) => kept.has(`${m.state}\u0000${m.visit}\u0000${m.step}`));
      voidAfter = Math.min(voidAfter ?? Infinity, turn);
      for (const [s, v] of Object.entries(pos.states)) if (v.turn > turn) delete pos.states[s];
    };
    const apply = (e: RunEvent, line: number): 'flush' | undefined => {
      if (e.type === 'resumed') {
        const from = e.from_turn;
        if (pos.damage && from > pos.damage.turn) {
          pos.damage.dropped++;
          return; // continued from past the damage: the damage still counts
        }
        if (from > pos.turn && !(from === 0 && pos.turn === -1))
          throw new JournalError(`the journal says a run resumed from turn ${from}, but has no checkpoint at that turn before it`);
        pos.damage = undefined;
        pos.finished = undefined;
        pos.turn = from;
        pos.after = 0;
        voidPast(from);
        return 'flush';
      }
      if (pos.damage) {
        pos.damage.dropped++;
        return;
      }
      if (e.type === 'checkpoint') {
        const problem = line >= 0 ? checkpointProblem(e, pos.turn + 1) : undefined;
        if (problem) return damaged(line, problem);
        pos.turn = e.turn;
        pos.after = 0;
        return;
      }
      pos.after++;
      if (e.type === 'run_started') {
        pos.run = { run_id: String(e.run_id), sop: String(e.sop), seed: Number(e.seed) };
        first = e;
      } else if (e.type === 'run_finished') pos.finished = { status: e.status, turns: e.turns };
      else if (e.type === 'population_started') {
        if (typeof e.state === 'string' && !(e.state in pos.states))
          pos.states[e.state] = {
            agents: e.agents,
            columns: Array.isArray(e.columns) ? e.columns.map(String) : [],
            ...(typeof e.source === 'string' && isAbsolute(e.source) ? { source: e.source } : {}),
            turn: pos.turn + 1,
          };
      } else {
        const step = stepEvent(e);
        if (!step) return;
        if (!(step.state in pos.states)) pos.states[step.state] = { turn: step.turn };
        addStepRows(rows, step);
        if (rowCount(rows) >= BATCH_ROWS) return 'flush';
      }
      return;
    };
    const damaged = (line: number, reason: string): 'flush' => {
      if (line === 1) throw new JournalError(`${dir}:${line}: ${reason}; the run's first line is lost, so there is nothing to continue`);
      pos.damage = { file: '', line, reason, turn: pos.turn, dropped: pos.after };
      voidPast(pos.turn);
      return 'flush';
    };
    let file = '';
    for (;;) {
      let stop = false;
      const base = pos.lines;
      const read = streamJournalLines(dir, { from: pos.bytes }, (text, n, end) => {
        const line = base + n;
        const start = end - Buffer.byteLength(text) - 1;
        if (text.trim() === '') {
          pos.bytes = end;
          pos.lines = line;
          return;
        }
        let verdict: 'flush' | undefined;
        const trusted = o.trustedFrom !== undefined && start >= o.trustedFrom;
        const cp = trusted ? CHECKPOINT.exec(text) : null;
        if (cp) {
          counter.add({ type: 'checkpoint' }, line);
          verdict = apply({ type: 'checkpoint', turn: Number(cp[1]) } as CheckpointEvent, -1);
        } else if (trusted && SKIPPED.some((p) => text.startsWith(p))) {
          counter.add({ type: 'prompt' }, line);
          if (!pos.damage && !text.startsWith('{"type":"prompt_part"')) pos.after++;
        } else {
          let value: unknown;
          try {
            value = JSON.parse(text);
          } catch (err) {
            counter.add(undefined, line);
            verdict = pos.damage ? undefined : damaged(line, `damaged line (${describeJsonProblem(text, err).replace(/^line 1, /, '')})`);
            value = undefined;
          }
          if (value !== undefined) {
            if (
              typeof value !== 'object' ||
              value === null ||
              Array.isArray(value) ||
              typeof (value as { type?: unknown }).type !== 'string'
            ) {
              counter.add(undefined, line);
              if (!pos.damage) verdict = damaged(line, 'not a journal event (no "type")');
            } else {
              counter.add(value as Record<string, unknown>, line);
              if ((value as { type: string }).type !== 'prompt_part') verdict = apply(value as RunEvent, line);
            }
          }
        }
        pos.since = counter.sinceCheckpoint;
        pos.bytes = end;
        pos.lines = line;
        if (verdict === 'flush') {
          stop = true;
          return false;
        }
        return;
      });
      file = read.file;
      if (pos.damage && !pos.damage.file) pos.damage.file = read.file;
      await flush();
      if (!stop) break;
    }
    for (const m of counter.miscounts) warnings.push(miscountWarning(file, m));
    if (pos.damage) warnings.push(damageWarning(pos.damage));
    // the agents: loaded again for a state not seen before, or one that could not be loaded last time
    const names = Object.keys(pos.states);
    if ((o.retryAgents !== false && !pos.agentsLoaded) || names.join('\u0000') !== pos.agentsOf.join('\u0000')) {
      const started = first ?? firstLine(dir);
      const agents = await agentsTable(
        started.document,
        resolve(String(started.file)),
        new Map(Object.entries(pos.states).map(([s, v]) => [s, v])),
      );
      warnings.push(...agents.warnings);
      await c.run('DROP TABLE agents');
      await writeTable(c, 'agents', agents.columns, agents.rows);
      pos.agentsLoaded = agents.missing.length === 0;
      pos.agentsOf = names;
    }
    const status = pos.finished?.status ?? o.unfinished();
    const run = [
      pos.run?.run_id ?? null,
      pos.run?.sop ?? null,
      pos.run?.seed ?? null,
      status,
      pos.finished?.turns ?? Math.max(pos.turn, 0),
      pos.bytes,
      pos.agentsLoaded,
      new Date().toISOString(),
    ];
    await c.run('DELETE FROM run');
    await appendTable(c, 'run', SCHEMA.run, [run]);
    await c.run(`UPDATE ${POSITION_TABLE} SET position = $1`, [JSON.stringify(pos)]);
    await c.run('COMMIT');
  } catch (err) {
    await c.run('ROLLBACK').catch(() => {});
    throw err;
  }
  return warnings.map((w) => w.replace(/^warning: /, ''));
}

/** The journal's first line, run_started (the SOP document the agents are loaded from). */
export const firstLine = (dir: string): Record<string, unknown> => readRunStarted(dir);

/** Delete the rows of the turns after `turn` (a step's metrics and surveys go with its steps row). */
async function voidRows(c: DuckDBConnection, turn: number): Promise<void> {
  await c.run(`DELETE FROM steps WHERE turn > ${turn}`);
  await c.run(`DELETE FROM actions WHERE turn > ${turn}`);
  for (const t of ['metrics', 'surveys'])
    await c.run(
      `DELETE FROM ${t} x WHERE NOT EXISTS (SELECT 1 FROM steps s WHERE s.state = x.state AND s.visit = x.visit AND s.step = x.step)`,
    );
}

async function appendRows(c: DuckDBConnection, rows: Rows): Promise<void> {
  const row =
    <T extends object>(schema: Column[]) =>
    (r: T) =>
      schema.map((col) => (r as Record<string, unknown>)[col.name]);
  await appendTable(c, 'steps', SCHEMA.steps, rows.steps.map(row(SCHEMA.steps)));
  await appendTable(c, 'actions', SCHEMA.actions, rows.actions.map(row(SCHEMA.actions)));
  await appendTable(c, 'metrics', SCHEMA.metrics, rows.metrics.map(row(SCHEMA.metrics)));
  await appendTable(c, 'surveys', SCHEMA.surveys, rows.surveys.map(row(SCHEMA.surveys)));
}

/** Create a table and append its rows. */
export async function writeTable(c: DuckDBConnection, table: string, columns: Column[], rows: ReadonlyArray<ReadonlyArray<unknown>>) {
  await c.run(`CREATE TABLE ${ident(table)} (${columns.map((col) => `${ident(col.name)} ${col.type}`).join(', ')})`);
  await appendTable(c, table, columns, rows);
}

async function appendTable(c: DuckDBConnection, table: string, columns: Column[], rows: ReadonlyArray<ReadonlyArray<unknown>>) {
  if (rows.length === 0) return;
  const a = await c.createAppender(table);
  try {
    for (const r of rows) {
      columns.forEach((col, j) => append(a, col.type, r[j]));
      a.endRow();
    }
    a.flushSync();
  } finally {
    a.closeSync();
  }
}

function append(a: DuckDBAppender, type: SqlType, v: unknown): void {
  if (v === null || v === undefined) return a.appendNull();
  switch (type) {
    case 'INTEGER':
      return a.appendInteger(Number(v));
    case 'BIGINT':
      return a.appendBigInt(BigInt(v as number));
    case 'DOUBLE':
      return a.appendDouble(Number(v));
    case 'BOOLEAN':
      return a.appendBoolean(v === true);
    default:
      return a.appendVarchar(String(v));
  }
}
