// The one run context: a read-only object handed to the pipeline, the LLM call, summaries,
// controllers, snapshots and plugins, instead of a callback bag each. It is built here, from the
// run's options and parts, and closes over them; nothing in it calls back into the loop.
import { ComponentServices } from '../agent/component-services.js';
import { AudienceRules } from '../environment/audience.js';
import { MemoryEnvironment } from '../environment/memory-environment.js';
import { NoHumanInput } from '../io/human.js';
import { modelPrice } from '../llm/pricing.js';
import type { CallMeta, ChatMessage } from '../llm/types.js';
import { createEmbedder } from '../memory/create-embedder.js';
import type { Embedder } from '../memory/embedder.js';
import { renderText, TemplateSet } from '../prompt/templates.js';
import { DEFAULTS, resolveSop, type ResolvedState } from '../../format/sop/resolved.js';
import type { LlmSettings } from '../../format/sop/types.js';
import { makeRedactor } from '../../shared/util/redact.js';
import { decide, having, observe, transform } from './compose.js';
import { freshStateRuntime, type StateRuntime } from './controller.js';
import { ContextVars } from '../../shared/util/context-vars.js';
import { directEffects, type Effects } from './effects.js';
import { emptyUsage, type RunEvent } from './events.js';
import type { RunContext, RunPlugin } from './hooks.js';

export type { RunContext } from './hooks.js';
import { RunEmbeddingMeter } from './embedding-meter.js';
import { callMany, type Via } from './call-many.js';
import { callLlm, type LlmCallHost } from './llm-call.js';
import { LlmProgress } from './llm-progress.js';
import type { RunOptions } from './options.js';
import type { RunPosition } from './position.js';
import { Rng } from './rng.js';
import { CLEAN_SEMANTICS, type Semantics } from './semantics.js';
import { resolveInputs } from './inputs.js';
import { checkPluginOptionsTaken, givePluginOptions } from './plugin-options.js';

/** The context and what only the loop does with it. */
export interface RunParts {
  ctx: RunContext;
  /** The prompt context changes from here on (a new step, an effect applied): build it again when next asked. */
  refresh(): void;
  /** The run has started: embedding requests made before (the dimension probe) are counted now, and all from now on. */
  started(): void;
  /** The run ends: the last messages' embeddings are counted (unless it failed or was interrupted), then a sub-flow's parent counts again. */
  ending(counted: boolean): Promise<void>;
}

/** Build a run's context and its plugins from the options. */
export function createRunContext(options: RunOptions): RunParts {
  const sop = options.sop;
  const resolved = resolveSop(sop);
  const topK = sop.environment?.top_k ?? DEFAULTS.topK;
  const templates = new TemplateSet(sop.templates ?? {});
  templates.checkAll();
  const seed = options.seed ?? 1;
  const rng = new Rng(seed);
  const states: Record<string, StateRuntime> = {};
  for (const s of Object.values(resolved.states)) states[s.name] = freshStateRuntime(s.roles, s.beginRole);
  const position: RunPosition = { current: sop.root, turn: 0, states, rng: rng.state, started: false };
  const listeners = options.listeners ?? [];
  const emit = (event: RunEvent): void => {
    if (event.type === 'memory_written' || event.type === 'file_written') cached = undefined; // prompts show memory files
    for (const l of listeners) l(event);
  };
  let embedderPromise: Promise<Embedder> | undefined;
  const usage = emptyUsage();
  // a paid embedder's requests count like calls (src/core/runtime/embedding-meter.ts)
  const meter = new RunEmbeddingMeter({
    usage,
    pricing: options.pricing,
    where: () => ({ state: position.current, turn: position.turn }),
    counted: (meta, u, cost) => observe(plugins, 'afterCall', meta, u, cost), // e.g. budgets
    emit,
  });
  const makeEmbedder = () => createEmbedder(sop.environment?.embedder).then(meter.metered);
  const embedder = (): Promise<Embedder> =>
    (embedderPromise ??= options.embedder ? Promise.resolve(meter.metered(options.embedder)) : makeEmbedder());
  const env =
    options.environment ??
    new MemoryEnvironment({
      visibility: sop.environment?.type ?? 'cooperative',
      // Messages are embedded only when something retrieves (reference quirk 32 avoided).
      embedder: topK > 0 ? (options.embedder ? meter.metered(options.embedder) : makeEmbedder) : undefined,
    });
  env.audiences = new AudienceRules(sop); // who may see each message (src/core/environment/audience.ts)
  let cached: Record<string, unknown> | undefined;
  let tooLongWarned = false;

  // Plugins are made from the context; what it takes from them (effects, the LLM, tool slots) is set right after.
  let plugins: RunPlugin[] = [];
  let semantics: Semantics = options.semantics ?? CLEAN_SEMANTICS;
  let llm = options.llm;
  let effects: Effects = directEffects;
  const late: { components?: ComponentServices; llmCall?: LlmCallHost } = {}; // made once the plugins are

  /** One LLM call: budgets told first, then through the run's effects (./llm-call.ts). */
  const callOne = (
    messages: ChatMessage[],
    settings: LlmSettings,
    meta: CallMeta,
    stream: boolean,
    key: string | undefined,
    through?: { via?: Via | undefined; signal?: AbortSignal | undefined; outlivesRun?: boolean },
  ): Promise<string> => {
    const model = options.model ?? settings.model ?? DEFAULTS.model;
    const price = options.pricing ? modelPrice(options.pricing, settings, options.model, model) : undefined;
    observe(plugins, 'beforeCall', messages, model, meta, price); // e.g. budgets
    return callLlm(late.llmCall!, messages, settings, meta, stream, key, through);
  };
  const ctx: RunContext = {
    sop,
    resolved,
    file: options.file,
    runId: options.runId ?? `run-${Date.now()}`,
    inputs: resolveInputs(sop, options.inputs ?? {}),
    seed,
    rng,
    signal: options.signal,
    get semantics() {
      return semantics;
    },
    redact: options.redact ?? makeRedactor(),
    stream: options.stream !== false,
    nameStripping: options.nameStripping ?? 'leading',
    env,
    templates,
    usage,
    human: options.human ?? new NoHumanInput(),
    position,
    vars: new ContextVars(),
    get plugins() {
      return plugins;
    },
    get effects() {
      return effects;
    },
    get components() {
      return late.components!;
    },
    prompt: {
      view: (view, state, stateStart) => transform(plugins, 'view', view, state, stateStart),
      agentPrompt: (state, context) => transform(plugins, 'agentPrompt', { parts: [], context: {} }, state, context),
      agentCall: (state, agent, role, settings) => transform(plugins, 'agentCall', { settings, meta: {} }, state, agent, role),
    },
    llm: () => llm,
    emit,
    listened: () => listeners.length > 0,
    perform: (spec, fn) => effects.perform(spec, fn),
    embedder,
    turn: () => position.turn,
    turnInState: (name) => position.states[name]?.chatNums ?? 0,
    topK: () => topK,
    baseContext: () => (cached ??= transform(plugins, 'context', baseContext(ctx))),
    envPrompt: (state: ResolvedState) =>
      renderText(state.def.environment_prompt ?? '', ctx.baseContext(), `/states/${state.name}/environment_prompt`),
    call: (messages: ChatMessage[], settings: LlmSettings, meta: CallMeta, stream = false, key?: string) =>
      callOne(messages, settings, meta, stream, key),
    callMany(calls, o) {
      const dispatch = decide(plugins, 'dispatch', o.state);
      const outlivesRun = dispatch?.outlivesRun === true;
      return callMany((c, key, via, signal) => callOne(c.messages, c.settings, c.meta, false, key, { via, signal, outlivesRun }), calls, {
        step: o.step,
        concurrency: o.concurrency,
        ...(dispatch ? { dispatch } : {}),
        ...(o.straggler ? { straggler: o.straggler } : {}),
        ...(options.signal ? { signal: options.signal } : {}),
      });
    },
    overBudget(agent, state, tokens, limit) {
      if (tooLongWarned) return;
      tooLongWarned = true;
      emit({
        type: 'warning',
        message: `the prompt of ${agent} in state "${state.name}" needs ${tokens} tokens even without history, over environment.max_prompt_tokens ${limit}`,
      });
    },
  };
  givePluginOptions(ctx, options.pluginOptions); // each plugin reads only those it declares (./plugin-options.ts)
  plugins = options.plugins?.(ctx) ?? [];
  checkPluginOptionsTaken(ctx);
  semantics = transform(plugins, 'semantics', semantics);
  llm = transform(plugins, 'llm', options.llm);
  effects = decide(plugins, 'effects') ?? directEffects;
  const toolExecutors =
    having(plugins, 'toolSlots').length > 0 ? transform(plugins, 'toolSlots', { ...options.toolExecutors }) : options.toolExecutors;
  observe(plugins, 'ready'); // every plugin is made: one may check what the others contribute
  late.components = new ComponentServices({
    file: options.file,
    makeEmbedder,
    sharedEmbedder: embedder,
    workspace: options.workspace,
    toolExecutors,
    emit,
    turn: () => position.turn,
  });
  const progress = new LlmProgress(emit);
  late.llmCall = {
    llm,
    model: options.model,
    serverLlm: options.serverLlm ?? sop.llm,
    resolved,
    runId: ctx.runId,
    position,
    seed,
    effects,
    usage: ctx.usage,
    redact: ctx.redact,
    pricing: options.pricing,
    signal: options.signal,
    progress,
    emit,
    counted: (meta, usage, cost) => observe(plugins, 'afterCall', meta, usage, cost), // e.g. budgets
  };
  return {
    ctx,
    refresh: () => (cached = undefined),
    started: () => meter.start(),
    async ending(counted) {
      const flush = (env as { flush?: () => Promise<void> }).flush;
      if (counted && flush) await flush.call(env).catch(() => {});
      meter.detach();
      progress.stop();
    },
  };
}

/** Template context shared by every prompt: inputs, goal, SOP facts (plugins add theirs by their context transform). */
function baseContext(ctx: RunContext): Record<string, unknown> {
  return {
    inputs: ctx.inputs,
    goal: ctx.inputs.goal,
    sop: { name: ctx.sop.name, description: ctx.sop.description ?? '' },
    memory: {}, // {{memory.NAME}}: filled by the actions plugin
  };
}
