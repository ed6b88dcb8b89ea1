// The run loop: pick the state and speaker, let the agent speak, record the message, repeat.
// Semantics follow Agents 1.0 (see shared/reference/agents-v1-semantics.md §3), with the clean
// behaviours of its §6 unless `compat` asks for the original quirks.
import { roleComponents, type ComponentPart } from '../agent/components.js';
import { extractTag, stripSpeakerName, type NameStripping } from '../agent/output.js';
import { ListEnvironment, type EnvironmentMemory } from '../environment/environment.js';
import { renderMessage, type Message, type MessageKind } from '../environment/message.js';
import type { HumanInput } from '../io/human.js';
import { NoHumanInput } from '../io/human.js';
import type { CallMeta, ChatMessage, LlmProvider } from '../llm/types.js';
import { renderText, TemplateSet } from '../prompt/templates.js';
import {
  DEFAULTS, agentLlm, componentsOf, controllerLlm, resolveSop, summaryLlm,
  type ResolvedSop, type ResolvedState,
} from '../sop/resolved.js';
import type { LlmSettings, Sop } from '../sop/types.js';
import {
  freshStateRuntime, nextInOrder, parseJudgeReply, parseSpeakerReply, targetOf, transitDecision,
  type StateRuntime,
} from './controller.js';
import { addUsage, emptyUsage, type RunEvent, type RunListener, type UsageTotals } from './events.js';
import { Rng } from './rng.js';

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
  listeners?: RunListener[];
  signal?: AbortSignal;
  /** Reproduce Agents 1.0 quirks (re-entry without begin turn, " " begin message). */
  compat?: 'agents-v1';
  nameStripping?: NameStripping;
  /** Stream agent replies (deltas are emitted as events). */
  stream?: boolean;
}

export type RunStatus = 'finished' | 'max_turns' | 'failed' | 'interrupted';

export interface RunResult {
  status: RunStatus;
  turns: number;
  finalState?: string;
  error?: Error;
  usage: UsageTotals;
  messages: readonly Message[];
}

/** The serializable position of a run (what a journal must restore). */
export interface RunPosition {
  current: string;
  turn: number;
  states: Record<string, StateRuntime>;
  rng: number;
  started: boolean;
}

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

  constructor(private readonly options: RunOptions) {
    this.resolved = resolveSop(options.sop);
    const sop = options.sop;
    this.env = options.environment ?? new ListEnvironment(sop.environment?.type ?? 'cooperative');
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
  }

  private emit(event: RunEvent): void {
    for (const l of this.listeners) l(event);
  }

  /** Template context shared by every prompt: inputs, goal, SOP facts. */
  private baseContext(): Record<string, unknown> {
    return { inputs: this.inputs, goal: this.inputs.goal, sop: { name: this.options.sop.name, description: this.options.sop.description ?? '' } };
  }

  async run(): Promise<RunResult> {
    const sop = this.options.sop;
    this.emit({
      type: 'run_started', run_id: this.runId, sop: sop.name, file: this.options.file, root: sop.root,
      seed: this.seed, inputs: this.inputs, llm: this.options.llm.id, time: new Date().toISOString(),
    });
    let status: RunStatus = 'finished';
    let error: Error | undefined;
    let finalState: string | undefined;
    try {
      for (;;) {
        if (this.options.signal?.aborted) { status = 'interrupted'; break; }
        if (this.position.turn >= this.maxTurns) { status = 'max_turns'; break; }
        const step = await this.next();
        if ('finished' in step) { finalState = step.finished; break; }
        await this.takeTurn(step);
      }
    } catch (err) {
      error = err instanceof Error ? err : new Error(String(err));
      status = this.options.signal?.aborted ? 'interrupted' : 'failed';
    }
    this.emit({
      type: 'run_finished', status, turns: this.position.turn, final_state: finalState,
      error: error?.message, usage: this.usage, time: new Date().toISOString(),
    });
    return { status, turns: this.position.turn, finalState, error, usage: this.usage, messages: this.env.messages };
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
        pos.states[to.name] = freshStateRuntime(to.roles, to.beginRole);
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
    const role = state.beginRole!;
    const agent = state.roleToAgent[role]!;
    this.emit({ type: 'speaker_chosen', state: state.name, agent, role, turn: this.position.turn + 1, how: 'begin' });
    return { state, role, agent, begin: true };
  }

  private async transit(state: ResolvedState, rt: StateRuntime): Promise<{ target: string; reason: 'judge' | 'max_turns' | 'direct' }> {
    const decision = transitDecision(state.nextStates, rt.chatNums, state.maxTurns);
    if (decision.kind !== 'ask_judge') {
      return { target: state.nextStates[decision.key]!, reason: decision.kind === 'max_turns' ? 'max_turns' : 'direct' };
    }
    const judge = state.def.controller?.judge ?? {};
    const extractWord = judge.extract_word ?? 'end';
    const visible = this.env.messages.slice(this.env.stateStart);
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
      history: visible.map((m) => renderMessage(m)),
      last_message: last ? renderMessage(last) : undefined,
      relevant: [],
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

  /** Choose the next speaker within the state (SOP.route of the reference). */
  private async route(state: ResolvedState): Promise<Step> {
    const rt = this.position.states[state.name]!;
    const roles = state.roles;
    let role: string;
    let how: 'order' | 'random' | 'rule' | 'rule_fallback' | 'single';
    if (roles.length === 1) {
      role = roles[0]!;
      how = 'single';
    } else if (state.controllerType === 'random') {
      role = this.rng.pick(roles);
      how = 'random';
    } else if (state.controllerType === 'rule') {
      const picked = await this.askSpeaker(state, rt);
      role = picked.role;
      how = picked.fallback ? 'rule_fallback' : 'rule';
      if (picked.fallback) this.emit({ type: 'warning', message: `speaker choice in state "${state.name}" named no known role; picked ${role} at random` });
    } else {
      role = nextInOrder(rt, roles);
      how = 'order';
    }
    rt.currentRole = role;
    this.position.rng = this.rng.state;
    const agent = state.roleToAgent[role]!;
    this.emit({ type: 'speaker_chosen', state: state.name, agent, role, turn: this.position.turn + 1, how });
    return { state, role, agent, begin: false };
  }

  private async askSpeaker(state: ResolvedState, rt: StateRuntime) {
    const speaker = state.def.controller?.speaker ?? {};
    const extractWord = speaker.extract_word ?? 'end';
    const visible = this.env.messages.slice(this.env.stateStart);
    const last = this.env.messages[this.env.messages.length - 1];
    const ctx = {
      ...this.baseContext(),
      state: { name: state.name },
      environment_prompt: this.envPrompt(state),
      speaker,
      extract_word: extractWord,
      roles: state.roles.map((role) => ({ role, agent: state.roleToAgent[role] })),
      history: visible.map((m) => renderMessage(m)),
      last_message: last ? renderMessage(last) : undefined,
      relevant: [],
    };
    const messages: ChatMessage[] = [
      { role: 'system', content: this.templates.render('speaker_system', ctx) },
      { role: 'user', content: this.templates.render('speaker_user', ctx) },
    ];
    const reply = await this.call(messages, controllerLlm(this.resolved, state), {
      purpose: 'speaker', state: state.name, turn: this.position.turn, turnInState: rt.chatNums, candidates: state.roles, extractWord,
    });
    return parseSpeakerReply(reply, extractWord, state.roles, this.rng);
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
    if (agentDef.human) {
      const last = this.env.messages[this.env.messages.length - 1];
      content = await this.human.ask({
        agent, role, state: state.name, kind: 'turn',
        prompt: last ? `${last.sender} (${last.role}): ${last.content}` : '',
      });
      kind = 'human';
    } else if (begin && state.beginRoleExplicit && state.def.begin_query !== undefined) {
      content = renderText(state.def.begin_query, this.baseContext(), `/states/${state.name}/begin_query`);
      kind = 'begin';
    } else if (begin && state.beginRoleExplicit && this.options.compat === 'agents-v1') {
      content = ' ';
      kind = 'begin';
    } else {
      content = await this.act(state, role, agent);
    }
    const message: Message = {
      id: this.env.messages.length, turn: pos.turn, state: state.name, sender: agent, role, content, kind,
      timestamp: new Date().toISOString(),
    };
    await this.env.add(message);
    this.emit({ type: 'message', message });
    await this.maybeSummarize(state);
  }

  /** Build the agent's prompt, call its LLM and turn the reply into the recorded text. */
  private async act(state: ResolvedState, role: string, agent: string): Promise<string> {
    const sop = this.options.sop;
    const agentDef = sop.agents[agent]!;
    const where = `/states/${state.name}/components/${role}`;
    const base = this.baseContext();
    const comps = roleComponents(componentsOf(state, role), agentDef.style, base, where);
    const parts: ComponentPart[] = comps.system.some((p) => p.kind === 'style')
      ? comps.system
      : [{ kind: 'style', role, style: agentDef.style }, ...comps.system];
    const topK = sop.environment?.top_k ?? DEFAULTS.topK;
    const view = await this.env.view({ agent, window: state.maxChatHistory, topK, minSimilarity: sop.environment?.min_similarity });
    const ctx = {
      ...base,
      state: { name: state.name },
      environment_prompt: this.envPrompt(state),
      agent: { name: agent, role, style: agentDef.style ?? '' },
      components: parts,
      last_parts: comps.last,
      output: comps.output,
      summary: sop.environment?.summary?.enabled === false ? '' : view.summary,
      relevant: view.relevant.map((m) => renderMessage(m, agent)),
    };
    const messages: ChatMessage[] = [{ role: 'system', content: this.templates.render('agent_system', ctx) }];
    const context = this.templates.render('agent_context', ctx);
    if (context) messages.push({ role: 'user', content: context });
    for (const m of view.window) {
      messages.push(m.sender === agent
        ? { role: 'assistant', content: m.content }
        : { role: 'user', content: `${m.sender} (${m.role}): ${m.content}` });
    }
    messages.push({ role: 'user', content: this.templates.render('agent_last', ctx) });
    const reply = await this.call(messages, agentLlm(this.resolved, state, agent, role), {
      purpose: 'agent', state: state.name, agent, role, turn: this.position.turn, turnInState: this.position.states[state.name]!.chatNums,
    }, this.options.stream !== false);
    let text = stripSpeakerName(reply, agent, this.options.nameStripping ?? 'leading');
    if (comps.output) text = extractTag(text, comps.output) ?? text;
    return text;
  }

  /** Refresh the summary every `summary.every` messages (counted over the whole run). */
  private async maybeSummarize(state: ResolvedState): Promise<void> {
    const s = state.summary;
    const count = this.env.messages.length;
    if (!s.enabled || count % s.every !== 0) return;
    const recent = this.env.messages.slice(Math.max(0, count - s.every));
    const ctx = {
      ...this.baseContext(),
      state: { name: state.name },
      environment_prompt: this.envPrompt(state),
      summary: s,
      previous: this.env.summary,
      history: recent.map((m) => renderMessage(m)),
      relevant: [],
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
    const res = await this.options.llm.chat(
      { messages, model, temperature: settings.temperature ?? DEFAULTS.temperature, maxTokens: settings.max_tokens, stream, meta },
      { signal: this.options.signal, onDelta: stream && meta.agent ? (text) => this.emit({ type: 'delta', agent: meta.agent!, text }) : undefined },
    );
    addUsage(this.usage, meta.purpose, res.usage);
    let promptChars = 0;
    for (const m of messages) promptChars += m.content.length;
    this.emit({
      type: 'llm_call', purpose: meta.purpose, state: meta.state, agent: meta.agent, turn: meta.turn, model,
      usage: res.usage, ms: Math.round(performance.now() - started), prompt_chars: promptChars, reply: res.content,
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
