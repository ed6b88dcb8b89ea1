// OUT/results.jsonl (one line per run, the last line of a key wins, so a run is never counted
// twice) and OUT/summary.md (counts by status and by output value, token and cost totals).
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';
import { SWEEP_AGAIN, writeFailure } from '../../shared/io/disk-full.js';
import { meanInterval } from '../../features/validity/stats.js';
import type { GridPoint } from './grid.js';

export const RESULTS_FILE = 'results.jsonl';
export const SUMMARY_FILE = 'summary.md';

/** A line of results.jsonl: the run's point of the grid (./grid.ts), then what came of the run. */
export interface ResultLine extends Pick<GridPoint, 'key' | 'seed' | 'inputs' | 'model' | 'repeat' | 'row' | 'set' | 'arm'> {
  /** finished | max_turns | budget | failed | interrupted (a run that could not be done says why in `error`). */
  status: string;
  /** Status "budget": which budget was spent, and how much of it. */
  budget?: string;
  turns: number;
  final_state?: string;
  /** The last value of every output tag, keyed by tag. */
  outputs: Record<string, string>;
  /** The population metrics after each population state's last step: state -> metric -> value. */
  metrics?: Record<string, Record<string, number | null>>;
  /** The seed the run ran with, when it is not `seed` (an arm on independent seeds: --independent). */
  run_seed?: number;
  /** The SOP's finish result, when it has one. */
  result?: string;
  error?: string;
  usage: { calls: number; prompt_tokens: number; completion_tokens: number; cost?: number };
  run_dir?: string;
  /** host:pid of the process that ran it. */
  worker: string;
  duration_ms: number;
  /** Started from scratch, or continued from the run folder's journal. */
  resumed?: boolean;
  /** Queue attempts it took (a sweep over a queue). */
  attempts?: number;
}

/** Runs that need no more work: they reached a final state, their turn limit or a budget (running them again changes nothing). */
export function isDone(status: string): boolean {
  return status === 'finished' || status === 'max_turns' || status === 'budget';
}

/** The results so far, by key (the last line of a key wins; a torn last line is ignored). */
export function readResults(out: string): Map<string, ResultLine> {
  const file = join(out, RESULTS_FILE);
  const byKey = new Map<string, ResultLine>();
  if (!existsSync(file)) return byKey;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const r = JSON.parse(line) as ResultLine;
      if (r && typeof r.key === 'string') byKey.set(r.key, r);
    } catch {
      // a line torn by a kill: that run is done again
    }
  }
  return byKey;
}

export class ResultsFile {
  readonly file: string;
  readonly byKey: Map<string, ResultLine>;

  constructor(readonly out: string) {
    mkdirSync(out, { recursive: true });
    this.file = join(out, RESULTS_FILE);
    this.byKey = readResults(out);
  }

  /** Append a run's line at once (a kill later loses nothing). */
  add(r: ResultLine): void {
    this.byKey.set(r.key, r);
    try {
      appendFileSync(this.file, JSON.stringify(r) + '\n');
    } catch (err) {
      throw writeFailure(err, this.file, SWEEP_AGAIN); // files: a full disk names the file
    }
  }

  /** Rewrite results.jsonl with one line per key (in `order`, then the rest) and write summary.md. */
  finish(order: readonly string[], title: string): void {
    const seen = new Set<string>();
    const lines: string[] = [];
    for (const k of [...order, ...this.byKey.keys()]) {
      const r = this.byKey.get(k);
      if (!r || seen.has(k)) continue;
      seen.add(k);
      lines.push(JSON.stringify(r));
    }
    const write = (file: string, text: string) => {
      try {
        writeFileAtomic(file, text);
      } catch (err) {
        throw writeFailure(err, file, SWEEP_AGAIN);
      }
    };
    write(this.file, lines.length ? lines.join('\n') + '\n' : '');
    // the summary is of this sweep's grid; lines of other grids in the same folder stay in results.jsonl
    const grid = order.flatMap((k) => this.byKey.get(k) ?? []);
    const others = this.byKey.size - grid.length;
    write(join(this.out, SUMMARY_FILE), summaryMarkdown(grid, title, others));
  }
}

function mdCell(s: string, max = 80): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return (one.length > max ? one.slice(0, max - 1) + '…' : one).replace(/\|/g, '\\|') || '(empty)';
}

/**
 * A summary.md table of the runs `keyOf` picks (undefined: left out), grouped by that key: how
 * many runs each, and the first run of each; the largest group first. Nothing when none is picked.
 */
function groupTable(results: readonly ResultLine[], keyOf: (r: ResultLine) => string | undefined, title: string, column: string): string[] {
  const groups = new Map<string, { n: number; first: string }>();
  for (const r of results) {
    const key = keyOf(r);
    if (key === undefined) continue;
    const x = groups.get(key) ?? { n: 0, first: r.key };
    x.n++;
    groups.set(key, x);
  }
  if (groups.size === 0) return [];
  return [
    '',
    `## ${title}`,
    '',
    `| ${column} | runs | first run |`,
    '|---|---|---|',
    ...[...groups.entries()].sort((a, b) => b[1].n - a[1].n).map(([key, x]) => `| ${mdCell(key, 300)} | ${x.n} | ${mdCell(x.first)} |`),
  ];
}

/** Runs that did not finish, grouped by their error. */
const failureRows = (results: readonly ResultLine[]) =>
  groupTable(
    results,
    (r) => (isDone(r.status) ? undefined : `${r.status}: ${r.error ?? 'no error recorded'}`),
    'Not finished',
    'status: error',
  );

/** Runs stopped by a budget, grouped by the budget that stopped them (its label, without the amounts spent). */
const budgetRows = (results: readonly ResultLine[]) =>
  groupTable(
    results,
    (r) => (r.status === 'budget' ? (r.budget ?? 'a budget').split(':')[0]! : undefined),
    'Stopped by a budget',
    'budget',
  );

function countRows(counts: Map<string, number>, total: number): string[] {
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([v, n]) => `| ${mdCell(v)} | ${n} | ${((100 * n) / Math.max(1, total)).toFixed(1)}% |`);
}

/**
 * Outcomes by input row (a sweep over --inputs with two rows or more): each row's inputs, its
 * runs, how many finished, and the commonest value of each output tag (the first three tags).
 */
function rowTable(results: readonly ResultLine[], tags: readonly string[]): string[] {
  const rows = new Map<number, ResultLine[]>();
  for (const r of results) if (r.row !== undefined) rows.set(r.row, [...(rows.get(r.row) ?? []), r]);
  if (rows.size < 2) return [];
  const shown = tags.slice(0, 3);
  const commonest = (of: readonly ResultLine[], tag: string): string => {
    const counts = new Map<string, number>();
    for (const r of of) {
      const v = r.outputs?.[tag];
      if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    const [top] = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    return top ? `${mdCell(top[0], 40)} (${top[1]} of ${of.length})` : '-';
  };
  const inputsOf = (r: ResultLine) =>
    Object.entries(r.inputs ?? {})
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
  return [
    '',
    '## By input row',
    '',
    `| row | inputs | runs | finished |${shown.map((t) => ` \`${t}\` |`).join('')}`,
    `|---|---|---|---|${shown.map(() => '---|').join('')}`,
    ...[...rows.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(
        ([row, of]) =>
          `| ${row} | ${mdCell(inputsOf(of[0]!), 60)} | ${of.length} | ${of.filter((r) => r.status === 'finished').length} |` +
          shown.map((t) => ` ${commonest(of, t)} |`).join(''),
      ),
  ];
}

/** A number for a table: 4 significant digits. */
const num = (x: number | null | undefined): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '-' : String(Number(x.toPrecision(4)));

/**
 * Each final population metric across the runs that are done (by arm when the sweep has arms):
 * runs, mean, its 95% interval (Student's t) and the sd across seeds.
 */
function metricTable(results: readonly ResultLine[]): string[] {
  const groups = new Map<string, number[]>();
  const arms = results.some((r) => r.arm !== undefined);
  for (const r of results) {
    if (!isDone(r.status)) continue;
    for (const [state, m] of Object.entries(r.metrics ?? {}))
      for (const [name, v] of Object.entries(m)) {
        if (typeof v !== 'number') continue;
        const key = JSON.stringify([arms ? (r.arm ?? '') : '', state, name]);
        groups.set(key, [...(groups.get(key) ?? []), v]);
      }
  }
  if (groups.size === 0) return [];
  const rows = [...groups.entries()]
    .map(([key, xs]) => [JSON.parse(key) as [string, string, string], meanInterval(xs)] as const)
    .sort((a, b) => a[0][0].localeCompare(b[0][0]) || a[0][1].localeCompare(b[0][1]) || a[0][2].localeCompare(b[0][2]));
  return [
    '',
    '## Metrics (final values, across seeds)',
    '',
    `|${arms ? ' arm |' : ''} state | metric | runs | mean | 95% interval | sd |`,
    `|${arms ? '---|' : ''}---|---|---|---|---|---|`,
    ...rows.map(
      ([[arm, state, name], m]) =>
        `|${arms ? ` ${mdCell(arm)} |` : ''} ${mdCell(state)} | ${mdCell(name)} | ${m.n} | ${num(m.mean)} | ${m.lo === null ? '-' : `${num(m.lo)} to ${num(m.hi)}`} | ${num(m.sd)} |`,
    ),
  ];
}

export function summaryMarkdown(results: readonly ResultLine[], title: string, others = 0): string {
  const count =
    `${results.length} runs.` +
    (others > 0
      ? ` (results.jsonl also holds ${others} runs of this folder that are not in this sweep's grid; they are not counted here.)`
      : '');
  const lines = [`# Sweep: ${title}`, '', count, '', '## By status', '', '| status | runs | share |', '|---|---|---|'];
  const byStatus = new Map<string, number>();
  for (const r of results) byStatus.set(r.status, (byStatus.get(r.status) ?? 0) + 1);
  lines.push(...countRows(byStatus, results.length));
  lines.push(...failureRows(results));
  lines.push(...budgetRows(results));
  const tags = [...new Set(results.flatMap((r) => Object.keys(r.outputs ?? {})))].sort();
  for (const tag of tags) {
    const counts = new Map<string, number>();
    for (const r of results) {
      const v = r.outputs?.[tag];
      if (v !== undefined) counts.set(v, (counts.get(v) ?? 0) + 1);
    }
    lines.push('', `## Output \`${tag}\``, '', '| value | runs | share |', '|---|---|---|', ...countRows(counts, results.length));
  }
  lines.push(...metricTable(results));
  lines.push(...rowTable(results, tags));
  const models = [...new Set(results.map((r) => r.model ?? '(default)'))];
  if (models.length > 1) {
    lines.push('', '## By model', '', '| model | runs | finished |', '|---|---|---|');
    for (const m of models) {
      const of = results.filter((r) => (r.model ?? '(default)') === m);
      lines.push(`| ${mdCell(m)} | ${of.length} | ${of.filter((r) => r.status === 'finished').length} |`);
    }
  }
  let calls = 0,
    prompt = 0,
    completion = 0,
    cost = 0,
    priced = 0,
    ms = 0;
  for (const r of results) {
    calls += r.usage?.calls ?? 0;
    prompt += r.usage?.prompt_tokens ?? 0;
    completion += r.usage?.completion_tokens ?? 0;
    if (typeof r.usage?.cost === 'number') {
      cost += r.usage.cost;
      priced++;
    }
    ms += r.duration_ms ?? 0;
  }
  lines.push(
    '',
    '## Usage',
    '',
    `- LLM calls: ${calls}`,
    `- prompt tokens: ${prompt}`,
    `- completion tokens: ${completion}`,
    `- cost: ${priced === 0 ? 'not priced' : `$${cost.toFixed(4)}${priced < results.length ? ` (${priced} of ${results.length} runs priced)` : ''}`}`,
    `- run time (sum over runs): ${(ms / 1000).toFixed(1)} s`,
    '',
  );
  return lines.join('\n');
}
