// The run loop: pick the state and speaker, let the agent speak, record the message, repeat.
// Semantics follow Agents 1.0 (docs/agents-v1.md), with its clean behaviours unless `compat`
// asks for the original quirks. Features plug in through the hooks of src/runtime/hooks.ts.
import { ComponentServices } from '../agent/component-services.js';
import type { NameStripping } from '../agent/output.js';
import { agentTurn, type PipelineHost, type PrivateMemoryOption } from '../agent/pipeline.js';
import type { ToolSlotExecutor } from '../components/registry.js';
import type { EnvironmentMemory } from '../environment/environment.js';
import { AudienceRules, canSee } from '../environment/audience.js';
// memory: embeddings, retrieval, token budget (src/memory, src/environment, docs/memory.md)
import { MemoryEnvironment } from '../environment/memory-environment.js';
import { createEmbedder } from '../memory/create-embedder.js';
import type { Embedder } from '../memory/embedder.js';
import { RunEmbeddingMeter } from './embedding-meter.js';
import { isSampleTurn } from '../memory/token-budget.js';
import { alignedWindow, viewerAlignedWindow } from '../memory/window.js';
import type { Message, MessageKind } from '../environment/message.js';
import type { HumanInput } from '../io/human.js';
import { NoHumanInput } from '../io/human.js';
import type { CallMeta, ChatMessage, LlmProvider } from '../llm/types.js';
import { modelPrice, type PricingTable } from '../llm/pricing.js';
import { renderText, TemplateSet } from '../prompt/templates.js';
import { DEFAULTS, controllerLlm, resolveSop, type ResolvedSop, type ResolvedState } from '../sop/resolved.js';
import type { LlmSettings, Sop } from '../sop/types.js';
import { freshStateRuntime, transitDecision, type StateRuntime } from './controller.js';
import { emptyUsage, type RunEvent, type RunListener, type RunSettings, type UsageTotals } from './events.js';
import { Rng } from './rng.js';
import { controllerStrategy, type ControllerContext } from './controllers/index.js';
import { askJudge } from './controllers/judge.js';
import type { PluginFactory, RunHost, RunPlugin, Transition, TurnOutput, TurnStep } from './hooks.js';
import { directEffects, type EffectSpec, type Effects, type Performed } from './effects.js';
import type { RestorePoint, RunSnapshot } from './position.js';
import { isResumableError } from './checkpoint.js';
import type { RunPosition } from './position.js';
import { makeRedactor, type Redactor } from '../util/redact.js';
import { callLlm, type LlmCallHost } from './llm-call.js';
import { maybeSummarize, type SummaryHost } from './summaries.js';
import { RunCheckpoints } from './snapshot.js';
import { BudgetExhaustedError } from './budget-exhausted.js';

export interface RunOptions {
  sop: Sop;
  file: string;
  llm: LlmProvider;
  runId?: string;
  inputs?: Record<string, string>;
  seed?: number;
  /** Global guard on the number of turns. */
  maxTurns?: number;
  /** Force this model for every call. */
  model?: string;
  /**
   * The LLM block whose server (base_url, api_key_env) is the provider's own: the top-level SOP's
   * (default: this SOP's). A sub-flow's blocks that name another server are answered there.
   */
  serverLlm?: LlmSettings;
  human?: HumanInput;
  environment?: EnvironmentMemory;
  /** Embedder for retrieval when environment.top_k > 0 (default: created from environment.embedder). */
  embedder?: Embedder;
  listeners?: RunListener[];
  signal?: AbortSignal;
  /** Reproduce Agents 1.0 quirks (re-entry without begin turn, " " begin message). */
  compat?: 'agents-v1';
  nameStripping?: NameStripping;
  /** Stream agent replies (deltas are emitted as events). */
  stream?: boolean;
  /** Continue from a journaled checkpoint instead of starting afresh (sop resume, sop fork). */
  resume?: RestorePoint;
  /** Recorded in run_started: how the command line chose the LLM and human input. */
  launch?: Record<string, string | number | boolean>;
  /** The features plugged into this run (see src/runtime/hooks.ts); src/engine/run.ts gives the built-in ones. */
  plugins?: PluginFactory;
  /** The run's workspace folder (code components write output_code/ there). */
  workspace?: string;
  /** Executors bound to tool slots (tools components), by executor name (or slot name when the slot names none). */
  toolExecutors?: Record<string, ToolSlotExecutor>;
  /** secrets: applied to every prompt and executor result (default: secrets of the environment). */
  redact?: Redactor;
  /** Prices of models for the cost of calls (pricing.json with --pricing on top); without it no cost is counted. */
  pricing?: PricingTable;
}

export type RunStatus = 'finished' | 'max_turns' | 'failed' | 'interrupted' | 'budget';

export interface RunResult {
  status: RunStatus;
  turns: number;
  finalState?: string;
  error?: Error;
  usage: UsageTotals;
  messages: readonly Message[];
  /** The SOP's result (its last finish command) and summary, when it has one. */
  result?: string;
  summary?: string;
  /** Status "budget": which budget was spent (docs/cost.md). */
  budget?: string;
}

export type { RunPosition } from './position.js';

type Step = TurnStep;

/** The run loop. Features plug in through `options.plugins`; src/engine/run.ts gives the built-in ones. */
export class RunLoop {
  readonly resolved: ResolvedSop;
  readonly env: EnvironmentMemory;
  readonly templates: TemplateSet;
  readonly usage = emptyUsage();
  readonly inputs: Record<string, string>;
  readonly runId: string;
  private readonly rng: Rng;
  private readonly listeners: RunListener[];
  readonly human: HumanInput;
  private readonly maxTurns: number;
  readonly seed: number;
  readonly position: RunPosition;
  /** Every outside effect (LLM call, human answer, executor) goes through these (durable with the journal's ledger). */
  readonly effects: Effects;
  private stopRequested = false;
  /** A spent budget's on_exhausted state, entered next (docs/cost.md). */
  private divert?: string;
  /** The features plugged into this run, in the order they are consulted. */
  readonly plugins: readonly RunPlugin[];
  private readonly llm: LlmProvider;
  /** Components' shared memory, knowledge bases, workspace and tool slots (native SOPs). */
  readonly components: ComponentServices;
  private readonly pipeline: PipelineHost;
  private budgetWarned = false;
  private readonly redact: Redactor;
  /** The run's LLM call (src/runtime/llm-call.ts). */
  private readonly llmCall: LlmCallHost;
  /** Snapshot at turn boundaries, restore on resume (src/runtime/snapshot.ts). */
  private readonly checkpoints: RunCheckpoints;
  /** The running summary (src/runtime/summaries.ts). */
  private readonly summaries: SummaryHost;

  /** A paid embedder's requests, counted like calls (src/runtime/embedding-meter.ts). */
  private readonly embeddings: RunEmbeddingMeter;

  constructor(private readonly options: RunOptions) {
    this.embeddings = new RunEmbeddingMeter({
      usage: this.usage,
      pricing: options.pricing,
      where: () => ({ state: this.position.current, turn: this.position.turn }),
      counted: (meta, usage, cost) => this.llmCall.counted?.(meta, usage, cost),
      emit: (e) => this.emit(e),
    });
    this.resolved = resolveSop(options.sop);
    const sop = options.sop;
    const topK = sop.environment?.top_k ?? DEFAULTS.topK;
    this.env =
      options.environment ??
      new MemoryEnvironment({
        visibility: sop.environment?.type ?? 'cooperative',
        // Messages are embedded only when something retrieves (reference quirk 32 avoided).
        embedder:
          topK > 0
            ? options.embedder
              ? this.embeddings.metered(options.embedder)
              : () => createEmbedder(sop.environment?.embedder).then(this.embeddings.metered)
            : undefined,
      });
    // audiences: who may see each message (src/environment/audience.ts)
    this.env.audiences = new AudienceRules(sop);
    this.templates = new TemplateSet(sop.templates ?? {});
    this.templates.checkAll();
    this.inputs = resolveInputs(sop, options.inputs ?? {});
    this.seed = options.seed ?? 1;
    this.rng = new Rng(this.seed);
    this.listeners = options.listeners ?? [];
    this.human = options.human ?? new NoHumanInput();
    this.maxTurns = options.maxTurns ?? DEFAULTS.maxTurns;
    this.runId = options.runId ?? `run-${Date.now()}`;
    this.redact = options.redact ?? makeRedactor();
    const states: Record<string, StateRuntime> = {};
    for (const s of Object.values(this.resolved.states)) states[s.name] = freshStateRuntime(s.roles, s.beginRole);
    this.position = { current: sop.root, turn: 0, states, rng: this.rng.state, started: false };
    this.plugins = options.plugins?.(this.host()) ?? [];
    this.llm = this.plugins.reduce((llm, p) => p.wrapLlm?.(llm) ?? llm, options.llm);
    this.effects = this.plugins.find((p) => p.effects)?.effects ?? directEffects;
    this.components = new ComponentServices({
      file: options.file,
      makeEmbedder: () => createEmbedder(sop.environment?.embedder).then(this.embeddings.metered),
      sharedEmbedder: () => this.runEmbedder(),
      workspace: options.workspace,
      toolExecutors: options.toolExecutors,
      emit: (e) => this.emit(e),
      turn: () => this.position.turn,
    });
    this.llmCall = {
      llm: this.llm,
      model: options.model,
      serverLlm: options.serverLlm ?? options.sop.llm,
      resolved: this.resolved,
      position: this.position,
      seed: this.seed,
      effects: this.effects,
      usage: this.usage,
      redact: this.redact,
      pricing: options.pricing,
      signal: options.signal,
      emit: (e) => this.emit(e),
      counted: (meta, usage, cost) => {
        for (const p of this.plugins) p.afterCall?.(meta, usage, cost); // e.g. budgets
      },
    };
    // Native SOPs whose extract components write shared memory journal it in checkpoints.
    const sharedCheckpointed =
      !sop.agents_v1 && Object.values(sop.states).some((st) => Object.values(st.components ?? {}).some((c) => c?.extract !== undefined));
    this.checkpoints = new RunCheckpoints({
      position: this.position,
      rng: this.rng,
      env: this.env,
      usage: this.usage,
      llm: this.llm,
      human: this.human,
      effects: this.effects,
      plugins: this.plugins,
      sharedComponents: sharedCheckpointed ? this.components : undefined,
      emit: (e) => this.emit(e),
    });
    this.summaries = {
      resolved: this.resolved,
      env: this.env,
      templates: this.templates,
      minSimilarity: () => sop.environment?.min_similarity,
      topK: () => this.topK(),
      baseContext: () => this.baseContext(),
      envPrompt: (state) => this.envPrompt(state),
      call: (m, settings, meta) => this.call(m, settings, meta),
      turn: () => this.position.turn,
      emit: (e) => this.emit(e),
    };
    this.pipeline = {
      sop,
      resolved: this.resolved,
      templates: this.templates,
      env: this.env,
      components: this.components,
      extensions: this.plugins,
      nameStripping: options.nameStripping ?? 'leading',
      stream: options.stream !== false,
      baseContext: () => this.baseContext(),
      envPrompt: (state) => this.envPrompt(state),
      topK: () => this.topK(),
      turn: () => this.position.turn,
      turnInState: (name) => this.position.states[name]!.chatNums,
      call: (m, settings, meta, stream) => this.call(m, settings, meta, stream),
      overBudget: (agent, state, tokens, budget) => {
        if (this.budgetWarned) return;
        this.budgetWarned = true;
        this.emit({
          type: 'warning',
          message: `the prompt of ${agent} in state "${state.name}" needs ${tokens} tokens even without history, over environment.max_prompt_tokens ${budget}`,
        });
      },
    };
  }

  /** What the run offers its plugins (src/runtime/hooks.ts). */
  private host(): RunHost {
    return {
      sop: this.options.sop,
      resolved: this.resolved,
      file: this.options.file,
      runId: this.runId,
      env: this.env,
      templates: this.templates,
      usage: this.usage,
      inputs: this.inputs,
      human: this.human,
      seed: this.seed,
      signal: this.options.signal,
      compat: this.options.compat,
      stream: this.options.stream !== false,
      redact: this.redact,
      llm: () => this.llm,
      emit: (e) => this.emit(e),
      turn: () => this.position.turn,
      turnInState: (name) => this.position.states[name]?.chatNums ?? 0,
      baseContext: () => this.baseContext(),
      call: (m, settings, meta, stream) => this.call(m, settings, meta, stream),
      perform: <T>(spec: EffectSpec, fn: () => Promise<T>): Promise<Performed<T>> => this.effects.perform(spec, fn),
      embedder: () => this.runEmbedder(),
    };
  }

  // --- snapshot at turn boundaries, restore on resume (the journal records and reads them: src/runtime/snapshot.ts) ---

  /** Stop at the next turn boundary (first Ctrl-C); the run ends `interrupted` and can be resumed. */
  requestStop(): void {
    this.stopRequested = true;
  }

  /** Everything needed to continue from this turn boundary (messages come from the journal). */
  snapshot(): RunSnapshot {
    return this.checkpoints.snapshot();
  }

  private emit(event: RunEvent): void {
    for (const l of this.listeners) l(event);
  }

  /** Template context shared by every prompt: inputs, goal, SOP facts. */
  private baseContext(): Record<string, unknown> {
    return {
      inputs: this.inputs,
      goal: this.inputs.goal,
      sop: { name: this.options.sop.name, description: this.options.sop.description ?? '' },
      memory: {}, // {{memory.NAME}}: filled by the actions plugin, read afresh for every prompt
      ...this.pluginContext(),
    };
  }

  private pluginContext(): Record<string, unknown> {
    let out: Record<string, unknown> | undefined;
    for (const p of this.plugins) if (p.context) out = { ...out, ...p.context() };
    return out ?? {};
  }

  // The embedder plugins search with (the run's, else one made from environment.embedder)
  private embedderPromise?: Promise<Embedder>;
  private runEmbedder(): Promise<Embedder> {
    return (this.embedderPromise ??= this.options.embedder
      ? Promise.resolve(this.embeddings.metered(this.options.embedder))
      : createEmbedder(this.options.sop.environment?.embedder).then(this.embeddings.metered));
  }

  /** Run options that change behaviour, journaled in run_started and resumed (a resume or fork behaves the same). */
  private recordedSettings(): RunSettings {
    const o = this.options;
    return { max_turns: this.maxTurns, model: o.model, compat: o.compat, name_stripping: o.nameStripping, stream: o.stream };
  }

  async run(): Promise<RunResult> {
    const sop = this.options.sop;
    if (this.options.resume) {
      // continue from a journaled checkpoint; the settings that apply now are journaled for the next resume
      await this.checkpoints.restore(this.options.resume, { settings: this.recordedSettings(), launch: this.options.launch });
    } else {
      this.emit({
        type: 'run_started',
        run_id: this.runId,
        sop: sop.name,
        file: this.options.file,
        root: sop.root,
        seed: this.seed,
        inputs: this.inputs,
        llm: this.llm.id,
        time: new Date().toISOString(),
        document: sop,
        launch: this.options.launch,
        settings: this.recordedSettings(),
      });
      this.checkpoints.checkpoint();
    }
    this.embeddings.start();
    let status: RunStatus = 'finished';
    let error: Error | undefined;
    let finalState: string | undefined;
    let budget: string | undefined;
    try {
      for (;;) {
        if (this.options.signal?.aborted || this.stopRequested) {
          status = 'interrupted';
          break;
        }
        if (this.position.turn >= this.maxTurns) {
          status = 'max_turns';
          break;
        }
        const turnBefore = this.position.turn;
        const messagesBefore = this.env.messages.length;
        let step: Step | { finished: string } | undefined;
        try {
          const divert = this.divert;
          this.divert = undefined;
          step = await this.next(divert);
          if ('finished' in step) {
            finalState = step.finished;
            break;
          }
          await this.takeTurn(step);
        } catch (err) {
          // cost: a budget refused an LLM call; a turn whose message was not recorded is not taken
          if (!(err instanceof BudgetExhaustedError)) throw err;
          if (step && !('finished' in step) && this.env.messages.length === messagesBefore && this.position.turn > turnBefore) {
            this.position.turn = turnBefore;
            this.position.states[step.state.name]!.chatNums--;
          }
          if (err.target !== undefined) {
            this.emit({ type: 'warning', message: `budget spent (${err.message}); moving to state "${err.target}"` });
            this.divert = err.target;
            continue;
          }
          status = 'budget';
          budget = err.message;
          break;
        }
        this.samplePromptTokens();
        this.checkpoints.checkpoint();
        // Let signal handlers (Ctrl-C) and timers run at each turn boundary, even
        // when no LLM call waited on I/O (cassettes, mock).
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch (err) {
      error = err instanceof Error ? err : new Error(String(err));
      status = this.options.signal?.aborted || isResumableError(err) ? 'interrupted' : 'failed';
    }
    let outcome: { result?: string; summary?: string } = {};
    for (const p of this.plugins) if (p.result) outcome = p.result();
    for (const p of this.plugins) p.close?.();
    // the last messages' embeddings (in the background) are paid for: counted before the end
    const env = this.env as { flush?: () => Promise<void> };
    if (status !== 'interrupted' && status !== 'failed' && env.flush) await env.flush().catch(() => {});
    this.embeddings.detach(); // a sub-flow's embedder: its parent counts again
    this.emit({
      type: 'run_finished',
      status,
      turns: this.position.turn,
      final_state: finalState,
      error: error?.message,
      ...(budget !== undefined ? { budget } : {}),
      usage: this.usage,
      time: new Date().toISOString(),
      ...(outcome.result !== undefined ? { result: outcome.result } : {}),
    });
    return {
      status,
      turns: this.position.turn,
      finalState,
      error,
      usage: this.usage,
      messages: this.env.messages,
      result: outcome.result,
      summary: outcome.summary,
      ...(budget !== undefined ? { budget } : {}),
    };
  }

  /** Record the size of the latest agent prompt at sample turns, to show whether prompts stay flat. */
  private samplePromptTokens(): void {
    const turn = this.position.turn;
    const last = this.usage.agent_prompt_tokens_last;
    if (last === undefined || !isSampleTurn(turn)) return;
    (this.usage.agent_prompt_tokens_at_turn ??= {})[String(turn)] = last;
  }

  private state(name: string): ResolvedState {
    return this.resolved.states[name]!;
  }

  /** Decide the next state and speaker (SOP.next of the reference). */
  private async next(divert?: string): Promise<Step | { finished: string }> {
    const pos = this.position;
    if (!pos.started) {
      pos.started = true;
      const root = this.state(pos.current);
      if (root.final) return { finished: root.name };
      this.emit({ type: 'state_entered', state: root.name, turn: pos.turn, reason: 'root' });
      return this.enter(root);
    }
    let current = this.state(pos.current);
    const rt = pos.states[current.name]!;
    const { target, reason } = divert !== undefined ? { target: divert, reason: 'budget' as const } : await this.transit(current, rt);
    if (target !== current.name) {
      const to = this.state(target);
      this.emit({ type: 'state_entered', state: to.name, from: current.name, turn: pos.turn, reason });
      if (to.final) return { finished: to.name };
      pos.current = to.name;
      current = to;
      const trt = pos.states[to.name]!;
      if (trt.visits > 0 && this.options.compat !== 'agents-v1') {
        // A new visit starts afresh: begin turn, turn counter and rotation (clean behaviour).
        pos.states[to.name] = { ...freshStateRuntime(to.roles, to.beginRole), visits: trt.visits };
      }
      const fresh = pos.states[to.name]!;
      if (!fresh.begun) return this.enter(to);
    }
    return this.route(current);
  }

  /** First turn of a visit: the begin role speaks, no routing call. */
  private enter(state: ResolvedState): Step {
    const rt = this.position.states[state.name]!;
    rt.visits++;
    this.env.stateStart = this.env.messages.length;
    // Competitive: the summary covered the previous state, which this state must not see.
    // (A plugin may keep it: Agents 1.0 had one summary for the whole run, read by every judge.)
    if (this.env.visibility === 'competitive' && !this.plugins.some((p) => p.keepsSummary)) this.env.summary = '';
    const role = state.beginRole!;
    const agent = state.roleToAgent[role]!;
    this.emit({ type: 'speaker_chosen', state: state.name, agent, role, turn: this.position.turn + 1, how: 'begin' });
    return { state, role, agent, begin: true };
  }

  private async transit(
    state: ResolvedState,
    rt: StateRuntime,
  ): Promise<{ target: string; reason: 'judge' | 'max_turns' | 'direct' | 'finish' }> {
    const decided = this.pluginTransit(state, rt); // e.g. command states move on by finish or max_turns
    if (decided) return decided;
    const decision = transitDecision(state.nextStates, rt.chatNums, state.maxTurns);
    if (decision.kind !== 'ask_judge') {
      return { target: state.nextStates[decision.key]!, reason: decision.kind === 'max_turns' ? 'max_turns' : 'direct' };
    }
    const viewer = this.env.audiences?.active ? this.env.audiences.controllerViewer(state.name) : undefined;
    const { key, target, known } = await askJudge(state, rt, this.controllerContext(), this.env.summaryFor(viewer));
    if (!known)
      this.emit({ type: 'warning', message: `judge of state "${state.name}" answered key "${key}", which has no transition; staying` });
    this.emit({ type: 'judge', state: state.name, turn: this.position.turn, key, target, fallback: !known });
    return { target, reason: 'judge' };
  }

  private pluginTransit(state: ResolvedState, rt: StateRuntime): Transition | undefined {
    for (const p of this.plugins) {
      const t = p.transit?.(state, rt);
      if (t) return t;
    }
    return undefined;
  }

  /** Choose the next speaker within the state (SOP.route of the reference): its controller strategy picks. */
  private async route(state: ResolvedState): Promise<Step> {
    const rt = this.position.states[state.name]!;
    const roles = state.roles;
    let role: string;
    let how: 'order' | 'random' | 'rule' | 'rule_fallback' | 'single';
    if (roles.length === 1) {
      role = roles[0]!;
      how = 'single';
    } else {
      const picked = await controllerStrategy(state.controllerType).pick(state, rt, this.controllerContext());
      role = picked.role;
      how = picked.how;
      if (picked.warning) this.emit({ type: 'warning', message: picked.warning });
    }
    rt.currentRole = role;
    this.position.rng = this.rng.state;
    const agent = state.roleToAgent[role]!;
    this.emit({ type: 'speaker_chosen', state: state.name, agent, role, turn: this.position.turn + 1, how });
    return { state, role, agent, begin: false };
  }

  /** What a controller strategy may use (src/runtime/controllers). */
  private controllerContext(): ControllerContext {
    return {
      rng: this.rng,
      compat: this.options.compat,
      turn: this.position.turn,
      history: (state) => this.controllerHistory(state),
      last: () => this.controllerLast(),
      promptContext: (state) => ({ ...this.baseContext(), state: { name: state.name }, environment_prompt: this.envPrompt(state) }),
      render: (name, ctx) => this.templates.render(name, ctx),
      llm: (state) => controllerLlm(this.resolved, state),
      call: (messages, settings, meta) => this.call(messages, settings, meta),
    };
  }

  /**
   * What the judge and the speaker choice see: the state's messages, at most the last
   * max_chat_history of them (grown since the last summary refresh, as agents' windows are; the
   * Agents 1.0 layout under --compat agents-v1 slides), and the earlier visible messages most
   * similar to the last one.
   */
  private async controllerHistory(state: ResolvedState): Promise<{ history: Message[]; relevant: Message[] }> {
    const rules = this.env.audiences;
    if (rules?.active) {
      // audiences: what the state's controller sees (controller.sees; default: its roles' common ground)
      const viewer = rules.controllerViewer(state.name);
      // the window rule per viewer: it grows by what the viewer may see until its summary is refreshed
      const all = this.env.seenBy(viewer);
      const w =
        this.options.compat === 'agents-v1'
          ? state.maxChatHistory
          : viewerAlignedWindow(state.maxChatHistory, all, this.env.messages.length, state.summary.every);
      const history = all.slice(Math.max(0, all.length - w)).filter((m) => m.id >= this.env.stateStart);
      const before = history[0]?.id ?? this.env.messages.length;
      const relevant = await this.env.retrieve({
        topK: this.topK(),
        minSimilarity: this.options.sop.environment?.min_similarity,
        before,
        viewer,
      });
      return { history, relevant };
    }
    const n = this.env.messages.length;
    const w = this.options.compat === 'agents-v1' ? state.maxChatHistory : alignedWindow(state.maxChatHistory, n, state.summary.every);
    const start = Math.max(this.env.stateStart, n - w);
    const history = this.env.messages.slice(start);
    const relevant = await this.env.retrieve({
      topK: this.topK(),
      minSimilarity: this.options.sop.environment?.min_similarity,
      before: start,
    });
    return { history, relevant };
  }

  /** The last message the state's controller may see (audiences), else the last message. */
  private controllerLast(): Message | undefined {
    const msgs = this.env.messages;
    const rules = this.env.audiences;
    if (!rules?.active) return msgs[msgs.length - 1];
    const viewer = rules.controllerViewer(this.position.current);
    const start = this.env.visibility === 'competitive' ? this.env.stateStart : 0;
    for (let i = msgs.length - 1; i >= 0; i--) if (canSee(viewer, msgs[i]!, start, rules)) return msgs[i];
    return undefined;
  }

  private topK(): number {
    return this.options.sop.environment?.top_k ?? DEFAULTS.topK;
  }

  private envPrompt(state: ResolvedState): string {
    const text = state.def.environment_prompt ?? '';
    return renderText(text, this.baseContext(), `/states/${state.name}/environment_prompt`);
  }

  /** One turn: the chosen agent speaks and the message is recorded. */
  private async takeTurn(step: Step): Promise<void> {
    const { state, role, agent, begin } = step;
    const pos = this.position;
    const rt = pos.states[state.name]!;
    rt.chatNums++;
    rt.begun = true;
    pos.turn++;
    const agentDef = this.options.sop.agents[agent]!;
    let content: string;
    let kind: MessageKind = 'speech';
    let execute: (() => Promise<void>) | undefined;
    if (!agentDef.human) for (const p of this.plugins) await p.beforeTurn?.(step); // e.g. the Agents 1.0 observation
    if (agentDef.human) {
      const seen = this.env.audiences?.active ? this.env.seenBy(agent) : this.env.messages;
      const last = seen[seen.length - 1];
      // An answer already in the journal is not asked again (durable effects).
      const answer = await this.effects.perform({ kind: 'human', label: `${agent}@${state.name}`, marksStart: true }, () =>
        this.human.ask({
          agent,
          role,
          state: state.name,
          kind: 'turn',
          prompt: last ? `${last.sender} (${last.role}): ${last.content}` : '',
        }),
      );
      if (answer.reused) this.human.skip?.(1);
      content = answer.value;
      kind = 'human';
    } else if (begin && state.beginRoleExplicit && state.def.begin_query !== undefined) {
      content = renderText(state.def.begin_query, this.baseContext(), `/states/${state.name}/begin_query`);
      kind = 'begin';
    } else if (begin && state.beginRoleExplicit && this.options.compat === 'agents-v1') {
      content = ' ';
      kind = 'begin';
    } else {
      const out = await this.speak(step);
      content = out.content;
      execute = out.execute;
    }
    const addressed = this.env.audiences?.active ? this.env.audiences.address(state.name, role, agent, content) : undefined;
    if (addressed?.warning) this.emit({ type: 'warning', message: addressed.warning });
    const message: Message = {
      id: this.env.messages.length,
      turn: pos.turn,
      state: state.name,
      sender: agent,
      role,
      content: addressed?.content ?? content,
      kind,
      timestamp: new Date().toISOString(),
      ...(addressed
        ? {
            audience: addressed.audience,
            ...(addressed.to ? { to: addressed.to } : {}),
            ...(addressed.data ? { data: addressed.data } : {}),
          }
        : {}),
    };
    await this.env.add(message);
    for (const p of this.plugins) p.afterMessage?.(message);
    this.emit({ type: 'message', message });
    await execute?.();
    await maybeSummarize(this.summaries, state);
  }

  /** The agent's reply: a plugin's (a command, the Agents 1.0 turn), else the agent prompt pipeline's. */
  private async speak(step: Step): Promise<TurnOutput> {
    const act = (extra?: ChatMessage[], privateMemory?: PrivateMemoryOption) =>
      this.act(step.state, step.role, step.agent, extra, privateMemory);
    for (const p of this.plugins) {
      const out = await p.speak?.(step, act);
      if (out) return out;
    }
    return { content: await act() };
  }

  /** The agent prompt pipeline (src/agent/pipeline.ts): the agent's prompt, its LLM call, the reply as recorded. */
  private act(
    state: ResolvedState,
    role: string,
    agent: string,
    extra: ChatMessage[] = [],
    privateMemory?: PrivateMemoryOption,
  ): Promise<string> {
    return agentTurn(this.pipeline, { state, role, agent, extra, privateMemory });
  }

  /** One LLM call of the run: effects, usage, an `llm_call` event (src/runtime/llm-call.ts). */
  private call(messages: ChatMessage[], settings: LlmSettings, meta: CallMeta, stream = false): Promise<string> {
    const model = this.options.model ?? settings.model ?? DEFAULTS.model;
    const price = this.options.pricing ? modelPrice(this.options.pricing, settings, this.options.model, model) : undefined;
    for (const p of this.plugins) p.beforeCall?.(messages, model, meta, price); // e.g. budgets
    return callLlm(this.llmCall, messages, settings, meta, stream);
  }
}

/** Inputs with defaults applied; a required input without a value is an error. */
export function resolveInputs(sop: Sop, given: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, def] of Object.entries(sop.inputs ?? {})) {
    const value = Object.prototype.hasOwnProperty.call(given, name) ? given[name] : def.default;
    if (value === undefined) {
      if (def.required)
        throw new Error(
          `input "${name}" is required${def.description ? ` (${def.description})` : ''}; pass --input ${name}=VALUE${name === 'goal' ? ' or --goal TEXT' : ''}`,
        );
      continue;
    }
    out[name] = value;
  }
  for (const [name, value] of Object.entries(given)) if (!(name in out)) out[name] = value;
  return out;
}

/** Names given on the command line that the SOP does not declare. */
export function undeclaredInputs(sop: Sop, given: Record<string, string>): string[] {
  return Object.keys(given).filter((n) => !Object.prototype.hasOwnProperty.call(sop.inputs ?? {}, n));
}
