// The one agent prompt pipeline: a role's components (every kind, through the registry of
// src/core/components) -> the agent's view of memory -> system prompt, history and last prompt ->
// the LLM -> the reply as recorded. Agents 1.0 semantics (SOPs imported with `agents_v1`) are an
// option of it, `privateMemory`: the agent's history is its private memory of observations, the
// last prompt is joined to its final entry, and the run's summary is not shown (the judge reads it).
import { assembleComponents, type AssembledComponents, type SystemPart } from '../components/index.js';
import type { EnvironmentMemory, EnvironmentView } from '../environment/environment.js';
import { renderMessage, type Message } from '../environment/message.js';
import { estimateUsage, type CallMeta, type ChatMessage } from '../llm/types.js';
import { trimToBudget, type PromptPlan } from '../memory/token-budget.js';
import { alignedWindow, viewerAlignedWindow } from '../memory/window.js';
import type { TemplateSet } from '../prompt/templates.js';
import { agentLlm, type ResolvedSop, type ResolvedState } from '../../format/sop/resolved.js';
import type { LlmSettings, Sop } from '../../format/sop/types.js';
import type { ComponentServices } from './component-services.js';
import { keepAddressTags } from './address-tags.js';
import { windowAsChat } from './window-chat.js';
import { messageLine } from './message-line.js';
import { stripSpeakerName, type NameStripping } from './output.js';
import { extractTag } from '../../shared/util/tags.js';

/** What features add to an agent's prompt and call (a run's plugins, composed: src/core/runtime/hooks.ts). */
export interface PromptHooks {
  /** What the agent sees of the shared memory. */
  view(view: EnvironmentView, state: ResolvedState, stateStart: number): EnvironmentView;
  /** Parts added to the system prompt, and values added to the template context. */
  agentPrompt(state: ResolvedState, context: Record<string, unknown>): { parts: SystemPart[]; context: Record<string, unknown> };
  /** The settings and call facts of the agent's call. */
  agentCall(state: ResolvedState, agent: string, role: string, settings: LlmSettings): { settings: LlmSettings; meta: Partial<CallMeta> };
}

/** What the pipeline needs from its run. */
export interface PipelineHost {
  sop: Sop;
  resolved: ResolvedSop;
  templates: TemplateSet;
  env: EnvironmentMemory;
  /** Components' shared memory, knowledge bases, workspace and tool slots. */
  components: ComponentServices;
  /** What features add (composed from the run's plugins). */
  prompt: PromptHooks;
  nameStripping: NameStripping;
  stream: boolean;
  baseContext(): Record<string, unknown>;
  envPrompt(state: ResolvedState): string;
  topK(): number;
  turn(): number;
  turnInState(state: string): number;
  /** The run's semantics flags: with `summaryChunks` the window moves only at summary refreshes (src/core/memory/window.ts). */
  readonly semantics: { readonly summaryChunks: boolean };
  /** One LLM call of the run; `key` names it within its step when calls are made at once (a population step). */
  call(messages: ChatMessage[], settings: LlmSettings, meta: CallMeta, stream?: boolean, key?: string): Promise<string>;
  /** Warn once that the prompt cannot fit environment.max_prompt_tokens. */
  overBudget(agent: string, state: ResolvedState, tokens: number, budget: number): void;
}

/** Agents 1.0 semantics: private memories (src/features/agents-v1/compat/agents-v1), its own templates and name stripping. */
export interface PrivateMemoryOption {
  /** The system message and the private history, `last` appended to its final entry. */
  history(agent: string, state: ResolvedState, system: string, last: string): ChatMessage[];
  /** What the agent observed last (the knowledge and tool components' query). */
  observed(agent: string): string;
  components: ComponentServices;
  render: { system(context: object): string; last(context: object): string };
  nameStripping: NameStripping;
}

export interface AgentTurnRequest {
  state: ResolvedState;
  role: string;
  agent: string;
  /** Messages appended after the last prompt (e.g. a rejected command and the problem found). */
  extra?: ChatMessage[];
  privateMemory?: PrivateMemoryOption;
}

/** The agent's reply to its turn, as it is recorded. */
export async function agentTurn(h: PipelineHost, r: AgentTurnRequest): Promise<string> {
  const { state, role, agent, extra = [], privateMemory: pm } = r;
  const agentDef = h.sop.agents[agent]!;
  const where = `/states/${state.name}/components/${role}`;
  const base = h.baseContext();
  const settings = agentLlm(h.resolved, state, agent, role);
  /** What a call of this turn is (its turn read when the call is made). */
  const callMeta = (purpose: 'agent' | 'tool'): CallMeta => ({
    purpose,
    state: state.name,
    agent,
    role,
    turn: h.turn(),
    turnInState: h.turnInState(state.name),
  });
  const toolMeta = (what: string): CallMeta => ({ ...callMeta('tool'), extractWord: what });

  // 1. Components, in SOP order; work before the answer (extract, code, knowledge, tools) runs now.
  let shared: ((system: string, last: string) => Promise<ChatMessage[]>) | undefined;
  const services = pm?.components ?? h.components;
  const rt = services.runtime({
    agent: { name: agent, role, style: agentDef.style },
    state: state.name,
    where,
    context: base,
    callWithHistory: (system, last, what) =>
      pm
        ? h.call(pm.history(agent, state, system, last), settings, toolMeta(what), false)
        : (shared ??= sharedHistory(h, state, agent, role))(system, last).then((m) => h.call(m, settings, toolMeta(what), false)),
    observed: () =>
      pm ? pm.observed(agent) : observedSince(h.env.audiences?.active ? h.env.seenBy(agent) : h.env.messages, agent, state.maxChatHistory),
  });
  const assembled = await assembleComponents(state.def.components?.[role], rt);

  if (pm) {
    // Agents 1.0: its templates, the private history with the last prompt joined, no summary.
    const ctx = { ...base, agent: { name: agent, role, style: agentDef.style ?? '' }, environment_prompt: h.envPrompt(state) };
    const system = pm.render.system({ ...ctx, parts: assembled.system });
    const last = pm.render.last({ ...ctx, parts: assembled.last });
    const reply = await h.call(pm.history(agent, state, system, last), settings, callMeta('agent'), h.stream);
    return stripSpeakerName(reply, agent, pm.nameStripping);
  }

  // 2. The agent's view of the shared memory.
  const sop = h.sop;
  const comps = nativeParts(assembled);
  const parts: SystemPart[] = comps.system.some((p) => p.kind === 'style')
    ? comps.system
    : [{ kind: 'style', role, style: agentDef.style }, ...comps.system];
  const memoryWindow = state.def.memory_window;
  const view = h.prompt.view(
    await h.env.view({
      agent,
      window: memoryWindow ?? recentWindow(h, state, agent),
      topK: h.topK(),
      minSimilarity: sop.environment?.min_similarity,
    }),
    state,
    h.env.stateStart,
  ); // e.g. memory_window
  const { parts: extraParts, context: extraContext } = h.prompt.agentPrompt(state, base); // e.g. the command list
  const ctx = {
    ...base,
    state: { name: state.name },
    environment_prompt: h.envPrompt(state),
    agent: { name: agent, role, style: agentDef.style ?? '' },
    components: [...parts, ...extraParts],
    ...extraContext,
    last_parts: comps.last,
    output: comps.output,
  };
  // 3. prompt = system (environment prompt + components) + summary + window + relevant history + last prompt:
  // stable parts first, volatile ones last, so consecutive prompts share a long prefix (docs/memory.md).
  // agent_context is rendered twice: with the summary alone, then with the retrieved messages alone.
  const { settings: callSettings, meta: metaExtra } = h.prompt.agentCall(state, agent, role, settings); // e.g. commands as tools, a task's LLM profile
  // Commands offered as function tools: the prompt a provider sends with them has no text list of
  // the commands, and the earlier commands and results as tool calls and tool messages.
  const tools = (metaExtra.tools?.length ?? 0) > 0;
  const system: ChatMessage = { role: 'system', content: h.templates.render('agent_system', ctx) };
  const lastPrompt: ChatMessage = { role: 'user', content: h.templates.render('agent_last', ctx) };
  if (tools) {
    const nativeCtx = { ...ctx, components: ctx.components.filter((p) => !p.toolList), native_tools: true };
    system.native = { role: 'system', content: h.templates.render('agent_system', nativeCtx) };
    lastPrompt.native = { role: 'user', content: h.templates.render('agent_last', nativeCtx) };
  }
  const line = messageLine(h.templates, agent, role, state.name);
  let cacheBreaks: number[] = [];
  const build = (plan: PromptPlan<Message>): ChatMessage[] => {
    const messages: ChatMessage[] = [system];
    const context = (summary: string, relevant: Message[]) =>
      h.templates.render('agent_context', { ...ctx, summary, relevant: relevant.map((m) => renderMessage(m, agent)) });
    // (with neither, once, as a custom template may still say something)
    const summary = plan.summary || plan.relevant.length === 0 ? context(plan.summary, []) : '';
    if (summary) messages.push({ role: 'user', content: summary });
    const summaryAt = messages.length - 1;
    messages.push(...windowAsChat(plan.window, agent, line, tools));
    // where the stable parts end: the system message, the summary, the window (cache breakpoints)
    cacheBreaks = [...new Set([0, summaryAt, messages.length - 1])];
    const relevant = plan.relevant.length > 0 ? context('', plan.relevant) : '';
    if (relevant) messages.push({ role: 'user', content: relevant });
    messages.push(lastPrompt, ...extra); // e.g. rejected commands and the problems found
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
    if (!trimmed.fits) h.overBudget(agent, state, trimmed.tokens, budget);
  }
  // 4. The LLM, then the reply as recorded.
  const reply = await h.call(messages, callSettings, { ...callMeta('agent'), cacheBreaks, ...metaExtra }, h.stream);
  let text = stripSpeakerName(reply, agent, h.nameStripping);
  if (comps.output) text = keepAddressTags(text, extractTag(text, comps.output) ?? text, state.def.audience?.[role], comps.output);
  return text;
}

/** Components as the native templates take them: system parts, last-prompt texts, the output tag. */
function nativeParts(a: AssembledComponents): { system: SystemPart[]; last: string[]; output?: string } {
  const last: string[] = [];
  let output: string | undefined;
  for (const p of a.last) {
    if (p.kind === 'output') output = p.tag;
    else if (p.text !== undefined) last.push(p.text);
  }
  return { system: a.system, last, output };
}

/** A component's extra call in a native SOP: its system prompt, the agent's window, its last prompt. */
function sharedHistory(h: PipelineHost, state: ResolvedState, agent: string, role: string) {
  return async (system: string, last: string): Promise<ChatMessage[]> => {
    const view = await h.env.view({ agent, window: state.def.memory_window ?? recentWindow(h, state, agent), topK: 0 });
    const out: ChatMessage[] = system !== '' ? [{ role: 'system', content: system }] : [];
    out.push(...windowAsChat(view.window, agent, messageLine(h.templates, agent, role, state.name), false));
    out.push({ role: 'user', content: last });
    return out;
  };
}

/** The recent window's size now: max_chat_history, grown since the last summary refresh (src/core/memory/window.ts); per agent under audiences. */
export function recentWindow(h: PipelineHost, state: ResolvedState, agent: string): number {
  if (h.env.audiences?.active)
    return viewerAlignedWindow(
      state.maxChatHistory,
      h.env.seenBy(agent),
      h.env.messages.length,
      state.summary.every,
      h.semantics.summaryChunks,
    );
  return alignedWindow(state.maxChatHistory, h.env.messages.length, state.summary.every, h.semantics.summaryChunks);
}

/** What an agent has not answered yet: the messages since its last one (at most `max`), one per line. */
function observedSince(messages: readonly Message[], agent: string, max: number): string {
  let i = messages.length;
  while (i > 0 && messages[i - 1]!.sender !== agent && messages.length - i < max) i--;
  return messages
    .slice(i)
    .map((m) => m.content)
    .join('\n');
}
