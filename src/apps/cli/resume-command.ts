// sop resume RUN_DIR: continue an interrupted or killed run from its last turn boundary, in the
// same run folder, with the same SOP, LLM choice and answers file unless told otherwise.
import type { StepScaleOptions } from '../../api/options.js';
import { prepareResume, rewriteDerivedFiles, type Continuation } from '../../api/continue.js';
import { damageWarning, type RunRecord } from '../../features/journal/record.js';
import { REDACTED, configureSecrets, makeRedactor } from '../../shared/util/redact.js';
import { runCommand, type RunCommandOptions } from './run-command.js';
import { EngineError } from '../../shared/errors.js';
import { count } from '../../shared/util/plural.js';

export interface ResumeCommandOptions extends StepScaleOptions {
  dir: string;
  llm?: string;
  model?: string;
  baseUrl?: string;
  maxTurns?: number;
  record?: string;
  answers?: string;
  json: boolean;
  jsonPrompts?: boolean;
  quiet: boolean;
  timeoutMs?: number;
  maxReplyBytes?: number;
  autoRun?: boolean;
  /** secrets: more variables whose values are secret, besides those the run was launched with. */
  redact?: string[];
  /** A pricing file over the shipped pricing.json (default: the run's own --pricing). */
  pricing?: string;
  /** Run budgets (default: the run's own --budget-tokens and --budget-usd). */
  budgetTokens?: number;
  budgetUsd?: number;
  /** mcp: more servers allowed to start, and variables they may read, besides those allowed at launch. */
  allowMcp?: string[];
  allowMcpEnv?: string[];
  /** LLM servers of the SOP that may be sent calls, besides those allowed at launch. */
  allowBaseUrl?: string[];
  allowBaseUrlEnv?: string[];
}

/** Values read back from a journal's recorded launch settings. */
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

export async function resumeCommand(o: ResumeCommandOptions): Promise<number> {
  // the run folder's lock is taken before its journal is read: a second resume stops here
  const { record, continuation } = prepareResume(o.dir);
  try {
    return await resumeLocked(o, record, continuation);
  } finally {
    continuation.unlock?.(); // the run folder released it already if the run started (idempotent)
  }
}

async function resumeLocked(o: ResumeCommandOptions, record: RunRecord, continuation: Continuation): Promise<number> {
  configureSecrets({ names: redactedNames(o, continuation.launch), urls: [o.baseUrl] });
  const redact = makeRedactor();
  const err = (s: string) => process.stderr.write(redact(s));
  if (record.damage) err(`${damageWarning(record.damage)}\n`); // files: continue from the last good checkpoint
  for (const w of record.lineWarnings) err(`${w}\n`);
  if (record.status === 'finished') {
    rewriteDerivedFiles(record, redact);
    err(
      `${o.dir}: the run already finished (in state "${record.finished?.final_state}" after ${count(record.turns, 'turn')}); nothing to resume. Use sop fork to branch from an earlier turn.\n`,
    );
    return 0;
  }
  const maxTurns = o.maxTurns ?? continuation.settings.max_turns;
  if (record.status === 'max_turns' && maxTurns <= record.turns) {
    err(`${o.dir}: the run stopped at its turn limit (${record.turns}); give a larger --max-turns to continue it\n`);
    return 1;
  }
  if (record.torn && !o.json) err(`note: the journal's last line was cut off when the run was killed; it is dropped\n`);
  if (!o.json) {
    err(`Resuming run ${continuation.runId} (${record.status}) from turn ${continuation.fromTurn}.\n`);
  }
  return runCommand(
    {
      ...continuedRunOptions(o, record.started.file, continuation.launch),
      model: o.model,
      maxTurns: o.maxTurns,
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      ...(o.shardOver !== undefined ? { shardOver: o.shardOver } : {}),
      ...(o.shardSize !== undefined ? { shardSize: o.shardSize } : {}),
      out: continuation.outDir,
      // durability: code a crash interrupted runs again with --auto-run, given now or at launch
      // (or --yes at launch), else only with approval at a terminal
      rerunAutoRun: o.autoRun === true || continuation.launch.auto_run === true || continuation.launch.yes === true,
    },
    continuation,
  );
}

/**
 * Options of a run continued from a journal (resume, fork): what is given now, else what the
 * run was launched with (LLM, server, answers, timeout, and the executor flags --auto-run,
 * --yes, --sandbox).
 */
export function continuedRunOptions(o: ResumeCommandOptions, file: string, launch: Record<string, unknown>): RunCommandOptions {
  const baseUrl = o.baseUrl ?? str(launch.base_url);
  if (baseUrl?.includes(REDACTED)) {
    throw new EngineError(
      `the run was launched (or last resumed) with a --base-url holding a credential, which the journal does not keep (${baseUrl}); give --base-url again`,
      'OPTION',
    );
  }
  return {
    file,
    llm: o.llm ?? str(launch.llm),
    baseUrl,
    record: o.record,
    out: '',
    inputs: [],
    answers: o.answers ?? str(launch.answers),
    json: o.json,
    jsonPrompts: o.jsonPrompts,
    quiet: o.quiet,
    timeoutMs: o.timeoutMs ?? num(launch.timeout_ms),
    maxReplyBytes: o.maxReplyBytes ?? num(launch.max_reply_bytes),
    autoRun: o.autoRun || launch.auto_run === true,
    yes: launch.yes === true,
    // true: launched with --sandbox (required), false: --no-sandbox, absent: when available
    sandbox: typeof launch.sandbox === 'boolean' ? launch.sandbox : undefined,
    sandboxNetwork: launch.sandbox_network === true, // network in the sandbox, as the run was launched
    redact: redactedNames(o, launch),
    bind: str(launch.bind)?.split(',').filter(Boolean), // mcp
    // mcp: the servers allowed at launch, and those allowed now
    allowMcp: [...(str(launch.allow_mcp)?.split(',').filter(Boolean) ?? []), ...(o.allowMcp ?? [])],
    allowMcpEnv: [...(str(launch.allow_mcp_env)?.split(',').filter(Boolean) ?? []), ...(o.allowMcpEnv ?? [])],
    // the LLM servers allowed at launch (a URL the journal redacted is left out: give it again), and those allowed now
    allowBaseUrl: [...words(launch.allow_base_url), ...(o.allowBaseUrl ?? [])],
    allowBaseUrlEnv: [...words(launch.allow_base_url_env), ...(o.allowBaseUrlEnv ?? [])],
    pricing: o.pricing ?? str(launch.pricing),
    memoryDir: str(launch.memory_dir),
    budgetTokens: o.budgetTokens ?? num(launch.budget_tokens), // cost: the run's budgets stay, unless given again
    budgetUsd: o.budgetUsd ?? num(launch.budget_usd),
    traceContent: launch.trace_content === true,
    // batch mode: as the run was started, so a resumed run polls the batch it was waiting for
    llmMode: o.llmMode ?? (launch.llm_mode === 'batch' || launch.llm_mode === 'direct' ? launch.llm_mode : undefined),
    batchTarget: o.batchTarget ?? (launch.batch_target === 'openai' || launch.batch_target === 'vllm' ? launch.batch_target : undefined),
    batchPollMs: o.batchPollMs ?? num(launch.batch_poll_ms),
  };
}

/** A space-separated launch setting, without what the journal redacted. */
const words = (v: unknown): string[] => (str(v)?.split(' ') ?? []).filter((w) => w !== '' && !w.includes(REDACTED));

/** Names given with --redact now and at launch. */
export function redactedNames(o: ResumeCommandOptions, launch: Record<string, unknown>): string[] {
  const launched = str(launch.redact)?.split(',').filter(Boolean) ?? [];
  return [...new Set([...(o.redact ?? []), ...launched])];
}
