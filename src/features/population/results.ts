// A run's population states as rows (docs/population.md#results): what its `population_started`
// and `population_step` events say, laid out as the tables of RUN/population.duckdb (steps,
// actions, metrics, surveys) and the agents table, whose rows are the populations loaded again
// from the SOP the run ran. Pure functions of events already read: the journal is read elsewhere
// (src/api/results-db.ts), and so is the database.
import { existsSync } from 'node:fs';
import { dirname, isAbsolute } from 'node:path';
import type { PopulationAction, RunEvent } from '../../core/runtime/events.js';
import { loadPopulation } from './population.js';
import { sourcePath } from './validate.js';
import { idColumnOf, type PopulationSpec, type Value } from './types.js';
import { isObject } from '../../shared/util/is-object.js';

export type StepEvent = Extract<RunEvent, { type: 'population_step' }>;

/** A row of the steps table: the step event's own fields. */
export type StepRow = Pick<StepEvent, 'state' | 'visit' | 'step' | 'turn' | 'clock' | 'minute' | 'active'>;

export interface ActionRow {
  state: string;
  visit: number;
  step: number;
  turn: number;
  /** 1-based place in the step's list: the order applied (refused and invalid actions last). */
  seq: number;
  agent: string;
  name: string;
  /** The action's arguments as JSON text. */
  args: string;
  ok: boolean;
  output: string;
  tier: string;
}

export interface MetricRow {
  state: string;
  visit: number;
  step: number;
  name: string;
  value: number | null;
}

export interface SurveyRow {
  state: string;
  visit: number;
  step: number;
  survey: string;
  agent: string;
  question: string;
  answer: string;
}

export interface PopulationResults {
  steps: StepRow[];
  actions: ActionRow[];
  metrics: MetricRow[];
  surveys: SurveyRow[];
  /**
   * The population states the run visited, in order of their first visit, with what their first
   * visit loaded (`source`: its data file, absolute, when the journal says).
   */
  states: Map<string, { agents?: number; columns?: string[]; source?: string }>;
}

const text = (v: unknown): string => (typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v));
const whole = (v: unknown): number => (typeof v === 'number' && Number.isSafeInteger(v) ? v : 0);

/**
 * A population_step event in its declared shape, or undefined for a line that only says it is one
 * (a hand-edited or damaged journal is read as far as it makes sense, never thrown over).
 */
export function stepEvent(e: RunEvent): StepEvent | undefined {
  if (e.type !== 'population_step') return undefined;
  const raw = e as unknown as Record<string, unknown>;
  if (typeof raw.state !== 'string' || !Array.isArray(raw.actions)) return undefined;
  const actions: PopulationAction[] = raw.actions.filter(isObject).map((a) => ({
    agent: text(a.agent),
    name: text(a.name),
    args: isObject(a.args) ? a.args : {},
    ok: a.ok === true,
    output: text(a.output),
    tier: text(a.tier) as PopulationAction['tier'],
  }));
  const metrics: Record<string, number | null> = {};
  if (isObject(raw.metrics))
    for (const [k, v] of Object.entries(raw.metrics)) metrics[k] = typeof v === 'number' && Number.isFinite(v) ? v : null;
  const surveys = Array.isArray(raw.surveys)
    ? raw.surveys
        .filter(isObject)
        .map((q) => ({ survey: text(q.survey), agent: text(q.agent), question: text(q.question), answer: text(q.answer) }))
    : [];
  return {
    type: 'population_step',
    state: raw.state,
    visit: whole(raw.visit),
    step: whole(raw.step),
    turn: whole(raw.turn),
    clock: text(raw.clock),
    minute: whole(raw.minute),
    active: whole(raw.active),
    actions,
    metrics,
    ...(surveys.length > 0 ? { surveys } : {}),
  };
}

/** The rows of a run's population steps, from its effective events (in journal order). */
export function populationResults(events: readonly RunEvent[]): PopulationResults {
  const out: PopulationResults = { steps: [], actions: [], metrics: [], surveys: [], states: new Map() };
  for (const e of events) {
    if (e.type === 'population_started') {
      if (typeof e.state === 'string' && !out.states.has(e.state))
        out.states.set(e.state, {
          agents: e.agents,
          columns: Array.isArray(e.columns) ? e.columns.map(String) : [],
          ...(typeof e.source === 'string' && isAbsolute(e.source) ? { source: e.source } : {}),
        });
      continue;
    }
    const step = stepEvent(e);
    if (!step) continue;
    if (!out.states.has(step.state)) out.states.set(step.state, {});
    addStepRows(out, step);
  }
  return out;
}

/** The rows of one population step (stepEvent's shape), appended to `out`. */
export function addStepRows(out: Pick<PopulationResults, 'steps' | 'actions' | 'metrics' | 'surveys'>, e: StepEvent): void {
  const at = { state: e.state, visit: e.visit, step: e.step };
  out.steps.push({ ...at, turn: e.turn, clock: e.clock, minute: e.minute, active: e.active });
  e.actions.forEach((a, i) =>
    out.actions.push({
      ...at,
      turn: e.turn,
      seq: i + 1,
      agent: a.agent,
      name: a.name,
      args: JSON.stringify(a.args),
      ok: a.ok,
      output: a.output,
      tier: a.tier,
    }),
  );
  for (const [name, value] of Object.entries(e.metrics)) out.metrics.push({ ...at, name, value });
  for (const s of e.surveys ?? []) out.surveys.push({ ...at, survey: s.survey, agent: s.agent, question: s.question, answer: s.answer });
}

/** One metric of a population state over its steps: a series per visit. */
export interface MetricSeries {
  state: string;
  name: string;
  visits: Map<number, Array<{ step: number; value: number | null }>>;
}

/** Every metric of every population state over the steps, in order of first appearance. */
export function metricSeries(events: readonly RunEvent[]): MetricSeries[] {
  const out = new Map<string, MetricSeries>();
  for (const m of populationResults(events).metrics) {
    const key = `${m.state}\u0000${m.name}`;
    let s = out.get(key);
    if (!s) out.set(key, (s = { state: m.state, name: m.name, visits: new Map() }));
    const points = s.visits.get(m.visit) ?? [];
    points.push({ step: m.step, value: m.value });
    s.visits.set(m.visit, points);
  }
  return [...out.values()];
}

/** One step of an agent's timeline: what it was shown (its prompt, when it had its own call), what it did, what that did. */
export interface TimelineStep {
  state: string;
  visit: number;
  step: number;
  turn: number;
  clock: string;
  /** The user message of the agent's own decision call at this step (per-agent tier), when the journal has it. */
  shown?: string;
  actions: Array<Omit<ActionRow, 'state' | 'visit' | 'step' | 'turn' | 'agent'>>;
  surveys: Array<{ survey: string; question: string; answer: string }>;
}

/** An agent's steps: those in which it acted, was acted for (an intervention) or answered a survey. */
export function agentTimeline(events: readonly RunEvent[], agent: string): TimelineStep[] {
  const out: TimelineStep[] = [];
  /** The agent's last decision prompt, by state and turn (its prompt comes before the step's event). */
  const prompts = new Map<string, string>();
  for (let e of events) {
    if (e.type === 'prompt') {
      if (e.agent === agent && e.purpose === 'agent' && typeof e.state === 'string') {
        const user = [...(Array.isArray(e.messages) ? e.messages : [])].reverse().find((m) => isObject(m) && m.role === 'user');
        if (user && typeof user.content === 'string') prompts.set(`${e.state}\u0000${e.turn}`, user.content);
      }
      continue;
    }
    const step = stepEvent(e);
    if (!step) continue;
    e = step;
    const mine = e.actions.map((a, i) => ({ a, seq: i + 1 })).filter(({ a }) => a.agent === agent);
    const surveys = (e.surveys ?? []).filter((s) => s.agent === agent);
    if (mine.length === 0 && surveys.length === 0) continue;
    const shown = prompts.get(`${e.state}\u0000${e.turn}`);
    out.push({
      state: e.state,
      visit: e.visit,
      step: e.step,
      turn: e.turn,
      clock: e.clock,
      ...(shown !== undefined ? { shown } : {}),
      actions: mine.map(({ a, seq }) => ({
        seq,
        name: a.name,
        args: JSON.stringify(a.args),
        ok: a.ok,
        output: a.output,
        tier: a.tier,
      })),
      surveys: surveys.map((s) => ({ survey: s.survey, question: s.question, answer: s.answer })),
    });
  }
  return out;
}

/** Agents of the run, ranked by how many actions they took (most first, then by id). */
export function busiestAgents(events: readonly RunEvent[], n: number): Array<{ agent: string; actions: number }> {
  const counts = new Map<string, number>();
  for (const e of events)
    for (const a of stepEvent(e)?.actions ?? []) if (a.tier !== 'injected') counts.set(a.agent, (counts.get(a.agent) ?? 0) + 1);
  return [...counts]
    .map(([agent, actions]) => ({ agent, actions }))
    .sort((a, b) => b.actions - a.actions || (a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : 0))
    .slice(0, n);
}

// --- the agents table ---

export type ColumnType = 'BIGINT' | 'DOUBLE' | 'BOOLEAN' | 'VARCHAR';

export interface AgentsTable {
  /** `state`, `id`, then each population column but the id column (renamed when it would clash: `attr_state`). */
  columns: Array<{ name: string; type: ColumnType }>;
  /** One row per agent of each population state, values in `columns` order (null where a state has no such column). */
  rows: Array<Array<Value | null>>;
  /** A population that could not be loaded again, or that differs from what the run loaded. */
  warnings: string[];
  /** The states whose agents could not be loaded again (left out of `rows`). */
  missing: string[];
}

/**
 * The agents of each population state the run visited, loaded again the way the run loaded them
 * (the same spec from the SOP document it ran: the same agents). The data file is the one the
 * journal names (absolute, so from any folder); a journal that names none, or a file no longer
 * there, falls back to the spec's file relative to the SOP file the run names (resolved from the
 * current folder, as older runs were).
 */
export async function agentsTable(document: unknown, sopFile: string, states: PopulationResults['states']): Promise<AgentsTable> {
  const warnings: string[] = [];
  const missing: string[] = [];
  const names: string[] = ['state', 'id'];
  /** Table column of each population column. */
  const rename = new Map<string, string>();
  const loaded: Array<{ state: string; columns: string[]; idColumn: string; rows: Array<Record<string, Value>>; ids: readonly string[] }> =
    [];
  const defs = (document as { states?: Record<string, { population?: unknown }> } | undefined)?.states ?? {};
  for (const [state, seen] of states) {
    const spec = defs[state]?.population as PopulationSpec | undefined;
    if (!spec) {
      warnings.push(`agents of state "${state}" not loaded: the SOP document in the journal has no population for it`);
      missing.push(state);
      continue;
    }
    let pop;
    try {
      pop = await loadPopulation(asRun(spec, seen.source, dirname(sopFile)), {
        baseDir: dirname(sopFile),
        pointer: `/states/${state}/population`,
      });
    } catch (err) {
      warnings.push(`agents of state "${state}" not loaded: ${(err as Error).message}`);
      missing.push(state);
      continue;
    }
    if (seen.agents !== undefined && (seen.agents !== pop.size || seen.columns?.join('\u0000') !== pop.columns.join('\u0000')))
      warnings.push(
        `agents of state "${state}": its population has changed since the run (${pop.size} agents of columns ${pop.columns.join(', ')} now, ` +
          `${seen.agents} of ${seen.columns?.join(', ') ?? '?'} then)`,
      );
    const idColumn = idColumnOf(spec);
    for (const c of pop.columns) {
      if (c === idColumn || rename.has(c)) continue;
      let name = c;
      while (names.includes(name)) name = `attr_${name}`;
      names.push(name);
      rename.set(c, name);
    }
    const rows = Array.from({ length: pop.size }, (_, i) => pop.row(i));
    loaded.push({ state, columns: [...pop.columns], idColumn, rows, ids: pop.ids });
  }
  const at = new Map(names.map((n, i) => [n, i]));
  const rows: Array<Array<Value | null>> = [];
  for (const l of loaded)
    l.rows.forEach((row, i) => {
      const out: Array<Value | null> = names.map(() => null);
      out[0] = l.state;
      out[1] = l.ids[i]!;
      for (const c of l.columns) if (c !== l.idColumn) out[at.get(rename.get(c)!)!] = row[c]!;
      rows.push(out);
    });
  const columns = names.map((name, j) => ({ name, type: j < 2 ? ('VARCHAR' as const) : columnType(rows, j) }));
  for (const [j, c] of columns.entries()) if (c.type === 'VARCHAR') for (const r of rows) if (r[j] !== null) r[j] = String(r[j]);
  return { columns, rows, warnings, missing };
}

/** The spec with the data file the run loaded, when the journal names it and it is there, or the SOP's relative one is not. */
function asRun(spec: PopulationSpec, source: string | undefined, baseDir: string): PopulationSpec {
  if (source === undefined || !('file' in spec.source)) return spec;
  if (!existsSync(source) && existsSync(sourcePath(spec.source.file, baseDir))) return spec;
  return { ...spec, source: { ...spec.source, file: source } };
}

/** The type of a column: whole numbers, numbers, true/false, else text (a column of mixed values is text). */
function columnType(rows: ReadonlyArray<ReadonlyArray<Value | null>>, j: number): ColumnType {
  let numbers = 0;
  let whole = 0;
  let booleans = 0;
  let values = 0;
  for (const r of rows) {
    const v = r[j];
    if (v === null || v === undefined) continue;
    values++;
    if (typeof v === 'number') {
      numbers++;
      if (Number.isSafeInteger(v)) whole++;
    } else if (typeof v === 'boolean') booleans++;
  }
  if (values > 0 && numbers === values) return whole === values ? 'BIGINT' : 'DOUBLE';
  if (values > 0 && booleans === values) return 'BOOLEAN';
  return 'VARCHAR';
}
