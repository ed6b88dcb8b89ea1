// Seats in a population state (docs/seats.md): members people play from a web page. The state's
// `population.seats` names them: a count (the first members in population order, seats STATE/1 ..
// STATE/N) or their ids (seats STATE/ID). An acting seat member is shown what its prompt would
// hold (persona, observation, snapshot, memory, clock) and the action menu with each action's
// JSON Schema; at its deadline (seat_timeout_s, never past the straggler deadline) it takes the
// straggler default action, else idle. Its answer is journaled under its own key in the step, so a
// resumed step does not ask it again.
import { askSeat } from '../../core/runtime/seat.js';
import type { RunContext } from '../../core/runtime/context.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import type { SeatAnswer, SeatQuestion } from '../../core/io/seats.js';
import { PopulationError, type PopulationSpec } from './types.js';
import type { Population } from './population.js';
import type { Choice, Seen } from './decide.js';
import { checkActionArgs, type ActionSpec, type AnyWorld } from './worlds/world.js';
import type { PopulationStateSpec } from './state-spec.js';

/** The seat fields of a state's `population` (schemas/population.schema.json). */
interface SeatFields {
  seats?: number | string[];
  seat_timeout_s?: number;
}

/** The members played from seats: population index -> seat name. */
export function seatMembers(spec: PopulationSpec, pop: Population, state: string): Map<number, string> {
  const seats = (spec as PopulationSpec & SeatFields).seats;
  const out = new Map<number, string>();
  if (typeof seats === 'number') for (let n = 0; n < Math.min(seats, pop.size); n++) out.set(n, `${state}/${n + 1}`);
  else if (Array.isArray(seats))
    for (const id of seats) {
      const i = pop.indexOf(id);
      if (i < 0) throw new PopulationError(`/states/${state}/population/seats: no member has the id ${JSON.stringify(id)}`);
      out.set(i, `${state}/${id}`);
    }
  return out;
}

export interface SeatAsk {
  ctx: RunContext;
  state: ResolvedState;
  spec: PopulationStateSpec;
  world: AnyWorld;
  pop: Population;
  tools: readonly ActionSpec[];
  turn: number;
}

/** A seat member's decision at a step: asked (or its journaled answer reused), read as an action. */
export async function seatDecision(s: SeatAsk, i: number, seat: string, seen: Seen): Promise<Choice> {
  const { ctx, state, spec, world, tools } = s;
  const id = s.pop.ids[i]!;
  const fallback = spec.straggler?.default ?? { name: 'idle', args: {} };
  const timeout = (spec.population as PopulationSpec & SeatFields).seat_timeout_s;
  const limits = [timeout !== undefined ? timeout * 1000 : undefined, spec.straggler?.deadlineMs].filter(
    (v): v is number => v !== undefined,
  );
  const check = (a: SeatAnswer): string | undefined => {
    if (typeof a === 'string') return 'the answer must be an action';
    const problem = checkActionArgs(world, { agent: id, name: a.name, args: a.args, seq: 0 }, tools);
    return problem === '' ? undefined : problem;
  };
  let snapshot: unknown = seen.snapshot;
  try {
    snapshot = JSON.parse(seen.snapshot);
  } catch {
    // a snapshot that is not JSON is shown as its text
  }
  const q: SeatQuestion = {
    seat,
    agent: id,
    role: 'population',
    state: state.name,
    kind: 'step',
    turn: s.turn,
    step: seen.step,
    sees: {
      state: state.name,
      environment: ctx.envPrompt(state),
      persona: s.pop.personaText(i) || `You are ${id}.`,
      observation: seen.observation,
      snapshot,
      memory: seen.memory,
      clock: seen.clock,
      step: seen.step,
    },
    choices: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    default: fallback,
    ...(limits.length > 0 ? { deadlineMs: Math.min(...limits) } : {}),
    check,
  };
  const performed = await ctx.perform(
    { kind: 'seat', label: `${id}@${state.name}`, key: `${seen.step}:seat:${id}`, marksStart: true },
    () => askSeat(ctx, q),
  );
  if (performed.reused && performed.value.via === 'input') ctx.human.skip?.(1);
  const answer = performed.value.answer;
  if (typeof answer === 'string') return { invalid: 'a seat answered with text, not an action' };
  const problem = check(answer);
  return problem ? { invalid: problem } : { name: answer.name, args: answer.args };
}
