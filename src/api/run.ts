// Running a SOP from code: runSop, resumeRun and forkRun return a RunHandle. The CLI's run,
// resume and fork commands start their runs through startRun below, with their own provider,
// human input and display.
import { resolve } from 'node:path';
import { HumanInputError, NoHumanInput, AnswersFileInput, type HumanInput } from '../io/human.js';
import { AnswersListInput } from '../io/answers-list.js';
import { RunFolder, newRunId } from '../io/run-folder.js';
import { createProvider } from '../llm/factory.js';
import { loadPricing } from '../llm/pricing.js';
import type { LlmProvider } from '../llm/types.js';
import type { Embedder } from '../memory/embedder.js';
import type { EnvironmentMemory } from '../environment/environment.js';
import { Run } from '../engine/run.js';
import { isPromptEvent, type RunEvent, type RunListener } from '../runtime/events.js';
import type { PluginFactory } from '../runtime/hooks.js';
import type { RunResult } from '../runtime/run.js';
import type { Continuation } from './continue.js';
import { prepareFork, prepareResume } from './continue.js';
import { appliedSettings } from '../journal/applied-settings.js';
import type { RerunPolicy } from '../journal/effects.js';
import { loadRunRecord } from '../journal/record.js';
import { JournalError } from '../journal/reader.js';
import type { Sop } from '../sop/types.js';
import type { McpApproval } from '../mcp/approval.js';
import { fileAllowEntries } from '../mcp/allow.js';
import { isAcceptance } from '../executors/types.js';
import { configureSecrets, makeRedactor } from '../util/redact.js';
import { llmBlockSecrets, sopEndpoints } from '../llm/endpoints.js';
import { LlmConsent, cliLlmAllowEntries, fileLlmAllowEntries } from '../llm/consent.js';
import { tracingEnabled } from '../telemetry/enabled.js';
import { EventFeed, type RunHandle } from './handle.js';
import { loadSop, sopFileOf } from './load.js';
import { appendRunHeader, libraryIntoWorkspace, lockMemoryDir, resolveMemoryDir } from '../workspace/memory-dir.js';
import { EngineError } from '../errors.js';

/** openai (default: the SOP's llm.provider, else openai), mock, replay:CASSETTE, or a provider of your own. */
export type LlmChoice = 'mock' | 'openai' | `replay:${string}` | LlmProvider;

export interface RunSopOptions {
  llm?: LlmChoice;
  /** Use this model for every call. */
  model?: string;
  /** OpenAI-compatible server (llm: 'openai'; default: the SOP's llm.base_url, else OPENAI_BASE_URL). */
  baseUrl?: string;
  /** Timeout of one LLM request in milliseconds. */
  timeoutMs?: number;
  /** Refuse an LLM reply larger than this many bytes (default: the SOP's llm.max_reply_bytes, else 512 KiB). */
  maxReplyBytes?: number;
  /** Record every LLM call to this cassette file. */
  record?: string;
  inputs?: Record<string, string>;
  /** Seed of random speaker choice (default 1). */
  seed?: number;
  /** Stop after this many turns (default 200). */
  maxTurns?: number;
  /** Folder where the run folder (journal, transcripts, memory files, workspace) is created; omit for a run kept in memory. */
  out?: string;
  runId?: string;
  /** Human turns and questions: an answers file, or the answers in order. */
  answers?: string | readonly string[];
  /** Human input of your own (overrides answers). */
  human?: HumanInput;
  /** Aborting ends the run as interrupted. */
  signal?: AbortSignal;
  /** Run code written by agents without asking first (--auto-run). */
  autoRun?: boolean;
  /** Accept every question, review and approval without asking (--yes). */
  yes?: boolean;
  /** Run code under bubblewrap (--sandbox). */
  sandbox?: boolean;
  /** mcp: run stdio MCP servers under bubblewrap (default: as code, so whenever it works here); tool slots bound to MCP tools (--bind). */
  mcpSandbox?: boolean;
  bind?: Record<string, string>;
  /**
   * mcp: who allows the SOP's MCP servers to start, and the variables each may read (docs/tools.md).
   * Default: `yes` or `autoRun` (starts only), the user's allow file, and a person at `human` when it is a terminal.
   */
  mcpApproval?: McpApproval;
  /**
   * llm: servers the SOP names (llm.base_url at any level) that its calls may go to, with
   * OPENAI_API_KEY (`allowBaseUrl`: URLs) or with the key in VAR (`allowBaseUrlEnv`: "URL=VAR").
   * Besides these, the user's allow file and a person at `human` when it is a terminal; `baseUrl`
   * replaces every server of the SOP (src/llm/consent.ts, docs/tools.md).
   */
  allowBaseUrl?: string[];
  allowBaseUrlEnv?: string[];
  /** Workspace folder of a run kept in memory (a run with `out` uses its folder's workspace/). */
  workspace?: string;
  /** Embedder for retrieval (default: made from the SOP's environment.embedder). */
  embedder?: Embedder;
  /** The shared memory of the run (default: a MemoryEnvironment with the SOP's settings). */
  environment?: EnvironmentMemory;
  /** Emit `delta` events while agents' replies stream (default true). */
  stream?: boolean;
  /**
   * Tell `prompt` events (the messages each LLM call was sent, secrets redacted) to iterators and
   * listeners too (default false: only the run folder's journal keeps them).
   */
  prompts?: boolean;
  /** Reproduce the safe Agents 1.0 quirks. */
  compat?: 'agents-v1';
  /** The SOP file, for a SOP given as an object (relative paths in it are resolved from its folder). */
  file?: string;
  /** Features of your own, plugged into the run (src/runtime/hooks.ts). */
  plugins?: PluginFactory;
  /** Called synchronously with every event, before iterators see it (e.g. a terminal display). */
  listeners?: RunListener[];
  /** Interrupted side effects of a resumed run: run again with autoRun, or ask `approve`. */
  rerun?: RerunPolicy;
  /** Recorded in run_started (defaults for sop resume). */
  launch?: Record<string, string | number | boolean>;
  /** A pricing file whose models replace those of the shipped pricing.json (--pricing). */
  pricing?: string;
  /** A folder where the memory files and the code library last across runs (default: the SOP's memory_dir). */
  memoryDir?: string;
  /** Budgets of the whole run, besides the SOP's own `budget` (--budget-tokens, --budget-usd; docs/cost.md). */
  budget?: { tokens?: number; usd?: number };
  /** With tracing on (OTEL_EXPORTER_OTLP_ENDPOINT): prompts and replies as span events, redacted (--trace-content). */
  traceContent?: boolean;
}

/** A started run, with what the CLI needs besides the handle. */
export interface StartedRun {
  handle: RunHandle;
  run: Run;
  folder?: RunFolder;
  /** Tell every listener (and iterator) an event from outside the run (e.g. an LLM retry warning). */
  emit(event: RunEvent): void;
  /** Send the run's trace spans now (a second Ctrl-C exits before the run ends); absent when tracing is off. */
  flushTraces?: () => Promise<void>;
}

function humanOf(o: RunSopOptions): HumanInput {
  if (o.human) return o.human;
  if (typeof o.answers === 'string') return new AnswersFileInput(o.answers);
  if (o.answers) return new AnswersListInput(o.answers);
  return new NoHumanInput();
}

/**
 * Start a run (internal: the API functions and the CLI). Construction problems (a bad template,
 * bad commands, --sandbox without bubblewrap) throw here.
 */
export async function startRun(sop: Sop, o: RunSopOptions, continuation?: Continuation): Promise<StartedRun> {
  const file = o.file ?? sopFileOf(sop) ?? '<memory>';
  configureSecrets(llmBlockSecrets(sop)); // the keys and servers of LLM blocks with their own (llm.api_key_env, llm.base_url)
  const feed = new EventFeed();
  const listeners: RunListener[] = [];
  /** Where `prompt` events go without `prompts: true`: the run folder (its journal). */
  const promptListeners: RunListener[] = [];
  /** Said once the run has started (the journal's first line is run_started). */
  let startWarning: string | undefined;
  const emit = (e: RunEvent) => {
    if (!o.prompts && isPromptEvent(e)) {
      for (const l of promptListeners) l(e);
      return;
    }
    for (const l of listeners) l(e);
    feed.push(e);
    if (e.type === 'run_started' && startWarning !== undefined) {
      const message = startWarning;
      startWarning = undefined;
      emit({ type: 'warning', message });
    }
  };
  const pricing = loadPricing(o.pricing); // a bad pricing file is told before anything starts
  const human = humanOf(o);
  const llm =
    typeof o.llm === 'object'
      ? o.llm
      : await createProvider({
          spec: o.llm ?? sop.llm?.provider,
          baseURL: o.baseUrl ?? sop.llm?.base_url,
          apiKeyEnv: o.baseUrl === undefined ? sop.llm?.api_key_env : undefined,
          baseURLFixed: o.baseUrl !== undefined,
          consent: llmConsentOf(o, human),
          endpoints: sopEndpoints(sop),
          record: o.record,
          recordContinues: continuation?.mode === 'resume',
          sopName: sop.name,
          timeoutMs: o.timeoutMs ?? sop.llm?.timeout_ms,
          maxReplyBytes: o.maxReplyBytes ?? sop.llm?.max_reply_bytes,
          onRetry: (r) => emit({ type: 'warning', message: `LLM call failed (${r.reason}); retry ${r.attempt} in ${r.delayMs} ms` }),
          onWarning: (message) => emit({ type: 'warning', message }),
        });
  // Code runs under bubblewrap when it works here, unless `sandbox: false`; `sandbox: true`
  // requires it (throws without it). The CLI resolves this itself and passes a boolean.
  const { resolveSandbox, sopRunsCode } = await import('../executors/sandbox-mode.js');
  const sandboxed = resolveSandbox(o.sandbox, sopRunsCode(sop));
  const sandbox = o.sandbox ?? sandboxed.sandbox;
  if (o.sandbox === undefined) startWarning = sandboxed.warning;
  const runId = continuation?.runId ?? o.runId ?? newRunId(sop.name);
  const outDir = continuation?.outDir ?? o.out;
  const folder =
    outDir !== undefined
      ? new RunFolder(
          outDir,
          runId,
          makeRedactor(),
          continuation ? { events: continuation.history, ...(continuation.unlock ? { unlock: continuation.unlock } : {}) } : undefined,
        )
      : undefined;
  if (folder) listeners.push(folder.onEvent);
  if (folder) promptListeners.push(folder.onEvent);
  listeners.push(...(o.listeners ?? []));
  // OpenTelemetry (docs/cost.md): loaded only when an OTLP endpoint is set
  const tracing = tracingEnabled()
    ? (await import('../telemetry/otel.js')).startTracing({ content: o.traceContent, redact: makeRedactor() })
    : undefined;
  if (tracing) listeners.push(tracing.listener);
  const plugins: PluginFactory | undefined = tracing ? (host) => [...(o.plugins?.(host) ?? []), ...tracing.plugins(host)] : o.plugins;
  const workspace = folder ? folder.path('workspace') : o.workspace;
  const settings = continuation?.settings;
  // --memory-dir: memory files and the code library that last across runs, one run at a time
  const memoryDirOption = o.memoryDir ?? sop.memory_dir;
  const memoryDir = memoryDirOption !== undefined ? resolveMemoryDir(memoryDirOption) : undefined;
  let unlockMemory: (() => void) | undefined;
  let run: Run;
  try {
    if (memoryDir) {
      unlockMemory = lockMemoryDir(memoryDir, runId);
      appendRunHeader(
        memoryDir,
        `## run ${runId}${continuation ? ` (${continuation.mode === 'resume' ? 'resumed' : 'forked'} from turn ${continuation.fromTurn})` : ''}, ${new Date().toISOString()}` +
          (continuation || o.inputs?.goal === undefined ? '' : `: ${o.inputs.goal.replace(/\s+/g, ' ').slice(0, 200)}`),
      );
      if (workspace) libraryIntoWorkspace(memoryDir, workspace);
    }
    run = new Run({
      sop,
      file,
      llm,
      runId,
      inputs: continuation ? continuation.inputs : (o.inputs ?? {}),
      seed: continuation?.seed ?? o.seed,
      maxTurns: o.maxTurns ?? settings?.max_turns,
      model: o.model ?? settings?.model,
      human,
      listeners: [emit],
      stream: o.stream !== false,
      signal: o.signal,
      ...((o.compat ?? settings?.compat) ? { compat: o.compat ?? settings?.compat } : {}),
      ...(settings?.name_stripping ? { nameStripping: settings.name_stripping } : {}),
      resume: continuation?.resume,
      rerun: o.rerun ?? { autoRun: o.autoRun },
      launch: o.launch,
      embedder: o.embedder,
      environment: o.environment,
      agentsV1: { workspace }, // code components write output_code/ here
      // memory files in memory/, code runs in workspace/
      actions: { runDir: folder?.dir, workspace, autoRun: o.autoRun, yes: o.yes, sandbox, persistentMemoryDir: memoryDir },
      mcp: { sandbox: o.mcpSandbox ?? sandbox, bind: o.bind, approval: mcpApprovalOf(o, human) },
      plugins,
      budget: o.budget,
      ...(llm.id !== 'mock' ? { pricing } : {}), // mock replies cost nothing: not priced
    });
  } catch (err) {
    unlockMemory?.();
    folder?.close();
    await tracing?.flush().catch(() => {});
    throw err;
  }
  const result = (async () => {
    try {
      const r = await run.run();
      await llm.close?.();
      return r;
    } finally {
      unlockMemory?.();
      folder?.close();
      await tracing?.flush().catch(() => {}); // spans of the run are sent before it ends
    }
  })();
  result.then(
    () => feed.end(),
    (err) => feed.end(err),
  );
  const handle: RunHandle = {
    runId,
    dir: folder?.dir,
    result,
    stop: () => run.requestStop(),
    [Symbol.asyncIterator]: () => feed.iterate(),
  };
  return { handle, run, folder, emit, ...(tracing ? { flushTraces: () => tracing.flush() } : {}) };
}

/** Who allows calls to the servers a SOP names (see RunSopOptions.allowBaseUrl). */
function llmConsentOf(o: RunSopOptions, human: HumanInput): LlmConsent {
  const cli = cliLlmAllowEntries(o.allowBaseUrl, o.allowBaseUrlEnv);
  const person = human.interactive ? human : human.approver?.interactive ? human.approver : undefined;
  return new LlmConsent({
    allow: () => [...cli, ...fileLlmAllowEntries()],
    ...(person
      ? {
          ask: async (text: string) =>
            isAcceptance(await person.ask({ agent: 'sop', role: 'you', state: '-', prompt: `${text} (yes/no)`, kind: 'approval' })),
        }
      : {}),
  });
}

/** Who allows MCP servers to start in a run (see RunSopOptions.mcpApproval). */
function mcpApprovalOf(o: RunSopOptions, human: HumanInput): McpApproval {
  const given = o.mcpApproval ?? {};
  const person = human.interactive ? human : human.approver?.interactive ? human.approver : undefined;
  const ask =
    given.ask ??
    (person
      ? async (text: string) =>
          isAcceptance(await person.ask({ agent: 'sop', role: 'you', state: '-', prompt: `${text} (yes/no)`, kind: 'approval' }))
      : undefined);
  return {
    unattended: given.unattended ?? (o.yes === true || o.autoRun === true),
    allow: given.allow ?? (() => fileAllowEntries()),
    ...(ask ? { ask } : {}),
    ...(given.command ? { command: given.command } : {}),
  };
}

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
  return handleOf(
    async () => {
      const human = humanOf(options);
      const humans = Object.entries(loaded.agents)
        .filter(([, a]) => a.human)
        .map(([name]) => name);
      if (human instanceof NoHumanInput && humans.length > 0) {
        throw new HumanInputError(
          `${humans.join(', ')} ${humans.length > 1 ? 'are' : 'is'} played by a person; give their turns with answers (a file or a list) or human`,
        );
      }
      return startRun(loaded, { ...options, human, runId, launch: options.launch ?? launchOf(options) });
    },
    runId,
    dir,
  );
}

/** What sop resume and resumeRun reuse of a run's options (paths made absolute). */
function launchOf(o: RunSopOptions): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  if (typeof o.llm === 'string') out.llm = o.llm.startsWith('replay:') ? `replay:${resolve(o.llm.slice('replay:'.length))}` : o.llm;
  if (o.baseUrl) out.base_url = o.baseUrl;
  if (typeof o.answers === 'string') out.answers = resolve(o.answers);
  if (o.timeoutMs !== undefined) out.timeout_ms = o.timeoutMs;
  if (o.maxReplyBytes !== undefined) out.max_reply_bytes = o.maxReplyBytes;
  if (o.autoRun) out.auto_run = true;
  if (o.yes) out.yes = true;
  if (o.sandbox !== undefined) out.sandbox = o.sandbox; // absent: sandboxed when bubblewrap works
  // as `sop run` records them (src/cli/run-command.ts launchSettings)
  if (o.pricing) out.pricing = resolve(o.pricing);
  if (o.memoryDir) out.memory_dir = resolve(o.memoryDir);
  if (o.budget?.tokens !== undefined) out.budget_tokens = o.budget.tokens;
  if (o.budget?.usd !== undefined) out.budget_usd = o.budget.usd;
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
    rerun: o.rerun ?? { autoRun: o.autoRun === true },
    autoRun: o.autoRun ?? launch.auto_run === true,
    // as `sop resume`: the prices, memory folder and run budgets of the command line
    pricing: o.pricing ?? str(launch.pricing),
    memoryDir: o.memoryDir ?? str(launch.memory_dir),
    budget: launchBudget(o.budget, launch),
  };
}

/** Run budgets given now, else those of the recorded launch (--budget-tokens, --budget-usd), each on its own. */
function launchBudget(given: RunSopOptions['budget'], launch: Record<string, unknown>): RunSopOptions['budget'] {
  const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
  const budget = { tokens: given?.tokens ?? num(launch.budget_tokens), usd: given?.usd ?? num(launch.budget_usd) };
  return budget.tokens !== undefined || budget.usd !== undefined ? budget : undefined;
}

export type { RunResult };
