// A seat's turn (docs/seats.md): an agent a person plays from a web page. The seat is shown what
// the agent's prompt would hold (its persona, the environment prompt, the summary and the recent
// window of messages in its audience), the run asks the plugin that serves seats (the `seat` hook,
// src/features/seats/), and the answer is journaled as an effect with who gave it, from which seat
// and when, so a resumed run does not ask again. A run with no plugin serving seats (no --web)
// asks its human input (the terminal, --answers), so a seat's turns can also be given in advance.
import { recentWindow } from '../agent/pipeline.js';
import { seatAnswerProblem, seatAnswerText, type SeatAnswer, type SeatQuestion, type SeatReply } from '../io/seats.js';
import { decideAsync } from './compose.js';
import type { RunContext } from './context.js';
import type { TurnStep } from './hooks.js';

/** The seat fields of an agent (schemas/sop.schema.json: seat, seat_timeout_s, seat_default). */
interface SeatAgent {
  style?: string;
  seat?: boolean;
  seat_timeout_s?: number;
  seat_default?: string;
}

/** Whether an agent is played from a seat. */
export const isSeatAgent = (ctx: Pick<RunContext, 'sop'>, agent: string): boolean => ctx.sop.agents[agent]?.seat === true;

/**
 * Asks a seat: the plugin that serves it, else the run's human input (its answer read as the
 * question's kind needs: a population member's move is written as JSON {"name": ..., "args": {...}}).
 */
export async function askSeat(ctx: RunContext, q: SeatQuestion): Promise<SeatReply & { via: 'web' | 'input' }> {
  const served = await decideAsync(ctx.plugins, 'seat', q);
  if (served) return { ...served, via: 'web' };
  const text = await ctx.human.ask({
    agent: q.agent,
    role: q.role,
    state: q.state,
    kind: 'turn',
    prompt: q.kind === 'turn' ? lastLine(q) : `one of ${q.choices.map((a) => a.name).join(', ')}, as JSON {"name": ..., "args": {...}}`,
  });
  let answer: SeatAnswer = text;
  if (q.kind === 'step') {
    try {
      answer = JSON.parse(text) as SeatAnswer;
    } catch {
      answer = { name: text.trim(), args: {} };
    }
    const problem = seatAnswerProblem(q, answer) ?? q.check(answer);
    if (problem && q.default !== undefined) answer = q.default;
  }
  return { answer, who: ctx.human.id, seat: q.seat, at: new Date().toISOString(), defaulted: false, via: 'input' };
}

const lastLine = (q: SeatQuestion): string => {
  const last = q.sees.messages?.[q.sees.messages.length - 1];
  return last ? `${last.sender} (${last.role}): ${last.content}` : '';
};

/** A turn-based seat's turn: what its agent would see, asked, journaled; the text of its message. */
export async function seatTurn(ctx: RunContext, step: TurnStep): Promise<string> {
  const { state, role, agent } = step;
  const def = ctx.sop.agents[agent] as SeatAgent;
  const view = await ctx.env.view({ agent, window: recentWindow(ctx, state, agent), topK: 0 });
  const shown = ctx.prompt.view(view, state, ctx.env.stateStart);
  const components = (state.def.components?.[role] ?? {}) as Record<string, unknown>;
  const task = ['task', 'rule', 'demonstrations']
    .map((k) => components[k])
    .filter((v): v is string => typeof v === 'string')
    .join('\n');
  const persona = [`You are ${agent}, the ${role}.`, def.style ? `Style: ${def.style}.` : '', task].filter((s) => s !== '').join('\n');
  const q: SeatQuestion = {
    seat: agent,
    agent,
    role,
    state: state.name,
    kind: 'turn',
    turn: ctx.position.turn,
    sees: {
      state: state.name,
      environment: ctx.envPrompt(state),
      persona,
      summary: state.summary.enabled ? shown.summary : '',
      messages: shown.window.map((m) => ({
        sender: m.sender,
        role: m.role,
        content: m.content,
        state: m.state,
        ...(m.to ? { to: m.to } : {}),
      })),
    },
    choices: [], // a state's own (the seats feature lists them)
    ...(def.seat_default !== undefined ? { default: def.seat_default } : {}),
    ...(def.seat_timeout_s !== undefined ? { deadlineMs: def.seat_timeout_s * 1000 } : {}),
    check: () => undefined,
  };
  const performed = await ctx.perform({ kind: 'seat', label: `${agent}@${state.name}`, marksStart: true }, () => askSeat(ctx, q));
  if (performed.reused && performed.value.via === 'input') ctx.human.skip?.(1);
  return seatAnswerText(performed.value.answer);
}
