// Starting a run: the one place where a run's choices are made (src/api/choices.ts: people,
// provider and retry budget, embedder, sandbox, consent) and its run folder, tracing and memory
// folder are set up. runSop, resumeRun, forkRun and the CLI's run, resume and fork commands all
// start their runs here; the CLI adds only its display and its Ctrl-C.
import { EngineError, opt, say, renderMessage, type Message } from '../shared/errors.js';
import { RunFolder, newRunId } from '../features/journal/run-folder.js';
import { loadPricing } from '../core/llm/pricing.js';
import type { Run } from './engine/run-with-features.js';
import { isPromptEvent, type RunEvent, type RunListener } from '../core/runtime/events.js';
import type { PluginFactory } from '../core/runtime/hooks.js';
import type { Continuation } from './continue.js';
import type { Sop } from '../format/sop/types.js';
import { configureSecrets, makeRedactor } from '../shared/util/redact.js';
import { llmBlockSecrets } from '../core/llm/endpoints.js';
import { applyMemoryOverrides } from '../core/environment/memory-settings.js';
import { tracingEnabled } from '../features/telemetry/enabled.js';
import { EventFeed, type RunHandle } from './handle.js';
import { sopFileOf } from './load-sop.js';
import type { PopulationOptions } from '../features/population/plugin.js';
import { usesPopulation } from '../features/population/state-spec.js';
import { ResultsWriter } from './results-writer.js';
import { appendRunHeader, libraryIntoWorkspace, lockMemoryDir, resolveMemoryDir } from '../core/workspace/memory-dir.js';
import type { RunSopOptions } from './options.js';
import { shardOptionsOf } from './shard-options.js';
import {
  batchOf,
  checkBatchOrShards,
  checkHumans,
  checkRunBudget,
  dryRunYes,
  embedderOf,
  humanOf,
  llmConsentOf,
  mcpApprovalOf,
  providerOf,
  rerunOf,
  runRetryBudget,
} from './choices.js';

/** A started run, with what the CLI needs besides the handle. */
export interface StartedRun {
  handle: RunHandle;
  run: Run;
  folder?: RunFolder;
  /** Tell every listener (and iterator) an event from outside the run (e.g. an LLM retry warning). */
  emit(event: RunEvent): void;
  /**
   * Stop the run now if it waits for the LLM (the call in flight is abandoned, resumably), else
   * at the end of this turn: the CLI's first Ctrl-C.
   */
  interrupt(): void;
  /** The warnings said before the run started (also told as `warning` events after run_started). */
  warnings: Message[];
  /** Send the run's trace spans now (a second Ctrl-C exits before the run ends); absent when tracing is off. */
  flushTraces?: () => Promise<void>;
}

/**
 * Start a run (internal: the API functions and the CLI). Construction problems (a bad template,
 * bad commands, --sandbox without bubblewrap) throw here.
 */
export async function startRun(given: Sop, o: RunSopOptions, continuation?: Continuation): Promise<StartedRun> {
  const file = o.file ?? sopFileOf(given) ?? '<memory>';
  // memory: --embedder, --top-k, --max-chat-history over the SOP's settings
  const sop = applyMemoryOverrides(given, {
    embedder: typeof o.embedder === 'string' ? o.embedder : undefined,
    topK: o.topK,
    maxChatHistory: o.maxChatHistory,
  });
  configureSecrets({ urls: [o.baseUrl, sop.llm?.base_url] }); // a key in a server's URL
  configureSecrets(llmBlockSecrets(sop)); // the keys and servers of LLM blocks with their own (llm.api_key_env, llm.base_url)
  const feed = new EventFeed();
  const listeners: RunListener[] = [];
  /** Where `prompt` events go without `prompts: true`: the run folder (its journal). */
  const promptListeners: RunListener[] = [];
  /** Said once the run has started (the journal's first line is run_started). */
  const startWarnings: Message[] = [];
  let started = false;
  const emit = (e: RunEvent) => {
    if (!o.prompts && isPromptEvent(e)) {
      for (const l of promptListeners) l(e);
      return;
    }
    for (const l of listeners) l(e);
    feed.push(e);
    if (e.type === 'run_started' && !started) {
      started = true;
      for (const message of startWarnings) emit(warningEvent(message));
    }
  };
  const startWarning = (message: Message) => void startWarnings.push(message);
  /** A warning now, or once the run has started (e.g. an embedder's retries while it is loaded). */
  const warn = (message: Message) => (started ? emit(warningEvent(message)) : startWarning(message));
  const pricing = loadPricing(o.pricing); // a bad pricing file is told before anything starts
  checkBatchOrShards(sop, o);
  const shards = shardOptionsOf(o); // a bad Redis URL, or no SOP_QUEUE_SECRET, too
  checkRunBudget(o.budget);
  const human = humanOf(o);
  if (!continuation) checkHumans(sop, human, o);
  const consent = llmConsentOf(o, human);
  const mcpApproval = mcpApprovalOf(o, human);
  const budget = runRetryBudget(); // every retry of every call of this run
  const stopLlm = new AbortController();
  const llm = await providerOf(sop, o, {
    budget,
    consent,
    stop: stopLlm.signal,
    warn,
    resumed: continuation?.mode === 'resume',
    seed: continuation?.seed ?? o.seed,
    emit,
  });
  const embedder = await embedderOf(sop, o, { budget, consent, warn, startWarning });
  const yes = o.yes === true || dryRunYes(sop, human, o);
  if (yes && !o.yes)
    startWarning(
      say`${opt('llm', { set: 'mock' })} with no terminal and no ${opt('answers')}: reviews, questions and approvals are accepted automatically, as with ${opt('yes')}`,
    );
  // Code runs under bubblewrap when it works here, unless `sandbox: false`; `sandbox: true`
  // requires it (throws without it); without bubblewrap, or with `sandbox: false`, a warning.
  const { resolveNetwork, resolveSandbox, sopRunsCode } = await import('../features/actions/executors/sandbox-mode.js');
  const sandboxed = resolveSandbox(o.sandbox, sopRunsCode(sop));
  const sandbox = sandboxed.sandbox;
  if (sandboxed.warning) startWarning(sandboxed.warning);
  const network = resolveNetwork(o.sandboxNetwork, sop, sandbox); // network in the sandbox: an explicit opt-in
  if (network.warning) startWarning(network.warning);
  // MCP servers nobody can be asked to approve: refused now, before a run folder exists
  if (sop.mcp_servers) {
    const { approveUnattended } = await import('../features/mcp/run-hub.js'); // loaded only for a SOP with MCP servers
    await approveUnattended({ sop, file, approval: mcpApproval, sandbox: o.mcpSandbox ?? sandbox, bind: o.bind });
  }
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
  // RUN/population.duckdb appended after each checkpoint the run folder has journaled
  const results = folder && usesPopulation(sop) && o.resultsDb !== false ? new ResultsWriter(folder.dir, folder.journalBytes) : undefined;
  if (results) listeners.push(results.onEvent);
  if (folder) promptListeners.push(folder.onEvent);
  listeners.push(...(o.listeners ?? []));
  // OpenTelemetry (docs/cost.md): loaded only when an OTLP endpoint is set
  const tracing = tracingEnabled()
    ? (await import('../features/telemetry/otel.js')).startTracing({ content: o.traceContent, redact: makeRedactor() })
    : undefined;
  if (tracing) listeners.push(tracing.listener);
  const plugins: PluginFactory | undefined = tracing ? (host) => [...(o.plugins?.(host) ?? []), ...tracing.plugins(host)] : o.plugins;
  const workspace = folder ? folder.path('workspace') : o.workspace;
  const settings = continuation?.settings;
  // --memory-dir: memory files and the code library that last across runs, one run at a time
  const memoryDirOption = o.memoryDir ?? sop.memory_dir;
  const memoryDir = memoryDirOption !== undefined ? resolveMemoryDir(memoryDirOption) : undefined;
  let unlockMemory: (() => void) | undefined;
  // the engine with its feature plugins is loaded when a run starts, not by `import 'sop'`
  const engine = await import('./engine/run-with-features.js');
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
    // a bad --llm-mode, --batch-target: told before the run starts; Ctrl-C ends a wait for a batch as it ends an LLM call
    const batch = { ...batchOf(sop, o, folder?.dir), stop: stopLlm.signal };
    run = new engine.Run({
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
      rerun: rerunOf(o),
      launch: o.launch,
      embedder,
      environment: o.environment,
      agentsV1: { workspace }, // code components write output_code/ here
      // memory files in memory/, code runs in workspace/
      actions: {
        runDir: folder?.dir,
        workspace,
        autoRun: o.autoRun,
        yes,
        sandbox,
        sandboxNetwork: network.network,
        persistentMemoryDir: memoryDir,
      },
      mcp: { sandbox: o.mcpSandbox ?? sandbox, bind: o.bind, approval: mcpApproval },
      plugins,
      ...(o.pluginOptions ? { pluginOptions: o.pluginOptions } : {}),
      budget: o.budget,
      population: populationOptionsOf(o),
      ...(shards ? { shards } : {}),
      batch,
      ...(llm.id !== 'mock' && !llm.free ? { pricing } : {}), // mock and local replies cost nothing: not priced
    });
  } catch (err) {
    unlockMemory?.();
    // a new run refused before it started (a memory folder in use, a missing input) leaves no folder
    if (continuation) folder?.close();
    else folder?.discard();
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
      if (folder && results) await writeResults(folder, results);
      await tracing?.flush().catch(() => {}); // spans of the run are sent before it ends
    }
  })();
  /** RUN/population.duckdb's last steps, from the closed journal; a failure is a warning (sop query catches up again). */
  async function writeResults(f: RunFolder, writer: ResultsWriter): Promise<void> {
    for (const message of await writer.close()) {
      const e: RunEvent = { type: 'warning', message };
      for (const l of listeners) if (l !== f.onEvent) l(e); // the journal is closed
      feed.push(e);
    }
  }
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
  const interrupt = () => {
    run.requestStop();
    stopLlm.abort();
  };
  return { handle, run, folder, emit, interrupt, warnings: startWarnings, ...(tracing ? { flushTraces: () => tracing.flush() } : {}) };
}

/** The population plugin's options of a run: calls at once, and how often a visit is saved whole (checked: one line when wrong). */
function populationOptionsOf(o: RunSopOptions): PopulationOptions {
  for (const name of ['snapshotSteps', 'snapshotActions'] as const) {
    const v = o[name];
    if (v !== undefined && !(Number.isInteger(v) && v >= 1))
      throw new EngineError(say`${opt(name)} must be a whole number, at least 1 (got ${String(v)})`, 'OPTION');
  }
  return {
    ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
    ...(o.snapshotSteps !== undefined ? { snapshotSteps: o.snapshotSteps } : {}),
    ...(o.snapshotActions !== undefined ? { snapshotActions: o.snapshotActions } : {}),
  };
}

/** A warning event: its text as the API says it, and its parts when it names options (the CLI names their flags). */
function warningEvent(m: Message): RunEvent {
  return typeof m === 'string' ? { type: 'warning', message: m } : { type: 'warning', message: renderMessage(m), parts: [...m] };
}
