// The run loop: pick the state and speaker, let the agent speak, record the message, repeat.
// Semantics follow Agents 1.0 (see shared/reference/agents-v1-semantics.md §3), with the clean
// behaviours of its §6 unless `compat` asks for the original quirks.
import { roleComponents, type ComponentPart } from '../agent/components.js';
import { extractTag, stripSpeakerName, type NameStripping } from '../agent/output.js';
import type { EnvironmentMemory } from '../environment/environment.js';
// memory: embeddings, retrieval, token budget (src/memory, src/environment, docs/memory.md)
import { MemoryEnvironment } from '../environment/memory-environment.js';
import { createEmbedder } from '../memory/create-embedder.js';
import type { Embedder } from '../memory/embedder.js';
import { isSampleTurn, trimToBudget, type PromptPlan } from '../memory/token-budget.js';
import { renderMessage, type Message, type MessageKind } from '../environment/message.js';
import type { HumanInput } from '../io/human.js';
import { NoHumanInput } from '../io/human.js';
import { estimateUsage, type CallMeta, type ChatMessage, type LlmProvider } from '../llm/types.js';
import { renderText, TemplateSet } from '../prompt/templates.js';
import {
  DEFAULTS, agentLlm, componentsOf, controllerLlm, resolveSop, summaryLlm,
  type ResolvedSop, type ResolvedState,
} from '../sop/resolved.js';
import type { LlmSettings, Sop } from '../sop/types.js';
import {
  freshStateRuntime, parseJudgeReply, targetOf, transitDecision,
  type StateRuntime,
} from './controller.js';
import { addUsage, emptyUsage, type RunEvent, type RunListener, type UsageTotals } from './events.js';
import { Rng } from './rng.js';
import { controllerStrategy, type ControllerContext } from './controllers/index.js';
// agents-v1: Agents 1.0 prompt assembly for imported SOPs (src/compat/agents-v1, docs/agents-v1.md)
import { AgentsV1Turns, type AgentsV1Options } from '../compat/agents-v1/turns.js';
import { withConcise } from '../compat/agents-v1/concise.js';
// actions: commands, executors and memory files (src/actions, src/executors, docs/executors.md)
import { ActionRuntime, type ActionOptions } from '../actions/runtime.js';
// scientist: task board, world model, resource levels and mood (src/scientist, docs/scientist.md)
import { scientistContext, taskLlmProfile } from '../scientist/views.js';
import { limitToVisit } from '../actions/prompt.js';
// durability: checkpoints, resume and journaled effects (src/journal, docs/durability.md)
import { EffectLedger, llmEffectLabel, type EffectIndex, type LlmEffectResult, type RerunPolicy } from '../journal/effects.js';
import { SNAPSHOT_VERSION, assignOwn, cloneJson, isResumableError, restoreExtensions, saveExtensions, type ResumeFrom, type RunSnapshot } from '../journal/snapshot.js';

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
  /** agents-v1: embedder, workspace and tool executors for SOPs with `agents_v1` (imported Agents 1.0 configs). */
  agentsV1?: AgentsV1Options;
  // durability
  /** Continue from a journaled checkpoint instead of starting afresh (sop resume, sop fork). */
  resume?: ResumeFrom;
  /** Side effects interrupted by a crash: perform again with --auto-run, or ask. */
  rerun?: RerunPolicy;
  /** Recorded in run_started: how the command line chose the LLM and human input. */
  launch?: Record<string, string | number | boolean>;
  /** A sub-flow of a resumed run: the journal's effect results (its keys are prefixed by the flow). */
  effectIndex?: EffectIndex;
  // actions
  /** Run folder, workspace and executor flags (--auto-run, --yes, --sandbox); see src/actions/runtime.ts. */
  actions?: ActionOptions;
}

export type RunStatus = 'finished' | 'max_turns' | 'failed' | 'interrupted';

export interface RunResult {
  status: RunStatus;
  turns: number;
  finalState?: string;
  error?: Error;
  usage: UsageTotals;
  messages: readonly Message[];
  /** actions: the SOP's result (its last finish command) and summary, when it has one. */
  result?: string;
  summary?: string;
}

import type { RunPosition } from './position.js';

export type { RunPosition } from './position.js';

interface Step { state: ResolvedState; role: string; agent: string; begin: boolean }

export class Run {
  readonly resolved: ResolvedSop;
  readonly env: EnvironmentMemory;
  readonly templates: TemplateSet;
  readonly usage = emptyUsage();
  readonly inputs: Record<string, string>;
  readonly runId: string;
  private readonly rng: Rng;
  private readonly listeners: RunListener[];
  private readonly human: HumanInput;
  private readonly maxTurns: number;
  private readonly seed: number;
  readonly position: RunPosition;
  /** Every outside effect (LLM call, human answer, executor) goes through this ledger. */
  readonly effects: EffectLedger;
  private stopRequested = false;
  /** actions: commands, executors, memory files and sub-flows. */
  readonly actions: ActionRuntime;
  /** agents-v1: private memories and v1 prompts, for SOPs with `agents_v1`. */
  readonly v1?: AgentsV1Turns;
  private budgetWarned = false;

  constructor(private readonly options: RunOptions) {
    this.resolved = resolveSop(options.sop);
    const sop = options.sop;
    const topK = sop.environment?.top_k ?? DEFAULTS.topK;
    this.env = options.environment ?? new MemoryEnvironment({
      visibility: sop.environment?.type ?? 'cooperative',
      // Messages are embedded only when something retrieves (reference quirk 32 avoided).
      embedder: topK > 0 ? (options.embedder ?? (() => createEmbedder(sop.environment?.embedder))) : undefined,
    });
    this.templates = new TemplateSet(sop.templates ?? {});
    this.templates.checkAll();
    this.inputs = resolveInputs(sop, options.inputs ?? {});
    this.seed = options.seed ?? 1;
    this.rng = new Rng(this.seed);
    this.listeners = options.listeners ?? [];
    this.human = options.human ?? new NoHumanInput();
    this.maxTurns = options.maxTurns ?? DEFAULTS.maxTurns;
    this.runId = options.runId ?? `run-${Date.now()}`;
    const states: Record<string, StateRuntime> = {};
    for (const s of Object.values(this.resolved.states)) states[s.name] = freshStateRuntime(s.roles, s.beginRole);
    this.position = { current: sop.root, turn: 0, states, rng: this.rng.state, started: false };
    this.effects = new EffectLedger((e) => this.emit(e), () => this.position.turn, options.resume?.effects ?? options.effectIndex, options.rerun,
      options.actions?.flow ? `${options.actions.flow}/` : '',
      { position: () => this.options.llm.position, seek: (n) => this.options.llm.seek?.(n) });
    if (sop.agents_v1) {
      // agents-v1: concise mode on every call, and agent turns built the Agents 1.0 way.
      this.options = { ...options, llm: withConcise(options.llm, AgentsV1Turns.conciseSentence(sop), (s) => Boolean(this.resolved.states[s]?.def.controller?.judge?.last_prompt)) };
      this.v1 = new AgentsV1Turns({
        sop, resolved: this.resolved, file: options.file, env: this.env, compat: options.compat === 'agents-v1', stream: options.stream !== false,
        call: (m, settings, meta, stream) => this.call(m, settings, meta, stream), emit: (e) => this.emit(e), context: () => this.baseContext(),
        turn: () => this.position.turn, turnInState: (name) => this.position.states[name]?.chatNums ?? 0,
      }, {
        workspace: options.actions?.workspace,
        ...(options.embedder ? { embedder: async () => options.embedder! } : {}),
        ...options.agentsV1,
      });
    }
    // actions: a sub-flow (sop executor) is a nested Run with its own environment.
    this.actions = new ActionRuntime({
      sop, file: options.file, runId: this.runId, env: this.env, templates: this.templates, usage: this.usage,
      human: this.human, signal: options.signal,
      emit: (e) => this.emit(e),
      turn: () => this.position.turn,
      baseContext: () => this.baseContext(),
      perform: (spec, fn) => this.effects.perform(spec, fn),
      inputs: this.inputs, embedder: () => this.runEmbedder(), // scientist
      subRun: async (r) => {
        const res = await new Run({
          ...options, sop: r.sop, file: r.file, runId: r.runId, inputs: r.inputs, listeners: r.listeners, actions: r.actions,
          environment: undefined, resume: undefined, launch: undefined,
          effectIndex: options.resume?.effects ?? options.effectIndex, // durability: replay a sub-flow's journaled effects
        }).run();
        return { status: res.status, turns: res.turns, result: res.result, summary: res.summary, error: res.error, usage: res.usage };
      },
    }, options.actions);
  }

  // --- durability: snapshot at turn boundaries, restore on resume (src/journal) ---

  /** Stop at the next turn boundary (first Ctrl-C); the run ends `interrupted` and can be resumed. */
  requestStop(): void {
    this.stopRequested = true;
  }

  /** Everything needed to continue from this turn boundary (messages come from the journal). */
  snapshot(): RunSnapshot {
    const cursor = this.options.llm.position;
    const extensions = saveExtensions(this.checkpointables());
    return {
      v: SNAPSHOT_VERSION,
      position: { ...cloneJson(this.position), rng: this.rng.state },
      environment: { messages: this.env.messages.length, summary: this.env.summary, state_start: this.env.stateStart },
      usage: cloneJson(this.usage),
      ...(cursor !== undefined ? { llm_cursor: cursor } : {}),
      human_consumed: this.human.consumed,
      ...(extensions ? { extensions } : {}),
    };
  }

  /** Parts with state of their own, journaled in each checkpoint (see Checkpointable in src/journal/snapshot.ts). */
  private checkpointables(): Record<string, unknown> {
    return { actions: this.actions, v1: this.v1 };
  }

  private checkpoint(): void {
    this.emit({ type: 'checkpoint', turn: this.position.turn, snapshot: this.snapshot() });
    this.effects.reset(this.position.turn);
  }

  private async restore(from: ResumeFrom): Promise<void> {
    const s = from.snapshot;
    if (!s) {
      // Killed before its first checkpoint: start over, without a second run_started.
      this.emit({ type: 'resumed', mode: from.mode, from_turn: 0, time: new Date().toISOString() });
      this.checkpoint();
      return;
    }
    for (const m of from.messages) await this.env.add(m);
    this.env.summary = s.environment.summary;
    this.env.stateStart = s.environment.state_start;
    assignOwn(this.position, cloneJson(s.position));
    this.rng.state = s.position.rng;
    assignOwn(this.usage, cloneJson(s.usage));
    if (from.seekLlm !== false && s.llm_cursor !== undefined) this.options.llm.seek?.(s.llm_cursor);
    const answered = s.human_consumed - this.human.consumed;
    if (answered > 0) this.human.skip?.(answered);
    await restoreExtensions(this.checkpointables(), s.extensions, from.files ?? {});
    this.effects.reset(s.position.turn);
    this.emit({ type: 'resumed', mode: from.mode, from_turn: s.position.turn, time: new Date().toISOString() });
  }

  private emit(event: RunEvent): void {
    for (const l of this.listeners) l(event);
  }

  /** Template context shared by every prompt: inputs, goal, SOP facts. */
  private baseContext(): Record<string, unknown> {
    return {
      inputs: this.inputs, goal: this.inputs.goal, sop: { name: this.options.sop.name, description: this.options.sop.description ?? '' },
      memory: this.actions?.memorySnapshot() ?? {}, // actions: {{memory.NAME}}, read afresh for every prompt
      // scientist: {{task_board}}, {{world_model}} and {{mood}} for SOPs with memory_types or mood
      ...(this.actions && (this.options.sop.memory_types || this.options.sop.mood)
        ? scientistContext(this.options.sop, this.actions.memory, { seed: this.seed, turn: this.position.turn, inputs: this.inputs }) : {}),
    };
  }

  // scientist: the embedder executors search with (the run's, else one made from environment.embedder)
  private embedderPromise?: Promise<Embedder>;
  private runEmbedder(): Promise<Embedder> {
    return (this.embedderPromise ??= this.options.embedder ? Promise.resolve(this.options.embedder) : createEmbedder(this.options.sop.environment?.embedder));
  }

  async run(): Promise<RunResult> {
    const sop = this.options.sop;
    if (this.options.resume) {
      await this.restore(this.options.resume); // durability: continue from a checkpoint
    } else {
      this.emit({
        type: 'run_started', run_id: this.runId, sop: sop.name, file: this.options.file, root: sop.root,
        seed: this.seed, inputs: this.inputs, llm: this.options.llm.id, time: new Date().toISOString(),
        document: sop, launch: this.options.launch,
        settings: { max_turns: this.maxTurns, model: this.options.model, compat: this.options.compat, name_stripping: this.options.nameStripping, stream: this.options.stream },
      });
      this.checkpoint();
    }
    let status: RunStatus = 'finished';
    let error: Error | undefined;
    let finalState: string | undefined;
    try {
      for (;;) {
        if (this.options.signal?.aborted || this.stopRequested) { status = 'interrupted'; break; }
        if (this.position.turn >= this.maxTurns) { status = 'max_turns'; break; }
        const step = await this.next();
        if ('finished' in step) { finalState = step.finished; break; }
        await this.takeTurn(step);
        this.samplePromptTokens();
        this.checkpoint();
        // durability: let signal handlers (Ctrl-C) and timers run at each turn boundary, even
        // when no LLM call waited on I/O (cassettes, mock).
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    } catch (err) {
      error = err instanceof Error ? err : new Error(String(err));
      status = this.options.signal?.aborted || isResumableError(err) ? 'interrupted' : 'failed';
    }
    this.emit({
      type: 'run_finished', status, turns: this.position.turn, final_state: finalState,
      error: error?.message, usage: this.usage, time: new Date().toISOString(),
      ...(this.actions.result !== undefined ? { result: this.actions.result } : {}),
    });
    return {
      status, turns: this.position.turn, finalState, error, usage: this.usage, messages: this.env.messages,
      result: this.actions.result, summary: this.actions.summary,
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
  private async next(): Promise<Step | { finished: string }> {
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
    const { target, reason } = await this.transit(current, rt);
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
    // (agents-v1 keeps it: Agents 1.0 had one summary for the whole run, read by every judge.)
    if (this.env.visibility === 'competitive' && !this.v1) this.env.summary = '';
    const role = state.beginRole!;
    const agent = state.roleToAgent[role]!;
    this.emit({ type: 'speaker_chosen', state: state.name, agent, role, turn: this.position.turn + 1, how: 'begin' });
    return { state, role, agent, begin: true };
  }

  private async transit(state: ResolvedState, rt: StateRuntime): Promise<{ target: string; reason: 'judge' | 'max_turns' | 'direct' | 'finish' }> {
    const commanded = this.actions.transit(state, rt); // actions: command states move on by finish or max_turns
    if (commanded) return commanded;
    const decision = transitDecision(state.nextStates, rt.chatNums, state.maxTurns);
    if (decision.kind !== 'ask_judge') {
      return { target: state.nextStates[decision.key]!, reason: decision.kind === 'max_turns' ? 'max_turns' : 'direct' };
    }
    const judge = state.def.controller?.judge ?? {};
    const extractWord = judge.extract_word ?? 'end';
    const { history, relevant } = await this.controllerHistory(state);
    const last = this.env.messages[this.env.messages.length - 1];
    const keys = Object.keys(state.nextStates).sort();
    if (!keys.includes('0')) keys.unshift('0');
    const ctx = {
      ...this.baseContext(),
      state: { name: state.name },
      environment_prompt: this.envPrompt(state),
      judge,
      extract_word: extractWord,
      keys: keys.map((key) => ({ key, target: state.nextStates[key] ?? state.name })),
      summary: this.env.summary,
      history: history.map((m) => renderMessage(m)),
      last_message: last ? renderMessage(last) : undefined,
      relevant: relevant.map((m) => renderMessage(m)),
    };
    const messages: ChatMessage[] = [
      { role: 'system', content: this.templates.render('judge_system', ctx) },
      { role: 'user', content: this.templates.render('judge_user', ctx) },
    ];
    const reply = await this.call(messages, controllerLlm(this.resolved, state), {
      purpose: 'judge', state: state.name, turn: this.position.turn, turnInState: rt.chatNums, judgeKeys: keys, extractWord,
    });
    const key = parseJudgeReply(reply, extractWord);
    const { target, known } = targetOf(state.nextStates, key, state.name);
    if (!known) this.emit({ type: 'warning', message: `judge of state "${state.name}" answered key "${key}", which has no transition; staying` });
    this.emit({ type: 'judge', state: state.name, turn: this.position.turn, key, target, fallback: !known });
    return { target, reason: 'judge' };
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
      rng: this.rng, compat: this.options.compat, turn: this.position.turn,
      history: (state) => this.controllerHistory(state),
      last: () => this.env.messages[this.env.messages.length - 1],
      promptContext: (state) => ({ ...this.baseContext(), state: { name: state.name }, environment_prompt: this.envPrompt(state) }),
      render: (name, ctx) => this.templates.render(name, ctx),
      llm: (state) => controllerLlm(this.resolved, state),
      call: (messages, settings, meta) => this.call(messages, settings, meta),
    };
  }

  /**
   * What the judge and the speaker choice see: the state's messages, at most the last
   * max_chat_history of them, and the earlier visible messages most similar to the last one.
   */
  private async controllerHistory(state: ResolvedState): Promise<{ history: Message[]; relevant: Message[] }> {
    const n = this.env.messages.length;
    const start = Math.max(this.env.stateStart, n - state.maxChatHistory);
    const history = this.env.messages.slice(start);
    const relevant = await this.env.retrieve({ topK: this.topK(), minSimilarity: this.options.sop.environment?.min_similarity, before: start });
    return { history, relevant };
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
    if (this.v1 && !agentDef.human) await this.v1.observe(state, role, agent); // agents-v1: observation, begin turns included
    if (agentDef.human) {
      const last = this.env.messages[this.env.messages.length - 1];
      // durability: an answer already in the journal is not asked again.
      const answer = await this.effects.perform({ kind: 'human', label: `${agent}@${state.name}`, marksStart: true }, () => this.human.ask({
        agent, role, state: state.name, kind: 'turn',
        prompt: last ? `${last.sender} (${last.role}): ${last.content}` : '',
      }));
      if (answer.reused) this.human.skip?.(1);
      content = answer.value;
      kind = 'human';
    } else if (begin && state.beginRoleExplicit && state.def.begin_query !== undefined) {
      content = renderText(state.def.begin_query, this.baseContext(), `/states/${state.name}/begin_query`);
      kind = 'begin';
    } else if (begin && state.beginRoleExplicit && this.options.compat === 'agents-v1') {
      content = ' ';
      kind = 'begin';
    } else if (this.actions.declares(state)) {
      // actions: the reply must be a command; its executor runs once the command is recorded
      const command = await this.actions.commandTurn(state, role, agent, pos.turn, (extra) => this.act(state, role, agent, extra));
      content = command.content;
      execute = command.execute;
    } else {
      content = this.v1 ? await this.v1.act(state, role, agent) : await this.act(state, role, agent);
    }
    const message: Message = {
      id: this.env.messages.length, turn: pos.turn, state: state.name, sender: agent, role, content, kind,
      timestamp: new Date().toISOString(),
    };
    await this.env.add(message);
    this.v1?.recorded(message); // agents-v1: the sender's private memory
    this.emit({ type: 'message', message });
    await execute?.();
    await this.maybeSummarize(state);
  }

  /** Build the agent's prompt, call its LLM and turn the reply into the recorded text. */
  private async act(state: ResolvedState, role: string, agent: string, extra: ChatMessage[] = []): Promise<string> {
    const sop = this.options.sop;
    const agentDef = sop.agents[agent]!;
    const where = `/states/${state.name}/components/${role}`;
    const base = this.baseContext();
    const comps = roleComponents(componentsOf(state, role), agentDef.style, base, where);
    const parts: ComponentPart[] = comps.system.some((p) => p.kind === 'style')
      ? comps.system
      : [{ kind: 'style', role, style: agentDef.style }, ...comps.system];
    // actions: memory_window keeps only the last N messages of the state's visit
    const memoryWindow = state.def.memory_window;
    const view = limitToVisit(await this.env.view({ agent, window: memoryWindow ?? state.maxChatHistory, topK: this.topK(), minSimilarity: sop.environment?.min_similarity }), memoryWindow, this.env.stateStart);
    const ctx = {
      ...base,
      state: { name: state.name },
      environment_prompt: this.envPrompt(state),
      agent: { name: agent, role, style: agentDef.style ?? '' },
      components: [...parts, ...this.actions.promptParts(state, base)], // actions: the command list
      commands: this.actions.commandList(state),
      last_parts: comps.last,
      output: comps.output,
    };
    // prompt = system (environment prompt + components) + summary + relevant history + window + last prompt
    const system: ChatMessage = { role: 'system', content: this.templates.render('agent_system', ctx) };
    const lastPrompt: ChatMessage = { role: 'user', content: this.templates.render('agent_last', ctx) };
    const build = (plan: PromptPlan<Message>): ChatMessage[] => {
      const messages: ChatMessage[] = [system];
      const context = this.templates.render('agent_context', { ...ctx, summary: plan.summary, relevant: plan.relevant.map((m) => renderMessage(m, agent)) });
      if (context) messages.push({ role: 'user', content: context });
      for (const m of plan.window) {
        messages.push(m.sender === agent
          ? { role: 'assistant', content: m.content }
          : { role: 'user', content: `${m.sender} (${m.role}): ${m.content}` });
      }
      messages.push(lastPrompt, ...extra); // actions: rejected replies and the problems found
      return messages;
    };
    const plan: PromptPlan<Message> = {
      summary: state.summary.enabled ? view.summary : '',
      relevant: view.relevant,
      window: view.window,
    };
    let messages = build(plan);
    const budget = sop.environment?.max_prompt_tokens;
    if (budget !== undefined) {
      // Token budget: drop the oldest parts first; never the system prompt or the last prompt.
      const trimmed = trimToBudget(plan, budget, (p) => estimateUsage(build(p), '').promptTokens);
      messages = build(trimmed.plan);
      if (!trimmed.fits && !this.budgetWarned) {
        this.budgetWarned = true;
        this.emit({ type: 'warning', message: `the prompt of ${agent} in state "${state.name}" needs ${trimmed.tokens} tokens even without history, over environment.max_prompt_tokens ${budget}` });
      }
    }
    // scientist: while a task is in progress, its resource level's LLM profile applies
    const profile = this.options.sop.resources ? taskLlmProfile(this.options.sop, this.actions.memory, this.inputs) : undefined;
    const reply = await this.call(messages, { ...agentLlm(this.resolved, state, agent, role), ...profile }, {
      purpose: 'agent', state: state.name, agent, role, turn: this.position.turn, turnInState: this.position.states[state.name]!.chatNums,
      ...this.actions.callMeta(state, agentLlm(this.resolved, state, agent, role)),
    }, this.options.stream !== false);
    let text = stripSpeakerName(reply, agent, this.options.nameStripping ?? 'leading');
    if (comps.output) text = extractTag(text, comps.output) ?? text;
    return text;
  }

  /**
   * Refresh the summary every `summary.every` messages (counted over the whole run), from the
   * previous summary, the messages since then and the earlier messages most similar to the last
   * one, all under the visibility rule. The call is issued as soon as the message is recorded and
   * shown, and awaited before the turn ends: the turn's checkpoint includes the summary, and the
   * next turn's judge and agent prompts need it.
   */
  private async maybeSummarize(state: ResolvedState): Promise<void> {
    const s = state.summary;
    const count = this.env.messages.length;
    if (!s.enabled || count % s.every !== 0) return;
    const visibleStart = this.env.visibility === 'competitive' ? this.env.stateStart : 0;
    const from = Math.max(visibleStart, count - s.every);
    const recent = this.env.messages.slice(from);
    const relevant = await this.env.retrieve({ topK: this.topK(), minSimilarity: this.options.sop.environment?.min_similarity, before: from });
    const ctx = {
      ...this.baseContext(),
      state: { name: state.name },
      environment_prompt: this.envPrompt(state),
      summary: s,
      previous: this.env.summary,
      history: recent.map((m) => renderMessage(m)),
      relevant: relevant.map((m) => renderMessage(m)),
    };
    const messages: ChatMessage[] = [
      { role: 'system', content: this.templates.render('summary_system', ctx) },
      { role: 'user', content: this.templates.render('summary_user', ctx) },
    ];
    const reply = await this.call(messages, summaryLlm(this.resolved, state), { purpose: 'summary', state: state.name, turn: this.position.turn });
    this.env.summary = reply.trim();
    this.emit({ type: 'summary', state: state.name, turn: this.position.turn, after_messages: count, summary: this.env.summary });
  }

  private async call(messages: ChatMessage[], settings: LlmSettings, meta: CallMeta, stream = false): Promise<string> {
    const model = this.options.model ?? settings.model ?? DEFAULTS.model;
    const started = performance.now();
    const llm = this.options.llm;
    const onDelta = stream && meta.agent ? (text: string) => this.emit({ type: 'delta', agent: meta.agent!, text }) : undefined;
    // durability: a reply already in the journal (an interrupted turn being redone) is reused.
    const { value: res, key, reused } = await this.effects.perform<LlmEffectResult>(
      { kind: 'llm', label: llmEffectLabel(meta.purpose, meta.state, meta.agent), journalsResult: false },
      () => llm.chat(
        { messages, model, temperature: settings.temperature ?? DEFAULTS.temperature, maxTokens: settings.max_tokens, stream, meta },
        { signal: this.options.signal, onDelta },
      ),
    );
    if (reused) {
      if (llm.position !== undefined) llm.seek?.(llm.position + 1);
      onDelta?.(res.content);
    }
    addUsage(this.usage, meta.purpose, res.usage);
    if (meta.purpose === 'agent') this.usage.agent_prompt_tokens_last = res.usage.promptTokens; // memory: sampled below
    let promptChars = 0;
    for (const m of messages) promptChars += m.content.length;
    this.emit({
      type: 'llm_call', purpose: meta.purpose, state: meta.state, agent: meta.agent, turn: meta.turn, model,
      usage: res.usage, ms: Math.round(performance.now() - started), prompt_chars: promptChars, reply: res.content, effect: key,
    });
    return res.content;
  }
}

/** Inputs with defaults applied; a required input without a value is an error. */
export function resolveInputs(sop: Sop, given: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, def] of Object.entries(sop.inputs ?? {})) {
    const value = Object.prototype.hasOwnProperty.call(given, name) ? given[name] : def.default;
    if (value === undefined) {
      if (def.required) throw new Error(`input "${name}" is required${def.description ? ` (${def.description})` : ''}; pass --input ${name}=VALUE${name === 'goal' ? ' or --goal TEXT' : ''}`);
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
