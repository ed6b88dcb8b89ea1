// sop plan FILE (docs/plan.md): calls, tokens, cached share, cost and wall time of a run, per
// state and per population step, predicted from one dry run (src/api/plan.ts); with --run RUN,
// beside the figures that run realised (and kept in RUN/plan.json and RUN/usage.json).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { documentOf, writeDerivedUsage } from '../../api/continue.js';
import { realisedFigures, type PlanReport, type PlanRow } from '../../api/plan.js';
import { checkGivenInputs } from '../../api/engine/run-with-features.js';
import { EngineError } from '../../shared/errors.js';
import { PLAN_FILE } from '../../features/journal/predicted.js';
import { loadRunRecord, type RunRecord } from '../../features/journal/record.js';
import { loadSopFile } from '../../api/loader/checked-load.js';
import { approveSopPlugins } from './plugin-approval.js';
import { formatDiagnostic } from '../../format/sop/diagnostics.js';
import { packageRoot } from '../../shared/util/package-root.js';
import { lastValues } from './last-value.js';
import { keepPlan, planFor, type PlanFlags, type Planned } from './plan-of.js';
import { parseInputs } from './run-command.js';
import { textTable } from './text-table.js';
import { calibrationPlan, defaultPopulation, type CalibrationPlan } from '../../features/calibrate/smc.js';
import type { Sop } from '../../format/sop/types.js';

export interface PlanCommandOptions extends PlanFlags {
  file?: string;
  /** Load the SOP's plugins without asking. */
  yes?: boolean;
  /** A run folder: compare with what it realised (its SOP, seed, inputs and LLM unless given). */
  run?: string;
  /** `mock`: predict a run with the mock's replies. */
  llm?: string;
  seed?: number;
  maxTurns?: number;
  /** A calibration of this many runs (sop calibrate --budget). */
  budget?: number;
  inputs: string[];
  goal?: string;
  json: boolean;
}

const whole = (name: string, n: number | undefined, min: number) => {
  if (n !== undefined && !(Number.isInteger(n) && n >= min))
    throw new EngineError(`--${name} must be a whole number, at least ${min} (got ${n})`, 'OPTION');
};

/** What to plan: the SOP file, or the run's own SOP, seed, inputs, turn limit and LLM (the flags win). */
function target(o: PlanCommandOptions): Planned {
  if (o.llm !== undefined && o.llm !== 'mock') throw new EngineError(`--llm takes only "mock" in sop plan (got "${o.llm}")`, 'OPTION');
  const given = o.inputs.length > 0 || o.goal !== undefined ? parseInputs(o.inputs, o.goal) : undefined;
  if (!o.run) {
    if (!o.file) throw new EngineError('sop plan needs a SOP file, or --run RUN', 'OPTION');
    const { sop, warnings } = loadSopFile(o.file);
    for (const w of warnings) process.stderr.write(formatDiagnostic(w) + '\n');
    return { sop, file: o.file, inputs: given ?? {}, seed: o.seed, maxTurns: o.maxTurns, mock: o.llm === 'mock' };
  }
  const record = loadRunRecord(o.run);
  const started = record.started;
  const sop = o.file ? loadSopFile(o.file).sop : documentOf(record);
  return {
    sop,
    file: o.file ?? started.file,
    inputs: given ?? started.inputs,
    seed: o.seed ?? started.seed,
    maxTurns: o.maxTurns ?? started.settings?.max_turns,
    mock: o.llm === 'mock' || started.llm === 'mock',
    record,
  };
}

export async function planCommand(given: PlanCommandOptions): Promise<number> {
  const o = lastValues(given, ['inputs']);
  whole('reply-tokens', o.replyTokens, 1);
  whole('sample', o.sample, 1);
  whole('max-turns', o.maxTurns, 1);
  whole('seed', o.seed, 0);
  if (o.file) await approveSopPlugins(o.file, { yes: o.yes, command: 'sop plan' }); // its "plugins", with approval
  const t = target(o);
  checkGivenInputs(t.sop, t.inputs);
  if (o.budget !== undefined && !t.sop.calibrate)
    throw new EngineError(`--budget predicts a calibration, and ${t.sop.name} has no "calibrate" block (docs/calibrate.md)`, 'OPTION');
  whole('budget', o.budget, 1);
  const report = await planFor(t, o);
  const code = report.status === 'failed' || report.status === 'interrupted' ? 1 : 0;
  if (!t.record) {
    const calibration = o.budget !== undefined ? planCalibration(t.sop, o.budget, report) : undefined;
    process.stdout.write(
      o.json
        ? JSON.stringify(calibration ? { ...report, calibration } : report) + '\n'
        : formatPlan(report, o.pricing) + (calibration ? formatCalibration(calibration) : ''),
    );
    return code;
  }
  const realised = realisedFigures(t.record.effective);
  // the prediction is kept with the run: sop runs and usage.json show it beside what was realised
  keepPlan(t.record.dir, report);
  writeDerivedUsage(loadRunRecord(t.record.dir));
  process.stdout.write(
    o.json ? JSON.stringify({ plan: report, realised }) + '\n' : formatComparison(report, realised, t.record, o.pricing),
  );
  return code;
}

/** A calibration of `budget` runs at the dry run's figures (src/features/calibrate/smc.ts). */
function planCalibration(sop: Sop, budget: number, r: PlanReport): CalibrationPlan {
  const k = sop.calibrate?.seeds_per_particle ?? 1;
  return calibrationPlan(budget, k, defaultPopulation(budget, k), r.total);
}

function formatCalibration(c: CalibrationPlan): string {
  return (
    `\nCalibration (sop calibrate --budget ${int(c.budget)}): ${int(c.runs)} runs at most (${int(c.particles)} particles proposed, ` +
    `${c.seeds_per_particle} run${c.seeds_per_particle > 1 ? 's' : ''} each; populations of ${int(c.population)}), ` +
    `${int(c.calls)} LLM calls, ${int(c.prompt_tokens + c.completion_tokens)} tokens, ${usd(c.cost)}, ${duration(c.seconds)} of runs one after another ` +
    `(each run as the dry run above, at the SOP's own values of the parameters).\n`
  );
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const pct = (x: number) => `${Math.round(x * 100)}%`;
const usd = (n: number | undefined) => (n === undefined ? 'unknown' : `$${n < 0.01 && n > 0 ? n.toFixed(6) : n.toFixed(4)}`);

/** "1h 02m", "3m 05s", "27.0s". */
function duration(s: number): string {
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(Math.round(s - m * 60)).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h ${String(m % 60).padStart(2, '0')}m`;
}

/** The rows of the table: each state, and under a population state each of its steps. */
function rowsOf(r: PlanReport): Array<{ label: string; row: PlanRow }> {
  const out: Array<{ label: string; row: PlanRow }> = [];
  for (const s of r.states) {
    out.push({ label: s.state, row: s });
    for (const step of r.steps.filter((x) => x.state === s.state)) out.push({ label: `  step ${step.step}`, row: step });
  }
  return out;
}

function asOf(): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(packageRoot(), 'pricing.json'), 'utf8')) as { as_of?: string }).as_of;
  } catch {
    return undefined;
  }
}

/** What the figures rest on: the replies, the throughput profile, the cache rules, the prices, the samples. */
function assumptions(r: PlanReport, pricingFile: string | undefined): string[] {
  const p = r.profile;
  const out = [
    r.replies === 'mock'
      ? "replies: the mock's (one line each; --llm mock predicts a mock run)"
      : `replies: ${r.replies.tokens} tokens for each free-text reply (an agent's turn, a summary), fewer where the call's max_tokens says; judges, speakers, commands and population actions as the mock answers them (--reply-tokens)`,
    r.replies === 'mock'
      ? "tokens: the engine's estimate (4 characters a token), as a mock run counts them"
      : "prompt tokens: counted with the model's tokenizer; completion tokens: the replies above",
    `time: ${p.tokensPerSecond ? `${p.latency}s + completion tokens at ${p.tokensPerSecond} tokens/s a call` : `${p.latency}s a call`} (--latency${p.tokensPerSecond ? ', --tokens-per-second' : ''}); turn-based calls one after another; a population step ${p.concurrency} calls at once (--concurrency): ceil(calls / ${p.concurrency}) rounds`,
    "cached share: OpenAI's prompt cache simulated on the dry run's prompts (exact prefix, at least 1,024 tokens, 128-token steps, routed by the first 256 tokens and the prompt_cache_key sop sends, about 15 requests a minute a route, 5-minute TTL)",
    `prices: ${pricingFile ? `${pricingFile} over ` : ''}pricing.json${asOf() ? ` as of ${asOf()}` : ''}, and the SOP's llm.pricing; cached prompt tokens at the cached_input price`,
  ];
  for (const s of r.sampled)
    out.push(
      `population "${s.state}": ${int(s.sampled)} of its ${int(s.agents)} agents dry-run (--sample); each step's calls counted over all agents, their tokens extrapolated from the sample`,
    );
  for (const a of r.approximations) out.push(`tokenizer: ${a}`);
  return out;
}

/** The assumptions, then the warnings. */
function footer(r: PlanReport, pricingFile: string | undefined): string {
  const lines = ['', 'Assumptions:', ...assumptions(r, pricingFile).map((a) => `- ${a}`), ...r.warnings.map((w) => `warning: ${w}`)];
  return lines.join('\n') + '\n';
}

function formatPlan(r: PlanReport, pricingFile?: string): string {
  let out = `sop plan ${r.sop}: one dry run (seed ${r.seed}) ${r.status === 'finished' ? 'finished' : `ended (${r.status})`} after ${r.turns} turns, planned in ${(r.ms / 1000).toFixed(1)}s\n\n`;
  const cells = (x: PlanRow) => [
    int(x.calls),
    int(x.prompt_tokens),
    int(x.completion_tokens),
    pct(x.cached_share),
    usd(x.cost),
    duration(x.seconds),
  ];
  const rows = rowsOf(r).map(({ label, row }) => [label, ...cells(row)]);
  rows.push(['TOTAL', ...cells(r.total)]);
  out += textTable(['STATE', 'CALLS', 'PROMPT', 'COMPLETION', 'CACHED', 'COST', 'TIME'], rows, [false, true, true, true, true, true, true]);
  out += `\nPredicted: ${int(r.total.calls)} LLM calls, ${int(r.total.prompt_tokens + r.total.completion_tokens)} tokens (${pct(r.total.cached_share)} of the prompt tokens cached), ${usd(r.total.cost)}, ${duration(r.total.seconds)}.\n`;
  if (r.unpriced_models?.length) out += `No price for ${r.unpriced_models.join(', ')}: add it with --pricing FILE.\n`;
  return out + footer(r, pricingFile);
}

/** "18 / 17 (+6%)": predicted, realised and how far apart. */
function pair(predicted: number, realised: number, fmt: (n: number) => string = int): string {
  const off = realised > 0 ? ` (${predicted >= realised ? '+' : ''}${Math.round(((predicted - realised) / realised) * 100)}%)` : '';
  return `${fmt(predicted)} / ${fmt(realised)}${off}`;
}

function formatComparison(r: PlanReport, realised: ReturnType<typeof realisedFigures>, record: RunRecord, pricingFile?: string): string {
  let out = `sop plan ${r.sop} beside run ${record.started.run_id} (${record.status}, ${record.turns} turns, --llm ${record.started.llm}, seed ${r.seed}): predicted / realised\n\n`;
  const find = (list: PlanRow[], x: PlanRow) => list.find((y) => y.state === x.state && y.step === x.step);
  const none: PlanRow = {
    state: '',
    calls: 0,
    prompt_tokens: 0,
    completion_tokens: 0,
    cached_tokens: 0,
    seconds: 0,
    by_purpose: {},
    cached_share: 0,
  };
  const cells = (p: PlanRow, q: PlanRow) => [
    pair(p.calls, q.calls),
    pair(p.prompt_tokens, q.prompt_tokens),
    pair(p.completion_tokens, q.completion_tokens),
    `${pct(p.cached_share)} / ${pct(q.cached_share)}`,
    p.cost !== undefined && q.cost !== undefined
      ? pair(p.cost, q.cost, usd)
      : `${usd(p.cost)} / ${q.cost === undefined ? 'not priced' : usd(q.cost)}`,
  ];
  const rows = rowsOf(r).map(({ label, row }) => [
    label,
    ...cells(row, find(row.step === undefined ? realised.states : realised.steps, row) ?? none),
  ]);
  for (const s of realised.states) if (!r.states.some((x) => x.state === s.state)) rows.push([s.state, ...cells(none, s)]);
  rows.push(['TOTAL', ...cells(r.total, realised.total)]);
  out += textTable(['STATE', 'CALLS', 'PROMPT', 'COMPLETION', 'CACHED', 'COST'], rows, [false, true, true, true, true, true]);
  out += `\nPredicted time: ${duration(r.total.seconds)}. The prediction is kept in ${join(record.dir, PLAN_FILE)}; usage.json and sop runs show it beside the run's figures.\n`;
  return out + footer(r, pricingFile);
}
