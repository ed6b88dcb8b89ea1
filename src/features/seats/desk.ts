// The seats of a run (docs/seats.md): one capability token per seat, the question each seat is
// asked now, its deadline, and the answers. What the JSON API under the seat page does
// (src/apps/seats/server.ts) is decided here, without HTTP: `state`, `answer` (idempotent by key;
// a wrong token, a closed turn and a bad answer each get their own status) and `join`.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import { HumanInputError } from '../../core/io/human.js';
import { seatAnswerProblem, type SeatAnswer, type SeatQuestion, type SeatReply } from '../../core/io/seats.js';
import type { SeatSlotSpec } from './slots.js';

/** The run stopped while a seat was asked: resumable, the seat is asked again on resume. */
export class SeatStoppedError extends HumanInputError {
  readonly resumable = true;
  constructor(seat: string) {
    super(`the run stopped while seat ${seat} was asked`);
    this.name = 'SeatStoppedError';
  }
}

/** Idempotency keys remembered per seat (the oldest are let go past this). */
const KEYS_KEPT = 1000;

interface Open {
  /** The question's id (turn, and step of a population state): an answer may name the one it answers. */
  id: string;
  q: SeatQuestion;
  openedAt: number;
  deadlineAt?: number;
  resolve(reply: SeatReply): void;
  timer?: NodeJS.Timeout;
}

interface Slot extends SeatSlotSpec {
  token: string;
  who?: string;
  joinedAt?: string;
  open?: Open;
  /** Why the last turn closed (a 409's reason). */
  closed?: string;
  /** What the seat saw at its last question (shown while it waits). */
  lastSees?: SeatQuestion['sees'];
  answered: number;
  keys: Map<string, ApiReply>;
  /** The seat was told the run is over. */
  sawFinish?: boolean;
}

/** A reply of the JSON API: its HTTP status and body. */
export interface ApiReply {
  status: number;
  body: Record<string, unknown>;
}

export interface SeatDeskOptions {
  /** A new token (default: 24 random bytes, hex). */
  token?: () => string;
  /** The clock (ms), for deadlines. */
  now?: () => number;
}

/** A seat's overview, for the runner page. */
export interface SeatOverview {
  seat: string;
  who?: string;
  joinedAt?: string;
  status: 'waiting' | 'your_turn' | 'finished';
  answered: number;
}

const newToken = (): string => randomBytes(24).toString('hex');

function sameToken(given: string, token: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

export class SeatDesk {
  private readonly slots: Slot[];
  /** The runner page's token. */
  readonly runnerToken: string;
  private finished = false;
  private readonly now: () => number;
  private joinedWaiters: Array<() => void> = [];
  private finishWaiters: Array<() => void> = [];

  constructor(specs: readonly SeatSlotSpec[], o: SeatDeskOptions = {}) {
    const token = o.token ?? newToken;
    this.now = o.now ?? Date.now;
    this.slots = specs.map((s) => ({ ...s, token: token(), answered: 0, keys: new Map() }));
    this.runnerToken = token();
  }

  /** Every seat with its token (for the links). */
  seats(): Array<{ seat: string; token: string }> {
    return this.slots.map((s) => ({ seat: s.seat, token: s.token }));
  }

  /** Whether this desk serves a seat. */
  serves(seat: string): boolean {
    return this.slots.some((s) => s.seat === seat);
  }

  /** The seat of a token, compared in constant time against every seat's. */
  private bySlotToken(token: string): Slot | undefined {
    let found: Slot | undefined;
    for (const s of this.slots) if (sameToken(token, s.token)) found = s;
    return found;
  }

  isRunner(token: string | undefined): boolean {
    return token !== undefined && sameToken(token, this.runnerToken);
  }

  /** A person opened the seat: joined under the name they gave (else the seat's name). */
  join(token: string, name?: unknown): ApiReply {
    const slot = this.bySlotToken(token);
    if (!slot) return forbidden();
    if (typeof name === 'string' && name.trim() !== '') slot.who = name.trim().slice(0, 80);
    else slot.who ??= `seat ${slot.seat}`;
    this.joined(slot);
    return { status: 200, body: { seat: slot.seat, who: slot.who } };
  }

  /** A seat's page (or a script) has asked for its state, or joined: it is there. */
  private joined(slot: Slot): void {
    if (slot.joinedAt !== undefined) return;
    slot.joinedAt = new Date(this.now()).toISOString();
    if (this.slots.every((s) => s.joinedAt !== undefined)) for (const w of this.joinedWaiters.splice(0)) w();
  }

  /** Resolves once every seat has joined. */
  allJoined(): Promise<void> {
    if (this.slots.every((s) => s.joinedAt !== undefined)) return Promise.resolve();
    return new Promise((resolve) => this.joinedWaiters.push(resolve));
  }

  overview(): SeatOverview[] {
    return this.slots.map((s) => ({
      seat: s.seat,
      ...(s.who !== undefined ? { who: s.who } : {}),
      ...(s.joinedAt !== undefined ? { joinedAt: s.joinedAt } : {}),
      status: this.finished ? 'finished' : s.open ? 'your_turn' : 'waiting',
      answered: s.answered,
    }));
  }

  /** Asks a seat this desk serves; resolves with its answer, or its default at the deadline. */
  ask(q: SeatQuestion, signal?: AbortSignal): Promise<SeatReply> {
    const slot = this.slots.find((s) => s.seat === q.seat)!;
    if (slot.open) throw new HumanInputError(`seat ${q.seat} is asked twice at once`);
    return new Promise<SeatReply>((resolve, reject) => {
      const onAbort = () => {
        this.close(slot, 'the run stopped');
        reject(new SeatStoppedError(q.seat));
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      const openedAt = this.now();
      const open: Open = {
        id: `${q.turn}${q.step !== undefined ? `.${q.step}` : ''}`,
        q,
        openedAt,
        ...(q.deadlineMs !== undefined ? { deadlineAt: openedAt + q.deadlineMs } : {}),
        resolve: (reply) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(reply);
        },
      };
      slot.open = open;
      slot.lastSees = q.sees;
      delete slot.closed;
      if (q.deadlineMs !== undefined && q.default !== undefined) {
        const answer = q.default;
        open.timer = setTimeout(() => {
          if (slot.open !== open) return;
          this.close(slot, 'the turn closed at its deadline and the default was taken');
          open.resolve({ answer, who: 'deadline', seat: q.seat, at: new Date(this.now()).toISOString(), defaulted: true });
        }, q.deadlineMs);
      }
    });
  }

  private close(slot: Slot, why: string): void {
    if (slot.open?.timer) clearTimeout(slot.open.timer);
    delete slot.open;
    slot.closed = why;
  }

  /** The run is over: every seat's status is finished. */
  finish(): void {
    this.finished = true;
    for (const s of this.slots) if (s.open) this.close(s, 'the run is over');
  }

  /** Resolves once every seat that joined has been told the run is over. */
  allSawFinish(): Promise<void> {
    if (this.slots.every((s) => s.sawFinish || s.joinedAt === undefined)) return Promise.resolve();
    return new Promise((resolve) => this.finishWaiters.push(resolve));
  }

  /** GET /seat/TOKEN/state: what the seat sees, its allowed actions and its default. */
  state(token: string): ApiReply {
    const slot = this.bySlotToken(token);
    if (!slot) return forbidden();
    this.joined(slot);
    const base = { seat: slot.seat, ...(slot.who !== undefined ? { who: slot.who } : {}) };
    if (this.finished) {
      slot.sawFinish = true;
      if (this.slots.every((s) => s.sawFinish || s.joinedAt === undefined)) for (const w of this.finishWaiters.splice(0)) w();
    }
    if (this.finished)
      return { status: 200, body: { ...base, status: 'finished', sees: slot.lastSees ?? null, actions: [], default: null } };
    const open = slot.open;
    if (!open) return { status: 200, body: { ...base, status: 'waiting', sees: slot.lastSees ?? null, actions: [], default: null } };
    const q = open.q;
    return {
      status: 200,
      body: {
        ...base,
        status: 'your_turn',
        question: open.id,
        kind: q.kind,
        agent: q.agent,
        role: q.role,
        state: q.state,
        turn: q.turn,
        ...(q.step !== undefined ? { step: q.step } : {}),
        sees: q.sees,
        actions: q.choices,
        default: q.default ?? null,
        deadline_ms: open.deadlineAt !== undefined ? Math.max(0, open.deadlineAt - this.now()) : null,
        waits_at_deadline: q.default === undefined,
      },
    };
  }

  /** POST /seat/TOKEN/answer {"key", "answer"}: accepted once per key; 409 when no turn is open. */
  answer(token: string, body: unknown): ApiReply {
    const slot = this.bySlotToken(token);
    if (!slot) return forbidden();
    const { key, answer, question } = (body ?? {}) as { key?: unknown; answer?: unknown; question?: unknown };
    if (typeof key !== 'string' || key.length === 0 || key.length > 200)
      return { status: 400, body: { error: '"key" must be an idempotency key: a string of 1 to 200 characters' } };
    const repeated = slot.keys.get(key);
    if (repeated) return { status: repeated.status, body: { ...repeated.body, repeated: true } };
    const reply = this.take(slot, answer, question);
    // a refused answer (400) may be corrected under the same key; what was taken or closed is kept
    if (reply.status !== 400) {
      slot.keys.set(key, reply);
      if (slot.keys.size > KEYS_KEPT) slot.keys.delete(slot.keys.keys().next().value!);
    }
    return reply;
  }

  private take(slot: Slot, answer: unknown, question: unknown): ApiReply {
    const open = slot.open;
    if (this.finished) return { status: 409, body: { error: 'the run is over' } };
    if (!open) return { status: 409, body: { error: slot.closed ?? 'no turn is open for this seat: wait for your turn' } };
    if (question !== undefined && question !== open.id)
      return { status: 409, body: { error: `turn ${String(question)} is closed; the open one is ${open.id}` } };
    const problem = seatAnswerProblem(open.q, answer) ?? open.q.check(normal(answer as SeatAnswer));
    if (problem) return { status: 400, body: { error: problem } };
    const taken = normal(answer as SeatAnswer);
    const at = new Date(this.now()).toISOString();
    this.close(slot, 'the turn is answered');
    slot.answered++;
    open.resolve({ answer: taken, who: slot.who ?? `seat ${slot.seat}`, seat: slot.seat, at, defaulted: false });
    return { status: 200, body: { accepted: true, question: open.id, at } };
  }
}

/** A population answer with its args filled in. */
const normal = (a: SeatAnswer): SeatAnswer => (typeof a === 'string' ? a : { name: a.name, args: a.args ?? {} });

const forbidden = (): ApiReply => ({ status: 403, body: { error: 'forbidden: no seat has this token' } });
