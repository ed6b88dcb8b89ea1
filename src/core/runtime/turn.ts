// One agent's turn within a step: act (its reply: a person's answer, a begin query, a plugin's
// reply or the agent prompt pipeline's) and apply (the message goes to the environment with its
// audience, observers are told, its effect runs, the summary is refreshed).
import { agentTurn, type PrivateMemoryOption } from '../agent/pipeline.js';
import type { Message, MessageKind } from '../environment/message.js';
import type { ChatMessage } from '../llm/types.js';
import { renderText } from '../prompt/templates.js';
import { decideAsync, observe, observeAsync } from './compose.js';
import type { RunContext } from './context.js';
import type { TurnOutput, TurnStep } from './hooks.js';
import { isSeatAgent, seatTurn } from './seat.js';
import { maybeSummarize } from './summaries.js';

/** A turn's reply and how it came. */
export interface Acted extends TurnOutput {
  kind: MessageKind;
}

/** Before an AI agent acts, plugins are told (e.g. the Agents 1.0 observation); a person's turn (a seat's) tells none. */
export async function prepare(ctx: RunContext, step: TurnStep): Promise<void> {
  if (!ctx.sop.agents[step.agent]!.human && !isSeatAgent(ctx, step.agent)) await observeAsync(ctx.plugins, 'beforeTurn', step);
}

/** The acting agent's reply. */
export async function act(ctx: RunContext, step: TurnStep): Promise<Acted> {
  const { state, role, agent, begin } = step;
  if (isSeatAgent(ctx, agent)) return { content: await seatTurn(ctx, step), kind: 'human' }; // a person at a web page (docs/seats.md)
  if (ctx.sop.agents[agent]!.human) return { content: await askHuman(ctx, step), kind: 'human' };
  if (begin && state.beginRoleExplicit && state.def.begin_query !== undefined)
    return { content: renderText(state.def.begin_query, ctx.baseContext(), `/states/${state.name}/begin_query`), kind: 'begin' };
  if (begin && state.beginRoleExplicit && ctx.semantics.blankBeginMessage) return { content: ' ', kind: 'begin' };
  const pipeline = (extra: ChatMessage[] = [], privateMemory?: PrivateMemoryOption) =>
    agentTurn(ctx, { state, role, agent, extra, privateMemory });
  // a plugin's reply (a command, the Agents 1.0 turn), else the agent prompt pipeline's
  const out = (await decideAsync(ctx.plugins, 'speak', step, pipeline)) ?? { content: await pipeline() };
  return { ...out, kind: 'speech' };
}

/** A person's turn: what they may see last, and their answer (an answer already in the journal is not asked again). */
async function askHuman(ctx: RunContext, { state, role, agent }: TurnStep): Promise<string> {
  const seen = ctx.env.audiences?.active ? ctx.env.seenBy(agent) : ctx.env.messages;
  const last = seen[seen.length - 1];
  const answer = await ctx.perform({ kind: 'human', label: `${agent}@${state.name}`, marksStart: true }, () =>
    ctx.human.ask({ agent, role, state: state.name, kind: 'turn', prompt: last ? `${last.sender} (${last.role}): ${last.content}` : '' }),
  );
  if (answer.reused) ctx.human.skip?.(1);
  return answer.value;
}

/** The reply becomes a message: its audience, the environment, the observers, its effect, the summary. */
export async function apply(ctx: RunContext, step: TurnStep, acted: Acted): Promise<Message> {
  const { state, role, agent } = step;
  const env = ctx.env;
  const addressed = env.audiences?.active ? env.audiences.address(state.name, role, agent, acted.content) : undefined;
  if (addressed?.warning) ctx.emit({ type: 'warning', message: addressed.warning });
  const message: Message = {
    id: env.messages.length,
    turn: ctx.position.turn,
    state: state.name,
    sender: agent,
    role,
    content: addressed?.content ?? acted.content,
    kind: acted.kind,
    timestamp: new Date().toISOString(),
    ...(addressed
      ? {
          audience: addressed.audience,
          ...(addressed.to ? { to: addressed.to } : {}),
          ...(addressed.data ? { data: addressed.data } : {}),
        }
      : {}),
  };
  await env.add(message);
  observe(ctx.plugins, 'afterMessage', message);
  ctx.emit({ type: 'message', message });
  await acted.execute?.();
  await maybeSummarize(ctx, state);
  return message;
}
