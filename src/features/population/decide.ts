// How a population agent decides at a step: its prompt (the rules and actions in the system
// message; the step's snapshot, the persona and what it sees in the user message), one LLM call whose reply is a tool call (or
// the JSON command fallback), and the reply read back as one of the world's actions. A reply that
// is not a valid action makes the agent idle this step, with the reason kept as its outcome.
import { parseCommandReply } from '../../core/llm/command-reply.js';
import type { CallMeta, ChatMessage, ToolSpec } from '../../core/llm/types.js';
import { renderText } from '../../core/prompt/templates.js';
import type { ManyCall } from '../../core/runtime/call-many.js';
import { fmix32, fnv1a } from '../../shared/util/hash.js';
import type { RunContext } from '../../core/runtime/context.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import type { LlmSettings } from '../../format/sop/types.js';
import { checkActionArgs, type AnyWorld, type Json } from './worlds/world.js';
import type { Population } from './population.js';
import { POPULATION_DEFAULTS, type CognitionEntry } from './state-spec.js';

/** An agent's choice: an action of the menu, or none (with the reason, when its reply was not valid). */
export type Choice = { name: string; args: Record<string, unknown> } | { invalid: string };

/** What an agent is shown at a step, besides its persona. */
export interface Seen {
  observation: Json;
  snapshot: string;
  memory: string;
  clock: string;
  step: number;
}

/** The parts of the run a decision uses. */
export type DecideHost = Pick<RunContext, 'call' | 'templates' | 'baseContext' | 'envPrompt' | 'sop'>;

export interface DecideSetup {
  host: DecideHost;
  state: ResolvedState;
  world: AnyWorld;
  pop: Population;
  tools: ToolSpec[];
  /** The state's `observe` template, when it has one. */
  observe?: string;
  turn: number;
}

/** The agent's attributes and id, as templates and expressions see them. */
export const agentScope = (pop: Population, i: number): Record<string, unknown> => ({ ...pop.row(i), id: pop.ids[i]! });

/**
 * The system and user messages of an agent's decision, laid out for provider prompt caches
 * (docs/population.md#prompt-layout): the rules and tools (the same for every agent of the run),
 * then the step's public snapshot (the same for every agent of the step), then the persona, then
 * the agent's own feed and memory, then the ask. A SOP whose own `population_system` names
 * `{{persona}}` keeps it there; a state's own `observe` that does not name it gets the persona
 * at the end of the system message. The clock and snapshot, the same for every agent of the step,
 * are a user message of their own before the persona's.
 */
export function decisionMessages(s: DecideSetup, i: number, seen: Seen): ChatMessage[] {
  const base = s.host.baseContext();
  const agent = agentScope(s.pop, i);
  const persona = s.pop.personaText(i);
  const ownSystem = s.host.sop.templates?.population_system;
  const personaInSystem = ownSystem !== undefined && ownSystem.includes('persona');
  const personaInObserve = !personaInSystem && (s.observe === undefined || s.observe.includes('persona'));
  let system = s.host.templates.render('population_system', {
    ...base,
    state: { name: s.state.name },
    environment_prompt: s.host.envPrompt(s.state),
    persona,
    actions: s.tools.map((t) => t.name),
    agent,
  });
  if (!personaInSystem && !personaInObserve && persona) system = `${system.replace(/\n*$/, '')}\n\n${persona}\n`;
  const context = {
    ...base,
    state: { name: s.state.name },
    observation: JSON.stringify(seen.observation),
    snapshot: seen.snapshot,
    memory: seen.memory,
    clock: seen.clock,
    step: seen.step,
    persona: personaInObserve ? persona : '',
    agent,
  };
  const user =
    s.observe !== undefined
      ? renderText(s.observe, context, `/states/${s.state.name}/observe`)
      : s.host.templates.render('population_observe', context);
  // the part every agent of the step shares (the clock and the snapshot) is a message of its own:
  // a server that takes cache breakpoints gets one after it (askForAction's cacheBreaks)
  const cut = personaInObserve && persona ? user.indexOf(persona) : -1;
  if (cut > 0)
    return [
      { role: 'system', content: system },
      { role: 'user', content: user.slice(0, cut) },
      { role: 'user', content: user.slice(cut) },
    ];
  return [
    { role: 'system', content: system },
    { role: 'user', content: user },
  ];
}

/** The LLM settings of a tier's calls: the SOP's, the state's, the tier's; short replies unless one says otherwise. */
export function decisionLlm(sop: DecideHost['sop'], state: ResolvedState, entry: CognitionEntry): LlmSettings {
  const merged = { ...sop.llm, ...state.def.llm, ...entry.llm };
  return merged.max_tokens === undefined ? { ...merged, max_tokens: POPULATION_DEFAULTS.maxTokens } : merged;
}

/** The menu as the command list providers and the mock read (name, required arguments and their types). */
export function menuCommands(tools: readonly ToolSpec[]): NonNullable<CallMeta['commands']> {
  return tools.map((t) => {
    const props = (t.parameters.properties ?? {}) as Record<string, { type?: string; enum?: string[] }>;
    const required = (t.parameters.required ?? []) as string[];
    const argTypes: Record<string, { type: string; enum?: string[] }> = {};
    for (const [k, v] of Object.entries(props)) argTypes[k] = { type: v.type ?? 'string', ...(v.enum ? { enum: v.enum } : {}) };
    return { name: t.name, executor: 'action', required, argTypes };
  });
}

/**
 * Values an agent sees that an action's arguments may name: ids of posts (`*post_id`), accounts
 * (`*agent_id`, from authors), and keys (`key`). The mock draws its arguments from them.
 */
export function argChoices(observation: Json): Record<string, Array<string | number>> {
  const posts = new Set<string>();
  const authors = new Set<string>();
  const keys = new Set<string>();
  const visit = (v: Json, depth: number): void => {
    if (depth > 6 || v === null || typeof v !== 'object') return;
    if (Array.isArray(v)) return v.forEach((x) => visit(x, depth + 1));
    if (typeof v.id === 'string') posts.add(v.id);
    if (typeof v.author === 'string') authors.add(v.author);
    if (typeof v.key === 'string') keys.add(v.key);
    for (const x of Object.values(v)) visit(x, depth + 1);
  };
  visit(observation, 0);
  const out: Record<string, Array<string | number>> = {};
  if (posts.size) out.post_id = [...posts];
  if (authors.size) out.agent_id = [...authors];
  if (keys.size) out.key = [...keys];
  return out;
}

/** Agents per prompt-cache shard of a step: about the calls a minute one OpenAI cache route takes before it spills over. */
export const CACHE_SHARD_AGENTS = 16;

/** The step and a hash of the agent, out of one shard per CACHE_SHARD_AGENTS agents (the call's prompt_cache_key). */
export function cacheShard(pop: Population, i: number, step: number): string {
  const shards = Math.max(1, Math.ceil(pop.ids.length / CACHE_SHARD_AGENTS));
  return `${step}.${fmix32(fnv1a(pop.ids[i]!)) % shards}`;
}

/** One agent's (or one archetype's) decision call; its reply is read with `parseAction`. */
export function decisionCall(s: DecideSetup, i: number, seen: Seen, settings: LlmSettings, key: string): ManyCall {
  const messages = decisionMessages(s, i, seen);
  const meta: CallMeta = {
    purpose: 'agent',
    state: s.state.name,
    agent: s.pop.ids[i]!,
    role: 'population',
    turn: s.turn,
    turnInState: seen.step,
    tools: s.tools,
    commands: menuCommands(s.tools),
    argChoices: argChoices(seen.observation),
    population: true,
    cacheShard: cacheShard(s.pop, i, seen.step),
    cacheBreaks: messages.length > 2 ? [0, 1] : [0],
  };
  return { messages, settings, meta, key };
}

/** A reply as one action of the menu, read in the JSON command format (src/core/llm/command-reply.ts) and checked against the action's schema. */
export function parseAction(reply: string, world: AnyWorld, tools: readonly ToolSpec[]): Choice {
  const parsed = parseCommandReply(reply);
  if (!parsed.ok) return { invalid: parsed.error };
  const { command: name, args } = parsed;
  if (!tools.some((t) => t.name === name))
    return { invalid: `"${name}" is not one of the actions (${tools.map((t) => t.name).join(', ')})` };
  const problem = checkActionArgs(world, { agent: '', name, args }, tools);
  return problem ? { invalid: problem } : { name, args };
}
