// Seats: agents people play from a web page (docs/seats.md). The contract between the step loop
// and the population feature, which ask a seat, and the seats feature, which answers through the
// run's `seat` hook (src/core/runtime/hooks.ts). A seat is shown what the agent's prompt would
// hold, as content (never the prompt's text); its answer has the shape of its `default`.

/** A message as a seat sees it: who sent it and what it says (its audience already applied). */
export interface SeatMessage {
  sender: string;
  role: string;
  content: string;
  /** Whom it was addressed to, when it was addressed. */
  to?: string;
  state?: string;
}

/** What a seat sees at a turn or step: the content of the agent's prompt at that moment. */
export interface SeatSees {
  /** The state and its environment prompt. */
  state: string;
  environment?: string;
  /** Who the seat plays: its name, role, style or persona, the role's task. */
  persona: string;
  /** Turn-based: the messages in the agent's audience (its recent window), and the running summary. */
  messages?: SeatMessage[];
  summary?: string;
  /** Population: its own observation (feed, book, board), the step's public snapshot, its memory. */
  observation?: unknown;
  snapshot?: unknown;
  memory?: string;
  clock?: string;
  step?: number;
}

/** One thing a seat may do: a population member's move with its JSON Schema, or a command a turn-based state lists. */
export interface SeatChoice {
  name: string;
  description?: string;
  /** JSON Schema of its arguments (population actions). */
  parameters?: Record<string, unknown>;
}

/** A turn-based answer is the text of the agent's message; a population answer is a move of the menu. */
export type SeatAnswer = string | { name: string; args: Record<string, unknown> };

/** A question to a seat: what it sees, what it may do, and what happens at its deadline. */
export interface SeatQuestion {
  /** The seat asked: a turn-based agent's name, or `STATE/MEMBER` of a population state. */
  seat: string;
  /** The agent the seat plays (a population member's id). */
  agent: string;
  role: string;
  state: string;
  kind: 'turn' | 'step';
  /** The run's turn, and the population step (its position, shown and journaled). */
  turn: number;
  step?: number;
  sees: SeatSees;
  /** What the seat may do (the JSON API's `actions`). */
  choices: SeatChoice[];
  /** The answer taken at the deadline; absent: the run waits for the seat. */
  default?: SeatAnswer;
  /** Milliseconds the seat has to answer (absent: no deadline). */
  deadlineMs?: number;
  /** A problem with an answer (its shape, an action's arguments), or undefined when it is fine. */
  check(answer: SeatAnswer): string | undefined;
}

/** A seat's answer as it is journaled: the answer, who gave it, from which seat, when. */
export interface SeatReply {
  answer: SeatAnswer;
  /** The name the person gave when they joined, or "deadline" when the default was taken. */
  who: string;
  seat: string;
  /** ISO time of the answer. */
  at: string;
  /** The default was taken at the deadline. */
  defaulted: boolean;
}

/** The answer as the text of a turn's message. */
export const seatAnswerText = (answer: SeatAnswer): string => (typeof answer === 'string' ? answer : JSON.stringify(answer));

/** The answer's shape checked against the kind of question (the text of a message, or an action of the menu). */
export function seatAnswerProblem(q: Pick<SeatQuestion, 'kind' | 'choices'>, answer: unknown): string | undefined {
  if (q.kind === 'turn') {
    if (typeof answer !== 'string') return 'the answer must be the text of your message';
    if (answer.trim() === '') return 'the answer is empty';
    if (answer.length > 20000) return 'the answer is longer than 20000 characters';
    return undefined;
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return 'the answer must be {"name": NAME, "args": {...}}';
  const { name, args } = answer as { name?: unknown; args?: unknown };
  if (typeof name !== 'string' || !q.choices.some((a) => a.name === name))
    return `"name" must be one of ${q.choices.map((a) => a.name).join(', ')}`;
  if (args !== undefined && (args === null || typeof args !== 'object' || Array.isArray(args))) return '"args" must be an object';
  return undefined;
}
