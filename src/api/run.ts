// Running a SOP from code: runSop, resumeRun and forkRun return a RunHandle. They, and the CLI's
// run, resume and fork commands, start their runs through startRun (src/api/start.ts), which
// makes every choice of a run (src/api/choices.ts).
import { resolve } from 'node:path';
import { newRunId } from '../features/journal/run-folder.js';
import type { RunResult } from '../core/runtime/run.js';
import { prepareFork, prepareResume } from './continue.js';
import { appliedSettings } from '../features/journal/applied-settings.js';
import { loadRunRecord } from '../features/journal/record.js';
import { JournalError } from '../features/journal/reader.js';
import type { Sop } from '../format/sop/types.js';
import { REDACTED, makeRedactor } from '../shared/util/redact.js';
import { parseBindings } from '../features/mcp/slots.js';
import type { RunHandle } from './handle.js';
import { loadSop } from './load.js';
import { EngineError } from '../shared/errors.js';
import type { LlmChoice, RunSopOptions } from './options.js';
import { startRun, type StartedRun } from './start.js';
import { absoluteLlmSpec } from '../core/llm/factory.js';

export type { LlmChoice, RunSopOptions } from './options.js';
export { startRun, type StartedRun } from './start.js';

/** A handle whose result rejects (and whose iteration throws) when the run cannot start. */
function handleOf(start: () => Promise<StartedRun>, runId: string, dir: string | undefined): RunHandle {
  const started = start();
  started.catch(() => {});
  let stopped = false;
  const result = started.then((s) => s.handle.result);
  result.catch(() => {});
  return {
    runId,
    dir,
    result,
    stop: () => {
      stopped = true;
      void started.then(
        (s) => s.handle.stop(),
        () => {},
      );
    },
    async *[Symbol.asyncIterator]() {
      const s = await started;
      if (stopped) s.handle.stop();
      yield* s.handle;
    },
  };
}

/**
 * Run a SOP (an object from loadSop or defineSop, or a file, loaded at once: a bad one throws
 * SopError here). The run starts at once; iterate the handle for its events, await `result`.
 */
export function runSop(sop: Sop | string, options: RunSopOptions = {}): RunHandle {
  const loaded = typeof sop === 'string' ? loadSop(sop) : sop;
  const runId = options.runId ?? newRunId(loaded.name);
  const dir = options.out !== undefined ? resolve(options.out, runId) : undefined;
  return handleOf(() => startRun(loaded, { ...options, runId, launch: options.launch ?? launchOf(options) }), runId, dir);
}

/** What sop resume and resumeRun reuse of a run's options (paths made absolute). */
function launchOf(o: RunSopOptions): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (typeof o.llm === 'string') out.llm = absoluteLlmSpec(o.llm);
  if (o.baseUrl) out.base_url = o.baseUrl;
  if (typeof o.answers === 'string') out.answers = resolve(o.answers);
  if (o.timeoutMs !== undefined) out.timeout_ms = o.timeoutMs;
  if (o.maxReplyBytes !== undefined) out.max_reply_bytes = o.maxReplyBytes;
  if (o.autoRun) out.auto_run = true;
  if (o.yes) out.yes = true;
  if (o.sandbox !== undefined) out.sandbox = o.sandbox; // absent: sandboxed when bubblewrap works
  if (o.sandboxNetwork) out.sandbox_network = true;
  // as `sop run` records them (src/apps/cli/run-command.ts launchSettings)
  if (o.pricing) out.pricing = resolve(o.pricing);
  if (o.memoryDir) out.memory_dir = resolve(o.memoryDir);
  if (o.budget?.tokens !== undefined) out.budget_tokens = o.budget.tokens;
  if (o.budget?.usd !== undefined) out.budget_usd = o.budget.usd;
  if (o.traceContent) out.trace_content = true;
  // batch mode: a resumed run polls the batch it was waiting for
  if (o.llmMode) out.llm_mode = o.llmMode;
  if (o.batchTarget) out.batch_target = o.batchTarget;
  if (o.batchPollMs !== undefined) out.batch_poll_ms = o.batchPollMs;
  const bind = Object.entries(o.bind ?? {}).map(([slot, tool]) => `${slot}=${tool}`);
  if (bind.length) out.bind = bind.join(','); // mcp: the same tool slot bindings when resumed
  if (o.allowMcp?.length) out.allow_mcp = o.allowMcp.join(','); // names, never values
  if (o.allowMcpEnv?.length) out.allow_mcp_env = o.allowMcpEnv.join(',');
  if (o.allowBaseUrl?.length) out.allow_base_url = o.allowBaseUrl.join(' '); // URLs and variable names, never values
  if (o.allowBaseUrlEnv?.length) out.allow_base_url_env = o.allowBaseUrlEnv.join(' ');
  return out;
}

/** Continue an interrupted or killed run from its last checkpoint, in its own folder (a bad folder throws JournalError here). */
export function resumeRun(runDir: string, options: Omit<RunSopOptions, 'out' | 'runId' | 'inputs' | 'seed'> = {}): RunHandle {
  const { record, continuation } = prepareResume(runDir); // holds the run folder's lock
  const unlock = continuation.unlock ?? (() => {});
  try {
    if (record.status === 'finished')
      throw new JournalError(`${runDir}: the run already finished; nothing to resume (fork it from an earlier turn)`);
    const o = withLaunch(options, continuation.launch, record.started.file);
    // journaled on `resumed`: the run's command line with what is given now, for the next resume
    const launch = o.launch ?? { ...continuation.launch, ...launchOf(options) };
    const start = () =>
      startRun(continuation.sop, { ...o, launch }, continuation).catch((err: unknown) => {
        unlock(); // the run folder did not take the lock over (or has released it: idempotent)
        throw err;
      });
    return handleOf(start, continuation.runId, resolve(runDir));
  } catch (err) {
    unlock();
    throw err;
  }
}

/** A new run (a new folder, next to the original unless `out` is given) continuing from run `runDir` after `turn` turns. */
export function forkRun(runDir: string, turn: number, options: Omit<RunSopOptions, 'runId' | 'inputs' | 'seed'> = {}): RunHandle {
  if (!Number.isInteger(turn) || turn < 0) throw new EngineError(`turn must be a turn number (0 or more), got ${turn}`, 'OPTION');
  const original = loadRunRecord(runDir);
  const { launch, settings } = appliedSettings(original, turn); // as the run was at that turn
  if (options.maxTurns !== undefined) settings.max_turns = options.maxTurns;
  if (options.model !== undefined) settings.model = options.model;
  const llmSpec = typeof options.llm === 'string' ? (launchOf({ llm: options.llm }).llm as string) : undefined;
  const { continuation, folder } = prepareFork(runDir, {
    at: turn,
    out: options.out,
    newRunId: newRunId(original.started.sop),
    sameLlm: options.llm === undefined || llmSpec === launch.llm,
    settings,
    launch: { ...launch, ...(llmSpec !== undefined ? { llm: llmSpec } : {}) },
    redact: makeRedactor(),
  });
  const o = withLaunch({ ...options, out: undefined }, continuation.launch, original.started.file);
  return handleOf(() => startRun(continuation.sop, o, continuation), continuation.runId, folder);
}

/** What a continued run takes from the original's command line unless given now. */
function withLaunch(o: RunSopOptions, launch: Record<string, unknown>, file: string): RunSopOptions {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const llm = o.llm ?? (str(launch.llm) as LlmChoice | undefined);
  return {
    ...o,
    file: o.file ?? file,
    llm,
    baseUrl: o.baseUrl ?? str(launch.base_url),
    answers: o.answers ?? str(launch.answers),
    timeoutMs: o.timeoutMs ?? (typeof launch.timeout_ms === 'number' ? launch.timeout_ms : undefined),
    maxReplyBytes: o.maxReplyBytes ?? (typeof launch.max_reply_bytes === 'number' ? launch.max_reply_bytes : undefined),
    yes: o.yes ?? launch.yes === true,
    sandbox: o.sandbox ?? (typeof launch.sandbox === 'boolean' ? launch.sandbox : undefined),
    sandboxNetwork: o.sandboxNetwork ?? launch.sandbox_network === true,
    rerun: o.rerun ?? { autoRun: o.autoRun === true },
    autoRun: o.autoRun ?? launch.auto_run === true,
    // as `sop resume`: the prices, memory folder and run budgets of the command line
    pricing: o.pricing ?? str(launch.pricing),
    memoryDir: o.memoryDir ?? str(launch.memory_dir),
    budget: launchBudget(o.budget, launch),
    traceContent: o.traceContent ?? launch.trace_content === true,
    llmMode: o.llmMode ?? (launch.llm_mode === 'batch' || launch.llm_mode === 'direct' ? launch.llm_mode : undefined),
    batchTarget: o.batchTarget ?? (launch.batch_target === 'openai' || launch.batch_target === 'vllm' ? launch.batch_target : undefined),
    batchPollMs: o.batchPollMs ?? (typeof launch.batch_poll_ms === 'number' ? launch.batch_poll_ms : undefined),
    bind: o.bind ?? (str(launch.bind) ? parseBindings(str(launch.bind)!.split(',').filter(Boolean)) : undefined),
    // the servers allowed at launch (a URL the journal redacted is left out: give it again), and those allowed now
    allowMcp: [...list(launch.allow_mcp, ','), ...(o.allowMcp ?? [])],
    allowMcpEnv: [...list(launch.allow_mcp_env, ','), ...(o.allowMcpEnv ?? [])],
    allowBaseUrl: [...list(launch.allow_base_url, ' '), ...(o.allowBaseUrl ?? [])],
    allowBaseUrlEnv: [...list(launch.allow_base_url_env, ' '), ...(o.allowBaseUrlEnv ?? [])],
  };
}

/** A launch setting of several values, without what the journal redacted. */
function list(v: unknown, sep: string): string[] {
  return (typeof v === 'string' ? v.split(sep) : []).filter((w) => w !== '' && !w.includes(REDACTED));
}

/** Run budgets given now, else those of the recorded launch (--budget-tokens, --budget-usd), each on its own. */
function launchBudget(given: RunSopOptions['budget'], launch: Record<string, unknown>): RunSopOptions['budget'] {
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const budget = { tokens: given?.tokens ?? num(launch.budget_tokens), usd: given?.usd ?? num(launch.budget_usd) };
  return budget.tokens !== undefined || budget.usd !== undefined ? budget : undefined;
}

export type { RunResult };
