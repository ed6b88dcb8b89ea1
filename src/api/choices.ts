// The choices every run makes before it starts, the same for runSop, resumeRun, forkRun and the
// CLI (which only maps its flags to these options): who answers for people, the LLM provider
// and its run-wide retry budget, the embedder, the sandbox, and who consents to the SOP's MCP
// servers and LLM servers, and where a step's batch goes (batch mode).
import { isPopulationState, populationCallsLlm } from '../features/population/state-spec.js';
import { AnswersFileInput, HumanInputError, NoHumanInput, TerminalInput, askYesNo, type HumanInput } from '../core/io/human.js';
import { AnswersListInput } from '../core/io/answers-list.js';
import { createProvider } from '../core/llm/factory.js';
import { InterruptibleProvider } from '../core/llm/interruptible.js';
import { RETRIES_PER_CALL, RetryBudget } from '../core/llm/retry.js';
import { LlmError, type LlmProvider } from '../core/llm/types.js';
import { endpointKey, sopEndpoints } from '../core/llm/endpoints.js';
import { checkBatchOptions, runUsesBatch, type BatchOptions } from '../features/batch/options.js';
import { LlmConsent, USER_KEY, cliLlmAllowEntries, fileLlmAllowEntries } from '../core/llm/consent.js';
import { createEmbedder, parseEmbedderSpec } from '../core/memory/create-embedder.js';
import type { Embedder } from '../core/memory/embedder.js';
import type { McpApproval } from '../features/mcp/approval.js';
import { cliAllowEntries, fileAllowEntries } from '../features/mcp/allow.js';
import { isAcceptance } from '../core/commands/executor.js';
import type { RerunPolicy } from '../features/journal/effects.js';
import type { Sop } from '../format/sop/types.js';
import { EngineError, opt, say, type Message } from '../shared/errors.js';
import type { RunSopOptions } from './options.js';
import { sopFileOf } from './load-sop.js';
import { DEFAULTS } from '../format/sop/resolved.js';
import { DEFAULT_CONCURRENCY } from '../features/population/state-spec.js';
import { concurrencyEvent, type LimitChange } from '../core/llm/adaptive-limit.js';
import type { RunEvent } from '../core/runtime/events.js';

/**
 * Retries of every LLM and embedding call of one run, together: this many, plus RETRIES_PER_CALL
 * (one half) for each LLM call the run has made (src/core/llm/retry.ts), so that a population step of
 * thousands of calls that meets a rate limit has a budget of its size.
 */
export const RUN_RETRY_BUDGET = 50;

/** A run's retry budget (RUN_RETRY_BUDGET and RETRIES_PER_CALL). */
export const runRetryBudget = (): RetryBudget => new RetryBudget(RUN_RETRY_BUDGET, RETRIES_PER_CALL);

/** How a run's people are asked: the given input, an answers file or list, the terminal, or nobody. */
export function humanOf(o: RunSopOptions): HumanInput {
  if (o.human) return o.human;
  // approvals are never read from an answers file; with a terminal at hand they are asked there
  const terminal = o.terminal ? new TerminalInput() : undefined;
  if (typeof o.answers === 'string') return new AnswersFileInput(o.answers, { approver: terminal });
  if (o.answers) return new AnswersListInput(o.answers);
  return terminal ?? new NoHumanInput();
}

/** A SOP with people playing roles and nobody to ask fails now, not at the first human turn. */
export function checkHumans(sop: Sop, human: HumanInput, o: RunSopOptions): void {
  if (!(human instanceof NoHumanInput)) return;
  const humans = Object.entries(sop.agents)
    .filter(([, a]) => a.human)
    .map(([name]) => name);
  if (humans.length === 0) return;
  throw new HumanInputError([
    `${humans.join(', ')} ${humans.length > 1 ? 'are' : 'is'} played by a person${sop.agents_v1 ? ' (User_Names in the Agents 1.0 config)' : ''}, `,
    ...say`and there is no terminal to ask${o.llm === 'mock' ? say` (${opt('llm', { set: 'mock' })} replaces only the LLM, not people)` : ''}. `,
    ...say`Give their turns with ${opt('answers', { arg: true })}: a JSON list of strings, or one answer per line, used in order.`,
  ]);
}

/**
 * A mock dry run with nobody to ask accepts executor reviews and approvals (as `yes`), so every
 * SOP can be dry-run unattended; people playing roles still need answers (checkHumans).
 */
export function dryRunYes(sop: Sop, human: HumanInput, o: RunSopOptions): boolean {
  const hasCommands = Object.values(sop.states).some((s) => s.commands && Object.keys(s.commands).length > 0);
  return !o.yes && human instanceof NoHumanInput && (o.llm ?? sop.llm?.provider) === 'mock' && hasCommands;
}

/** Someone to ask yes or no: the terminal, else a person among the run's human input. */
function askerOf(o: RunSopOptions, human: HumanInput): ((text: string) => Promise<boolean>) | undefined {
  if (o.terminal) return askYesNo;
  const person = human.interactive ? human : human.approver?.interactive ? human.approver : undefined;
  if (!person) return undefined;
  return async (text: string) =>
    isAcceptance(await person.ask({ agent: 'sop', role: 'you', state: '-', prompt: `${text} (yes/no)`, kind: 'approval' }));
}

/** Who allows calls to the servers a SOP names (see RunSopOptions.allowBaseUrl): a bad entry is told now. */
export function llmConsentOf(o: RunSopOptions, human: HumanInput): LlmConsent {
  const cli = cliLlmAllowEntries(o.allowBaseUrl, o.allowBaseUrlEnv);
  const ask = askerOf(o, human);
  return new LlmConsent({ allow: () => [...cli, ...fileLlmAllowEntries()], ...(ask ? { ask } : {}) });
}

/** Who allows MCP servers to start in a run (see RunSopOptions.mcpApproval); `yes` is the one given, not a dry run's. */
export function mcpApprovalOf(o: RunSopOptions, human: HumanInput): McpApproval {
  const given = o.mcpApproval ?? {};
  const ask = given.ask ?? askerOf(o, human);
  const cli = cliAllowEntries(o.allowMcp, o.allowMcpEnv); // a bad entry is told now
  return {
    unattended: given.unattended ?? (o.yes === true || o.autoRun === true),
    allow: given.allow ?? (() => [...cli, ...fileAllowEntries()]),
    ...(ask ? { ask } : {}),
    ...(given.command ? { command: given.command } : {}),
  };
}

/** Interrupted side effects of a resumed run: run again with autoRun, else ask at the terminal. */
export function rerunOf(o: RunSopOptions): RerunPolicy {
  const rerun = o.rerun ?? { autoRun: o.autoRun };
  return rerun.approve || !o.terminal ? rerun : { ...rerun, approve: askYesNo };
}

/** The run budgets of the options (docs/cost.md), each above 0. */
export function checkRunBudget(budget: RunSopOptions['budget']): void {
  for (const [name, v] of [
    [opt('budgetTokens', { path: 'budget.tokens' }), budget?.tokens],
    [opt('budgetUsd', { path: 'budget.usd' }), budget?.usd],
  ] as const)
    if (v !== undefined && !(Number.isFinite(v) && v > 0))
      throw new EngineError(say`${name} must be a number above 0 (got ${String(v)})`, 'OPTION');
}

type Warn = (message: Message) => void;

/** The run's LLM: the given provider, or one made from the options with the run's retry budget and consent. */
export async function providerOf(
  sop: Sop,
  o: RunSopOptions,
  run: {
    budget: RetryBudget;
    consent: LlmConsent;
    stop: AbortSignal;
    warn: Warn;
    resumed?: boolean;
    seed?: number;
    /** The run's events: a change of a server's adaptive limit is one (`concurrency`). */
    emit?: (e: RunEvent) => void;
  },
): Promise<LlmProvider> {
  if (typeof o.llm === 'object') return o.llm;
  if (o.llm === undefined && !sopCallsLlm(sop)) return NO_LLM; // rule agents only: no key, no server
  const made = await createProvider({
    spec: o.llm ?? sop.llm?.provider,
    // local: each call's seed comes from the run's; the SOP's model paths are read from its folder
    seed: run.seed ?? o.seed,
    sopFile: o.file ?? sopFileOf(sop),
    model: o.model ?? sop.llm?.model ?? DEFAULTS.model,
    signal: run.stop,
    baseURL: o.baseUrl ?? sop.llm?.base_url,
    apiKeyEnv: o.baseUrl === undefined ? sop.llm?.api_key_env : undefined,
    baseURLFixed: o.baseUrl !== undefined,
    consent: run.consent,
    endpoints: sopEndpoints(sop),
    record: o.record,
    recordContinues: run.resumed === true, // sop resume --record continues the cassette
    sopName: sop.name,
    timeoutMs: o.timeoutMs ?? sop.llm?.timeout_ms,
    maxReplyBytes: o.maxReplyBytes ?? sop.llm?.max_reply_bytes,
    budget: run.budget,
    onRetry: retryWarnings(run.warn),
    onWarning: run.warn,
    // calls at once to each server adapt to its answers, up to --concurrency (docs/scale.md#adaptive-concurrency)
    throttle: {
      ceiling: o.concurrency ?? DEFAULT_CONCURRENCY,
      ...(run.emit ? { onChange: (c: LimitChange) => run.emit!(concurrencyEvent(c)) } : {}),
    },
  });
  // interrupt() of a started run abandons the call in flight (a server may never answer)
  return new InterruptibleProvider(made, run.stop);
}

/** How often a 429 retry is warned about: the adaptive limit's `concurrency` events tell the rest. */
const RATE_LIMIT_WARN_MS = 5000;

/**
 * A warning for each retry of an LLM call, except 429s: a step of thousands of calls meets them by
 * the hundred, and the `concurrency` events tell how the run slowed down; those are warned about
 * once every 5 s, with the count of the others since.
 */
export function retryWarnings(warn: Warn, now: () => number = Date.now): (r: { attempt: number; delayMs: number; reason: string }) => void {
  let last = Number.NEGATIVE_INFINITY;
  let since = 0;
  return (r) => {
    const rateLimited = r.reason.startsWith('HTTP 429');
    if (rateLimited && now() - last < RATE_LIMIT_WARN_MS) {
      since++;
      return;
    }
    if (!rateLimited) return warn(`LLM call failed (${r.reason}); retry ${r.attempt} in ${r.delayMs} ms`);
    last = now();
    const others =
      since > 0
        ? `; ${since} more ${since === 1 ? 'call was' : 'calls were'} rate limited (429) and retried since the last such warning`
        : '';
    since = 0;
    warn(`LLM call failed (${r.reason}); retry ${r.attempt} in ${r.delayMs} ms${others}`);
  };
}

/** Whether any state of a SOP can make an LLM call (all but final states and population states of rule agents only). */
export function sopCallsLlm(sop: Sop): boolean {
  return Object.values(sop.states).some((s) => !s.final && (!isPopulationState(s) || populationCallsLlm(s)));
}

/** The provider of a SOP that makes no LLM call (its population states have rule agents only). */
const NO_LLM: LlmProvider = {
  id: 'none',
  chat: () => Promise.reject(new LlmError('this SOP makes no LLM call (its agents follow rules), yet one was made')),
};

/**
 * The embedder of a run that retrieves (top_k above 0), made and loaded before it starts so a
 * missing model fails now; undefined otherwise (a run's context makes one if a feature asks).
 */
export async function embedderOf(
  sop: Sop,
  o: RunSopOptions,
  run: { budget: RetryBudget; consent: LlmConsent; warn: Warn; startWarning: Warn },
): Promise<Embedder | undefined> {
  if (typeof o.embedder === 'object') return o.embedder;
  if ((sop.environment?.top_k ?? 0) === 0) {
    if (o.embedder !== undefined)
      run.startWarning(
        say`${opt('embedder')} has no effect while top_k is 0; add ${opt('topK', { set: 'N' })} to retrieve earlier messages`,
      );
    return undefined;
  }
  // an openai embedder at the SOP's server sends OPENAI_API_KEY there: the same consent
  if (o.baseUrl === undefined && sop.llm?.base_url && parseEmbedderSpec(sop.environment?.embedder).kind === 'openai')
    await run.consent.check({ url: sop.llm.base_url, keyVar: USER_KEY });
  return createEmbedder(sop.environment?.embedder, {
    baseURL: o.baseUrl ?? sop.llm?.base_url,
    timeoutMs: o.timeoutMs ?? sop.llm?.timeout_ms,
    budget: run.budget,
    onRetry: (r) => run.warn(`embedding call failed (${r.reason}); retry ${r.attempt} in ${r.delayMs} ms`),
  });
}

export { RetryBudget };

/** Shards and batches both say how a step's calls are sent: a run takes one (checked before anything starts). */
export function checkBatchOrShards(sop: Sop, o: RunSopOptions): void {
  if (o.shardOver !== undefined && runUsesBatch(sop, o.llmMode !== undefined ? { mode: o.llmMode } : {}))
    throw new EngineError(
      say`${opt('shardOver')} and batch mode (${opt('llmMode', { set: 'batch' })}, or a state's "llm_mode": "batch") both say how a step's calls are sent: choose one`,
      'OPTION',
    );
}

/**
 * Batch mode's options (docs/population.md#batch-mode), checked: the OpenAI Batch API goes to the
 * run's own server with its own key (as the provider does; the user consented to that server when
 * the provider was made), vllm files to the run folder.
 */
export function batchOf(sop: Sop, o: RunSopOptions, runDir: string | undefined): BatchOptions {
  const spec = typeof o.llm === 'string' ? o.llm : o.llm === undefined ? (sop.llm?.provider ?? 'openai') : undefined;
  const baseURL = o.baseUrl ?? sop.llm?.base_url;
  const apiKeyEnv = o.baseUrl === undefined ? sop.llm?.api_key_env : undefined;
  const timeoutMs = o.timeoutMs ?? sop.llm?.timeout_ms;
  const options: BatchOptions = {
    ...(o.llmMode !== undefined ? { mode: o.llmMode } : {}),
    ...(o.batchTarget !== undefined ? { target: o.batchTarget } : {}),
    ...(o.batchPollMs !== undefined ? { pollCapMs: o.batchPollMs } : {}),
    ...(runDir !== undefined ? { runDir } : {}),
    ...(spec === 'openai'
      ? {
          server: {
            ...(baseURL !== undefined ? { baseURL } : {}),
            apiKey: () => (apiKeyEnv !== undefined ? endpointKey({ baseURL, apiKeyEnv }) : undefined),
            ...(timeoutMs !== undefined ? { timeoutMs } : {}),
          },
        }
      : {}),
  };
  checkBatchOptions(sop, options);
  return options;
}
