// One run of a sweep: start the grid point's run in its own folder (named by the point's key),
// or continue it from its journal when an earlier attempt was interrupted or killed, or just
// read it back when it already finished. The same code runs in `sop sweep` and in `sop worker`.
import { existsSync, renameSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { isMainThread, threadId } from 'node:worker_threads';
import { resumeRun, runSop, type RunSopOptions } from '../../api/run-sop.js';
import { JOURNAL_FILE } from '../../features/journal/writer.js';
import { loadRunRecord } from '../../features/journal/record.js';
import type { Message } from '../../core/environment/message.js';
import type { LlmProvider } from '../../core/llm/types.js';
import type { RunEvent } from '../../core/runtime/events.js';
import type { UsageTotals } from '../../core/runtime/usage.js';
import type { Sop } from '../../format/sop/types.js';
import type { GridPoint } from './grid.js';
import { makeRedactor } from '../../shared/util/redact.js';
import { withValuesSet } from '../../format/sop/set-pointer.js';
import { validateSopDocument } from '../../api/loader/checked-load.js';
import { apiOptionName, renderMessage, type MessagePart } from '../../shared/errors.js';
import { flagName } from '../cli/errors.js';
import { runOutputs } from './outputs.js';
import { armSop } from './arms.js';
import { recordRunProvenance } from '../report/provenance.js';
import { FinalMetricsCollector, finalMetrics, type FinalMetrics } from './final-metrics.js';
import { isDone, type ResultLine } from './results.js';

/** How every run of a sweep is run: the `sop run` options a sweep hands on (a queued job carries them). */
export interface SweepRunSettings {
  /** openai | mock | replay:FILE | local:FILE.gguf, as recorded for `sop resume`. */
  llm?: string;
  baseUrl?: string;
  maxTurns?: number;
  timeoutMs?: number;
  yes?: boolean;
  autoRun?: boolean;
  /** A pricing file (absolute, so that workers elsewhere find it too). */
  pricing?: string;
  /** Budgets of each run (--budget-tokens, --budget-usd), as for `sop run`. */
  budgetTokens?: number;
  budgetUsd?: number;
  /** The human answers file every run reads from its start (absolute, like the pricing file). */
  answers?: string;
}

/** The settings of a sweep's runs from its command's options (the pricing file made absolute). */
/** replay:FILE and local:FILE.gguf with their file's absolute path (local:hf:... and the rest as they are). */
function absoluteLlm(llm: string | undefined): string | undefined {
  for (const kind of ['replay:', 'local:']) {
    const path = llm?.startsWith(kind) ? llm.slice(kind.length) : undefined;
    if (path !== undefined && path !== '' && !path.startsWith('hf:')) return `${kind}${resolve(path)}`;
  }
  return llm;
}

export function sweepRunSettings(o: SweepRunSettings): SweepRunSettings {
  return {
    // a cassette's or a local model's path made absolute too: a worker elsewhere (another folder) finds it
    llm: absoluteLlm(o.llm),
    baseUrl: o.baseUrl,
    maxTurns: o.maxTurns,
    timeoutMs: o.timeoutMs,
    yes: o.yes,
    autoRun: o.autoRun,
    pricing: o.pricing !== undefined ? resolve(o.pricing) : undefined,
    budgetTokens: o.budgetTokens,
    budgetUsd: o.budgetUsd,
    answers: o.answers !== undefined ? resolve(o.answers) : undefined,
  };
}

export interface PointOptions extends SweepRunSettings {
  sop: Sop;
  /** The SOP file (absolute). */
  file: string;
  /** Folder holding the runs' folders (one per key). */
  runsDir: string;
  /** A provider shared by the runs of this process (one connection pool); default: one per run from `llm`. */
  provider?: LlmProvider;
  signal?: AbortSignal;
  /** Every event of the run (progress: tokens as they are used). */
  onEvent?: (e: RunEvent) => void;
  /** false: no RUN/population.duckdb at the end of each run (sop calibrate reads the journal; sop query builds it later). */
  resultsDb?: boolean;
  /** The command running the point, for the advice of a refusal (an MCP server it may not start). */
  command?: 'sop sweep' | 'sop worker';
}

/** host:pid, and /thread of a worker thread. */
export const workerName = (): string => `${hostname()}:${process.pid}${isMainThread ? '' : `/${threadId}`}`;

function usageOf(u: UsageTotals): ResultLine['usage'] {
  return {
    calls: u.calls,
    prompt_tokens: u.prompt_tokens,
    completion_tokens: u.completion_tokens,
    ...(typeof u.cost === 'number' ? { cost: u.cost } : {}),
  };
}

function baseLine(p: GridPoint): Pick<ResultLine, 'key' | 'seed' | 'inputs' | 'model' | 'repeat' | 'row' | 'set' | 'arm' | 'run_seed'> {
  return {
    key: p.key,
    seed: p.seed,
    ...(p.arm !== undefined ? { arm: p.arm } : {}),
    ...(p.runSeed !== undefined ? { run_seed: p.runSeed } : {}),
    inputs: p.inputs,
    ...(p.model !== undefined ? { model: p.model } : {}),
    repeat: p.repeat,
    ...(p.row !== undefined ? { row: p.row } : {}),
    ...(p.set !== undefined ? { set: p.set } : {}),
  };
}

/**
 * The SOP of a point: the sweep's, or a copy with the point's values set at their JSON pointers,
 * checked again as a loaded file is (a value the schema refuses fails the run, in one line).
 */
export function pointSop(sop: Sop, p: Pick<GridPoint, 'set'>, file: string): Sop {
  if (p.set === undefined || Object.keys(p.set).length === 0) return sop;
  return validateSopDocument(withValuesSet(sop, p.set), file).sop;
}

/** A run folder that holds a journal: finished, or to be continued. */
function existingRun(dir: string) {
  if (!existsSync(join(dir, JOURNAL_FILE))) return undefined;
  try {
    return loadRunRecord(dir);
  } catch {
    // killed before its first line: nothing to continue; kept aside, never deleted
    renameSync(dir, `${dir}.unreadable-${Date.now()}`);
    return undefined;
  }
}

export async function runPoint(p: GridPoint, o: PointOptions): Promise<ResultLine> {
  const started = Date.now();
  const dir = resolve(o.runsDir, p.key);
  const record = existingRun(dir);
  const line = (
    r: { status: string; turns: number; finalState?: string; error?: string; result?: string; budget?: string; usage: UsageTotals },
    messages: readonly Message[],
    resumed: boolean,
    metrics: FinalMetrics,
  ): ResultLine => ({
    ...baseLine(p),
    ...(p.model === undefined && o.sop.llm?.model !== undefined ? { model: o.sop.llm.model } : {}), // the SOP's own model
    status: r.status,
    turns: r.turns,
    ...(r.finalState !== undefined ? { final_state: r.finalState } : {}),
    outputs: runOutputs(o.sop, messages),
    ...(Object.keys(metrics).length > 0 ? { metrics } : {}),
    ...(r.result !== undefined ? { result: r.result } : {}),
    ...(r.error !== undefined ? { error: r.error } : {}),
    ...(r.budget !== undefined ? { budget: r.budget } : {}),
    usage: usageOf(r.usage),
    run_dir: dir,
    worker: workerName(),
    duration_ms: Date.now() - started,
    ...(resumed ? { resumed: true } : {}),
  });
  if (record?.finished && isDone(record.finished.status)) {
    // finished before its line reached results.jsonl (a kill in between): read it back
    const f = record.finished;
    const messages = record.effective.flatMap((e) => (e.type === 'message' ? [e.message] : []));
    recordRunProvenance(dir, { key: p.key, seed: p.seed, ...(p.arm !== undefined ? { arm: p.arm } : {}) }, o.file);
    return redacted(line({ ...f, finalState: f.final_state }, messages, true, finalMetrics(record.effective)));
  }
  const collector = new FinalMetricsCollector(); // the population metrics after each state's last step
  const common: RunSopOptions = {
    ...(o.provider ? { llm: o.provider } : o.llm ? { llm: o.llm as RunSopOptions['llm'] } : {}),
    baseUrl: o.baseUrl,
    timeoutMs: o.timeoutMs,
    maxTurns: o.maxTurns,
    yes: o.yes,
    autoRun: o.autoRun,
    pricing: o.pricing,
    ...(o.budgetTokens !== undefined || o.budgetUsd !== undefined ? { budget: { tokens: o.budgetTokens, usd: o.budgetUsd } } : {}),
    ...(o.answers !== undefined ? { answers: o.answers } : {}),
    signal: o.signal,
    stream: false, // nobody watches the deltas: plain answers cost less CPU than streams
    ...(o.resultsDb === false ? { resultsDb: false } : {}),
    mcpApproval: { command: o.command ?? 'sop sweep' }, // its refusals name what this command has: --yes, the allow file
    listeners: [collector.listener, ...(o.onEvent ? [o.onEvent] : [])],
  };
  const launch: Record<string, string | number | boolean> = {
    ...(o.llm ? { llm: o.llm } : {}),
    ...(o.baseUrl ? { base_url: o.baseUrl } : {}),
    ...(o.timeoutMs !== undefined ? { timeout_ms: o.timeoutMs } : {}),
    ...(o.yes ? { yes: true } : {}),
    ...(o.autoRun ? { auto_run: true } : {}),
    // as `sop run` records them: a run continued later keeps its budgets and answers file
    ...(o.budgetTokens !== undefined ? { budget_tokens: o.budgetTokens } : {}),
    ...(o.budgetUsd !== undefined ? { budget_usd: o.budgetUsd } : {}),
    ...(o.answers !== undefined ? { answers: o.answers } : {}),
  };
  const handle = record
    ? resumeRun(dir, { ...common, ...(p.model !== undefined ? { model: p.model } : {}) })
    : runSop(pointSop(armSop(o.sop, o.file, p.arm), p, o.file), {
        ...common,
        file: o.file,
        runId: p.key,
        out: o.runsDir,
        seed: p.runSeed ?? p.seed,
        inputs: p.inputs,
        ...(p.model !== undefined ? { model: p.model } : {}),
        launch,
      });
  const r = await handle.result;
  // stopped by Ctrl-C (or a worker's SIGTERM): say so, not just the LLM call it cut off
  const error =
    r.status === 'interrupted' && o.signal?.aborted
      ? `stopped by Ctrl-C${r.error ? ` (${r.error.message})` : ''}`
      : r.error && sweepMessage(r.error);
  // a continued run took some of its steps before: its journal's effective history holds them all
  const metrics = record === undefined ? collector.metrics() : metricsOf(dir);
  // RUN/provenance.json (docs/validity.md#provenance); a problem with it never fails the run
  recordRunProvenance(dir, { key: p.key, seed: p.seed, ...(p.arm !== undefined ? { arm: p.arm } : {}) }, o.file);
  return redacted(line({ ...r, error }, r.messages, record !== undefined, metrics));
}

/** The final metrics a run folder's journal holds (none when it cannot be read). */
function metricsOf(dir: string): FinalMetrics {
  try {
    return finalMetrics(loadRunRecord(dir).effective);
  } catch {
    return {};
  }
}

/** An error's message in a sweep's result line: a sweep's runs are continued by running the sweep again, not by `sop resume`. */
function sweepMessage(err: Error): string {
  const parts = (err as { parts?: readonly MessagePart[] }).parts;
  if (!parts) return err.message;
  return renderMessage(parts, (m) =>
    m.form === 'continue' ? `run the sweep again with ${flagName({ ...m, form: 'name' })}` : apiOptionName(m),
  );
}

/**
 * A result line with every secret of this process replaced (an LLM server may echo the API key
 * in an error message): the line goes to results.jsonl, stderr and, on a queue, to Redis.
 */
function redacted(r: ResultLine): ResultLine {
  return JSON.parse(makeRedactor()(JSON.stringify(r))) as ResultLine;
}

/** The line of a run that could not be done at all (it did not start, or its queue job gave up). */
export function failedLine(p: GridPoint, error: string, runDir: string | undefined, ms: number): ResultLine {
  return redacted({
    ...baseLine(p),
    status: 'failed',
    turns: 0,
    outputs: {},
    error,
    usage: { calls: 0, prompt_tokens: 0, completion_tokens: 0 },
    ...(runDir ? { run_dir: runDir } : {}),
    worker: workerName(),
    duration_ms: ms,
  });
}
