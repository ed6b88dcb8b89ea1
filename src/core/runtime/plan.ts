// The plan of a step, as pure functions of the position, the resolved SOP and the controller's
// answers (a plugin's transition, the judge's key, the speaker strategy's pick): where the run
// goes, whether it ends there, and who acts. They return a new position and the events to tell;
// the loop (./run-loop.ts) asks the controller and applies what they return.
import type { ResolvedSop, ResolvedState } from '../../format/sop/resolved.js';
import { freshStateRuntime, transitDecision, type StateRuntime } from './controller.js';
import type { RunEvent } from './events.js';
import type { Transition, TurnStep } from './hooks.js';
import type { RunPosition } from './position.js';
import type { Semantics } from './semantics.js';

/** Why a state is entered (its state_entered event). */
export type MoveReason = Extract<RunEvent, { type: 'state_entered' }>['reason'];

/** Where the run goes from its current state. */
export interface Move {
  target: string;
  reason: MoveReason;
}

/** The judge must be asked (no plugin and no rule of the SOP decides). */
export const ASK_JUDGE = 'ask_judge';

/** Where a state goes by a plugin's decision (command states) or the rules of its next_states and max_turns. */
export function ruledMove(state: ResolvedState, rt: StateRuntime, decided: Transition | undefined): Move | typeof ASK_JUDGE {
  if (decided) return decided;
  const decision = transitDecision(state.nextStates, rt.chatNums, state.maxTurns);
  if (decision.kind === 'ask_judge') return ASK_JUDGE;
  return { target: state.nextStates[decision.key]!, reason: decision.kind === 'max_turns' ? 'max_turns' : 'direct' };
}

/** What a move leads to: the run finishes, a visit begins (its begin role acts), or the state's controller picks who acts. */
export type Arrival =
  | { kind: 'finished'; state: string; position: RunPosition; events: RunEvent[] }
  | { kind: 'begin'; step: TurnStep; position: RunPosition; events: RunEvent[] }
  | { kind: 'route'; state: ResolvedState; position: RunPosition; events: RunEvent[] };

const copy = (p: RunPosition): RunPosition => ({ ...p, states: { ...p.states } });

/** The first step of a run: its root state. */
export function start(pos: RunPosition, resolved: ResolvedSop): Arrival {
  const position = { ...copy(pos), started: true };
  const root = resolved.states[position.current]!;
  if (root.final) return { kind: 'finished', state: root.name, position, events: [] };
  const events: RunEvent[] = [{ type: 'state_entered', state: root.name, turn: position.turn, reason: 'root' }];
  return begin(position, root, events);
}

/** The run moves (or stays, when the target is the current state). */
export function arrive(pos: RunPosition, resolved: ResolvedSop, move: Move, semantics: Semantics): Arrival {
  const position = copy(pos);
  const from = resolved.states[position.current]!;
  if (move.target === from.name) return { kind: 'route', state: from, position, events: [] };
  const to = resolved.states[move.target]!;
  const events: RunEvent[] = [{ type: 'state_entered', state: to.name, from: from.name, turn: position.turn, reason: move.reason }];
  if (to.final) return { kind: 'finished', state: to.name, position, events };
  position.current = to.name;
  const rt = position.states[to.name]!;
  // A new visit starts afresh: begin turn, turn counter and rotation (Agents 1.0 keeps them).
  if (rt.visits > 0 && semantics.freshVisit) position.states[to.name] = { ...freshStateRuntime(to.roles, to.beginRole), visits: rt.visits };
  if (!position.states[to.name]!.begun) return begin(position, to, events);
  return { kind: 'route', state: to, position, events };
}

/** The first turn of a visit: the begin role acts, with no routing call. A state without roles (its steps are a plugin's) is routed. */
function begin(position: RunPosition, state: ResolvedState, events: RunEvent[]): Arrival {
  const rt = position.states[state.name]!;
  position.states[state.name] = { ...rt, visits: rt.visits + 1 };
  if (state.beginRole === undefined) return { kind: 'route', state, position, events };
  const role = state.beginRole;
  const agent = state.roleToAgent[role]!;
  events.push({ type: 'speaker_chosen', state: state.name, agent, role, turn: position.turn + 1, how: 'begin' });
  return { kind: 'begin', step: { state, role, agent, begin: true }, position, events };
}

export type PickHow = 'order' | 'random' | 'rule' | 'rule_fallback' | 'single';

/** The step of the role the state's controller picked (a state of one role needs no pick). */
export function routed(
  pos: RunPosition,
  state: ResolvedState,
  role: string,
  how: PickHow,
  rng: number,
): { step: TurnStep; position: RunPosition; events: RunEvent[] } {
  const position = { ...copy(pos), rng };
  position.states[state.name] = { ...position.states[state.name]!, currentRole: role };
  const agent = state.roleToAgent[role]!;
  const events: RunEvent[] = [{ type: 'speaker_chosen', state: state.name, agent, role, turn: position.turn + 1, how }];
  return { step: { state, role, agent, begin: false }, position, events };
}

/** The position once a step's actor has begun its turn: the run's and the state's turn counters move on. */
export function turnTaken(pos: RunPosition, state: string): RunPosition {
  const rt = pos.states[state]!;
  return { ...pos, turn: pos.turn + 1, states: { ...pos.states, [state]: { ...rt, chatNums: rt.chatNums + 1, begun: true } } };
}
