// The prompts of a run, kept compactly in its journal. Each LLM call's `prompt` event (the
// messages it was sent, secrets redacted) is written as a delta against an earlier prompt:
//
//   {"type":"prompt_part","hash":H,"text":"..."}            a system prompt, the first time it is seen
//   {"type":"prompt",purpose,state,agent,turn,"base":B,"messages":[...]}
//
// `base` is the hash of an earlier prompt: the same agent's last call, or the last call of the
// same purpose in the same state, whichever makes the shorter line. Each entry of `messages` is
// {copy: j, n: k} (k messages of the base from index j), {role, of: j, from: n, content} (the
// first n characters of the base's message j, then `content`), {role: "system", part: H}, or a
// message as it is. A `content` may be a list of pieces: text, and {effect, start, length} for
// a stretch of a long earlier reply (its `llm_call` line holds it). Without a useful base a
// prompt is written whole (no `base`). Bases are named by the hash of their messages, not by
// position, so the first call after a resume (a new writer, which knows no earlier prompt) is
// simply written whole, and a reader decodes in file order whatever attempt a line belongs to.
// A prompt whose base, part or reply is not in the journal (a damaged line) is read with what
// it has and a `problem`, never thrown. Format: docs/durability.md.
import { hash as digest } from 'node:crypto';
import type { ChatMessage } from '../llm/types.js';
import type { RunEvent } from '../runtime/events.js';
import { SHARED_TEXT_MIN } from './shared-text.js';

export type PromptEvent = Extract<RunEvent, { type: 'prompt' }>;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The hash naming a prompt or a system prompt part. */
export function promptHash(value: string | readonly ChatMessage[]): string {
  return hashText(typeof value === 'string' ? 'part\u0000' + value : JSON.stringify(value.map((m) => [m.role, m.content])));
}

/** The first 16 hex digits of the text's SHA-256. */
const hashText = (text: string): string => digest('sha256', text, 'hex').slice(0, 16);

/** A message as it is in the JSON a prompt's hash is taken of (`["role","content"]`). */
const messageJson = (m: ChatMessage): string => JSON.stringify([m.role, m.content]);

/** The innermost event of `subflow` wrappers, and the flow path they name. */
function unwrap(e: Obj): { inner: Obj; flow: string } {
  let cur = e;
  const flow: string[] = [];
  for (let d = 0; d < 32 && cur.type === 'subflow' && isObj(cur.event); d++) {
    flow.push(String(cur.flow));
    cur = cur.event;
  }
  return { inner: cur, flow: flow.join('/') };
}

/** `e` with its innermost event replaced. */
function rewrap(e: Obj, inner: Obj): Obj {
  if (e.type !== 'subflow' || !isObj(e.event)) return inner;
  return { ...e, event: rewrap(e.event, inner) };
}

/** The delta bases a call may use: the same agent's last call, and the same purpose's in the same state. */
function baseKeys(flow: string, p: Obj): string[] {
  const keys = [`${flow}\u0000${String(p.purpose)}\u0000state\u0000${String(p.state)}`];
  if (typeof p.agent === 'string') keys.unshift(`${flow}\u0000agent\u0000${p.agent}`);
  return keys;
}

/** A differing message repeats the start of its base message's text from this many characters on. */
const MIN_SHARED_PREFIX = 64;

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && i < 512 && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  if (i === 512) {
    // A long shared start (a judge's growing conversation): found by halving, natively.
    if (b.startsWith(a.slice(i, n), i)) i = n;
    else {
      let hi = n - 1; // the prefix is shorter than n
      while (i < hi) {
        const mid = (i + hi + 1) >> 1;
        if (b.startsWith(a.slice(i, mid), i)) i = mid;
        else hi = mid - 1;
      }
    }
  }
  // Never split a surrogate pair.
  if (i > 0 && i < b.length && /[\ud800-\udbff]/.test(b[i - 1]!)) i--;
  return i;
}

/** A prompt the encoder has seen, as a possible base of later ones. */
class Base {
  /** Its messages' indices by the length of their text. */
  private where?: Map<number, number | number[]>;
  private named?: string;
  /** Each message as JSON for the hash: those copied from its base are taken from the base's. */
  private pieces?: Array<string | undefined>;

  constructor(readonly messages: ChatMessage[]) {}

  /** The hash naming it (computed when a later prompt first refers to it). */
  get hash(): string {
    if (this.named === undefined) {
      const pieces = (this.pieces ??= []);
      let text = '';
      for (let i = 0; i < this.messages.length; i++) text += (i === 0 ? '[' : ',') + (pieces[i] ??= messageJson(this.messages[i]!));
      this.named = hashText(this.messages.length === 0 ? '[]' : text + ']');
    }
    return this.named;
  }

  /** Its messages copied from `base` (copied[i]: index in the base, or -1) share their JSON with it. */
  copiedFrom(base: Base, copied: readonly number[]): void {
    const from = base.pieces;
    if (!from) return;
    const pieces: Array<string | undefined> = (this.pieces ??= []);
    copied.forEach((j, i) => {
      if (j >= 0 && from[j] !== undefined) pieces[i] = from[j];
    });
  }

  /**
   * The first of its messages with this role and content, if any. Candidates are found by the
   * text's length (texts of the same length are few), so a text found nowhere costs no hashing.
   */
  find(role: string, content: string): number | undefined {
    if (!this.where) {
      const at = new Map<number, number | number[]>();
      this.messages.forEach((m, j) => {
        const seen = at.get(m.content.length);
        if (seen === undefined) at.set(m.content.length, j);
        else if (typeof seen === 'number') at.set(m.content.length, [seen, j]);
        else seen.push(j);
      });
      this.where = at;
    }
    const seen = this.where.get(content.length);
    if (seen === undefined) return undefined;
    const messages = this.messages;
    if (typeof seen === 'number') return messages[seen]!.role === role && messages[seen]!.content === content ? seen : undefined;
    for (const j of seen) if (messages[j]!.role === role && messages[j]!.content === content) return j;
    return undefined;
  }

  /** Length of message i's content as JSON (from its JSON for the hash: `["role",content]`). */
  jsonLength(i: number): number {
    const m = this.messages[i]!;
    const piece = ((this.pieces ??= [])[i] ??= messageJson(m));
    return piece.length - roleLength(m.role) - 3;
  }
}

/** Length of a string as JSON (roles are few: remembered). */
const roleLengths = new Map<string, number>();
function roleLength(role: string): number {
  let n = roleLengths.get(role);
  if (n === undefined) {
    n = JSON.stringify(role).length;
    if (roleLengths.size < 64) roleLengths.set(role, n);
  }
  return n;
}

const digits = (n: number): number => (n < 10 ? 1 : n < 100 ? 2 : String(n).length);

/** {"role":R,"content":C} */
const WHOLE = 8 + 11 + 1;
/** {"role":R,"of":J,"from":F,"content":C} */
const CONTINUED = 8 + 6 + 8 + 11 + 1;
/** {"copy":J,"n":N} */
const COPY = 8 + 5 + 1;

/**
 * The length as JSON of `cur`'s messages written whole (no base), or a number at least
 * `above` + 1 when it is longer than `above` (then it is not worked out exactly).
 */
function wholeSize(cur: Base, above: number): number {
  // Escaping only makes a string longer: the plain lengths bound it from below.
  let low = 2 + Math.max(0, cur.messages.length - 1);
  for (const m of cur.messages) low += WHOLE + roleLength(m.role) + m.content.length + 2;
  if (low > above) return low;
  let size = 2 + Math.max(0, cur.messages.length - 1);
  cur.messages.forEach((m, i) => {
    size += WHOLE + roleLength(m.role) + cur.jsonLength(i);
  });
  return size;
}

/**
 * The messages of `cur` as entries against `base`: {copy: j, n: k} for k of its messages from
 * index j on, {role, of: j, from: n, content} for a (non-system) message that repeats the first n
 * characters of its message j and goes on with `content`, else the message itself. `size` is the
 * length of the entries as JSON (what JSON.stringify(ops).length says), worked out without
 * serialising the messages again.
 */
function deltaOps(cur: Base, base: Base | undefined): { ops: Obj[]; size: number; copied: number[] } {
  const ops: Obj[] = [];
  const copied: number[] = []; // per message: the base message it copies, or -1
  let size = 2; // []
  let next = 0; // the base message after the last one copied
  let copy: { copy: number; n: number } | undefined; // the last op, when it copies
  const messages = cur.messages;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (ops.length > 0) size += 1; // ,
    // The base's next message first (a run of copies), else wherever it is in the base.
    const same = base?.messages[next];
    const found = same && same.role === m.role && same.content === m.content ? next : base?.find(m.role, m.content);
    copied.push(-1);
    if (found !== undefined) {
      const j = found;
      copied[i] = j;
      if (copy && copy.copy + copy.n === j) {
        size -= 1 + digits(copy.n); // no new op, and n may gain a digit
        copy.n++;
        size += digits(copy.n);
      } else {
        copy = { copy: j, n: 1 };
        ops.push(copy);
        size += COPY + digits(j) + 1;
      }
      next = j + 1;
      continue;
    }
    copy = undefined;
    // System prompts are stored whole, once each (prompt_part lines); other messages may continue one of the base's.
    let continued = false;
    if (base && m.role !== 'system') {
      for (const j of next === i ? [next] : [next, i]) {
        const was = base.messages[j];
        if (!was || was.role !== m.role) continue;
        const from = commonPrefix(was.content, m.content);
        if (from >= MIN_SHARED_PREFIX) {
          const content = m.content.slice(from);
          ops.push({ role: m.role, of: j, from, content });
          size += CONTINUED + roleLength(m.role) + digits(j) + digits(from) + JSON.stringify(content).length;
          next = j + 1;
          continued = true;
          break;
        }
      }
    }
    if (continued) continue;
    ops.push({ role: m.role, content: m.content });
    size += WHOLE + roleLength(m.role) + cur.jsonLength(i);
  }
  return { ops, size, copied };
}

/** A line of the journal: an object, written as JSON. */
export type JournalLine = Obj;

/** A long earlier reply, as the journal holds it. */
interface Reply {
  effect: string;
  text: string;
}

/** Stretches of a reply at least this long inside a prompt's message are written by reference. */
const MIN_REPLY_REF = 1024;

/**
 * `content` as pieces: its own text, and {effect, start, length} for stretches of one of `replies`
 * (an agent's long reply, shown again in later prompts). Undefined when nothing is shared.
 */
function replyPieces(content: string, replies: readonly Reply[]): Array<string | Obj> | undefined {
  const refs: Array<{ at: number; length: number; ref: Obj }> = [];
  for (const r of replies) {
    // Probes from its start, middle and end, found in the content, are grown both ways.
    for (const from of new Set([0, Math.floor(r.text.length / 2), Math.max(0, r.text.length - 64)])) {
      const probe = r.text.slice(from, from + 64);
      for (let at = content.indexOf(probe); at !== -1; at = content.indexOf(probe, at + 1)) {
        const covered = refs.find((x) => at >= x.at && at < x.at + x.length);
        if (covered) {
          at = covered.at + covered.length - 1; // go on after it
          continue;
        }
        let a = at;
        let b = from;
        while (a > 0 && b > 0 && content.charCodeAt(a - 1) === r.text.charCodeAt(b - 1)) {
          a--;
          b--;
        }
        let e = at + probe.length;
        let f = from + probe.length;
        while (e < content.length && f < r.text.length && content.charCodeAt(e) === r.text.charCodeAt(f)) {
          e++;
          f++;
        }
        if (e - a >= MIN_REPLY_REF && !refs.some((x) => a < x.at + x.length && x.at < e))
          refs.push({ at: a, length: e - a, ref: { effect: r.effect, start: b, length: e - a } });
        at = Math.max(at, e - 1);
      }
    }
  }
  if (refs.length === 0) return undefined;
  refs.sort((x, y) => x.at - y.at);
  const pieces: Array<string | Obj> = [];
  let pos = 0;
  for (const x of refs) {
    if (x.at > pos) pieces.push(content.slice(pos, x.at));
    pieces.push(x.ref);
    pos = x.at + x.length;
  }
  if (pos < content.length) pieces.push(content.slice(pos));
  return pieces;
}

/** The writer's side: a `prompt` event (possibly inside `subflow`s) as its journal lines. */
export class PromptEncoder {
  private readonly parts = new Set<string>();
  /** System prompts' hashes by their text (most calls repeat one). */
  private readonly partHash = new Map<string, string>();
  private readonly last = new Map<string, Base>();
  /** The last few long replies (newest last). */
  private readonly replies: Reply[] = [];

  constructor(private readonly redact: (text: string) => string = (t) => t) {}

  /** A long LLM reply, as its journal line holds it (later prompts may refer to it). */
  noteReply(effect: string, text: string): void {
    this.replies.push({ effect, text });
    if (this.replies.length > 8) this.replies.shift();
  }

  /** The lines for `event` when it is a prompt, else undefined. */
  encode(event: RunEvent): JournalLine[] | undefined {
    const { inner, flow } = unwrap(event as unknown as Obj);
    if (inner.type === 'llm_call' && typeof inner.effect === 'string' && typeof inner.reply === 'string') {
      if (inner.reply.length >= SHARED_TEXT_MIN) {
        const json = JSON.stringify(inner.reply);
        const redacted = this.redact(json);
        let text: unknown = inner.reply; // as its line holds it
        if (redacted !== json) {
          try {
            text = JSON.parse(redacted);
          } catch {
            text = undefined;
          }
        }
        if (typeof text === 'string') this.noteReply(inner.effect, text);
      }
      return undefined;
    }
    if (inner.type !== 'prompt' || !Array.isArray(inner.messages)) return undefined;
    // As a reader will see them (the journal line is redacted as a whole too).
    const cur = new Base((inner.messages as ChatMessage[]).map((m) => ({ role: m.role, content: this.redact(m.content) })));
    const lines: JournalLine[] = [];
    const keys = baseKeys(flow, inner);
    // The base that makes the shortest line, or none (which wins a tie).
    let best: { ops: Obj[]; base?: Base; size: number; copied?: number[] } | undefined;
    for (const base of new Set(keys.map((k) => this.last.get(k)))) {
      if (!base) continue;
      const { ops, size, copied } = deltaOps(cur, base);
      if (!best || size < best.size) best = { ops, base, size, copied };
    }
    if (!best || wholeSize(cur, best.size) <= best.size)
      best = { ops: cur.messages.map((m) => ({ role: m.role, content: m.content })), size: 0 };
    const ops = best!.ops.map((m): Obj => {
      if (m.role !== 'system' || typeof m.content !== 'string') return m;
      let hash = this.partHash.get(m.content);
      if (hash === undefined) {
        hash = promptHash(m.content);
        if (this.partHash.size >= 256) this.partHash.clear();
        this.partHash.set(m.content, hash);
      }
      if (!this.parts.has(hash)) {
        this.parts.add(hash);
        lines.push({ type: 'prompt_part', hash, text: m.content });
      }
      return { role: 'system', part: hash };
    });
    for (const m of ops) {
      // Long replies shown again (the conversation in later prompts) are written by reference.
      if (typeof m.content !== 'string' || m.content.length < MIN_REPLY_REF || this.replies.length === 0) continue;
      const pieces = replyPieces(m.content, this.replies);
      if (pieces) m.content = pieces;
    }
    // The event's fields in order, less its messages (no `delete`: it would slow the object down).
    const encoded: Obj = {};
    for (const k of Object.keys(inner)) if (k !== 'messages') encoded[k] = inner[k];
    if (best!.base) {
      encoded.base = best!.base.hash;
      cur.copiedFrom(best!.base, best!.copied!);
    }
    encoded.messages = ops;
    lines.push(rewrap(event as unknown as Obj, encoded));
    for (const k of keys) this.last.set(k, cur);
    return lines;
  }
}

/** The reader's side: takes `prompt_part` lines (returns true: not an event) and puts prompts back whole. */
export class PromptDecoder {
  private readonly parts = new Map<string, string>();
  private readonly prompts = new Map<string, ChatMessage[]>();
  /** Long replies by effect key (the latest line of each). */
  private readonly replies = new Map<string, string>();

  /** True when the line is a `prompt_part` (kept here, not an event of the run). */
  part(value: Obj): boolean {
    if (value.type !== 'prompt_part') return false;
    if (typeof value.hash === 'string' && typeof value.text === 'string') this.parts.set(value.hash, value.text);
    return true;
  }

  /** Decodes a `prompt` line in place; what cannot be rebuilt is said in its `problem`. */
  read(value: Obj): void {
    const { inner } = unwrap(value);
    if (inner.type === 'llm_call' && typeof inner.effect === 'string' && typeof inner.reply === 'string') {
      if (inner.reply.length >= SHARED_TEXT_MIN) this.replies.set(inner.effect, inner.reply);
      return;
    }
    if (inner.type !== 'prompt') return;
    const problems: string[] = [];
    const messages: ChatMessage[] = [];
    let base: ChatMessage[] | undefined;
    if (typeof inner.base === 'string') {
      base = this.prompts.get(inner.base);
      if (!base) problems.push(`it repeats messages of prompt ${inner.base}, which no earlier line holds`);
    }
    const list = Array.isArray(inner.messages) ? (inner.messages as unknown[]) : [];
    for (const m of list) {
      if (!isObj(m)) continue;
      if (typeof m.copy === 'number' && typeof m.n === 'number') {
        const copied = base?.slice(m.copy, m.copy + m.n) ?? [];
        if (base && copied.length !== m.n)
          problems.push(`messages ${m.copy + 1}-${m.copy + m.n} of prompt ${String(inner.base)} do not exist`);
        messages.push(...copied);
        continue;
      }
      const role = String(m.role) as ChatMessage['role'];
      if (Array.isArray(m.content)) m.content = this.joinPieces(m.content as unknown[], problems);
      if (typeof m.content === 'string' && typeof m.of === 'number' && typeof m.from === 'number') {
        const was = base?.[m.of];
        if (was && m.from <= was.content.length) messages.push({ role, content: was.content.slice(0, m.from) + m.content });
        else {
          if (base) problems.push(`message ${m.of + 1} of prompt ${String(inner.base)} does not exist`);
          messages.push({ role, content: m.content });
        }
      } else if (typeof m.content === 'string') messages.push({ role, content: m.content });
      else if (typeof m.part === 'string') {
        const text = this.parts.get(m.part);
        if (text === undefined) problems.push(`system prompt part ${m.part} is in no earlier line`);
        else messages.push({ role, content: text });
      }
    }
    delete inner.base;
    inner.messages = messages;
    if (problems.length > 0) inner.problem = problems.join('; ');
    else this.prompts.set(promptHash(messages), messages);
  }

  /** A message's text written in pieces: its own text and stretches of earlier replies. */
  private joinPieces(pieces: unknown[], problems: string[]): string {
    let text = '';
    for (const p of pieces) {
      if (typeof p === 'string') text += p;
      else if (isObj(p) && typeof p.effect === 'string' && typeof p.start === 'number' && typeof p.length === 'number') {
        const reply = this.replies.get(p.effect);
        if (reply !== undefined && p.start >= 0 && p.start + p.length <= reply.length) text += reply.slice(p.start, p.start + p.length);
        else problems.push(`part of a message is the reply of LLM call ${p.effect}, which no earlier line holds`);
      }
    }
    return text;
  }
}

/** One LLM call's prompt, as `sop show --prompts` and the viewer read it. */
export interface RecordedPrompt {
  turn: number;
  purpose: string;
  state: string;
  agent?: string;
  /** Sub-flow path ("Coder-1/extend_library-1") of a call made inside a sub-flow. */
  flow?: string;
  messages: ChatMessage[];
  /** Set when part of the prompt could not be rebuilt (a damaged journal line); `messages` is then incomplete. */
  problem?: string;
  /** The call's `llm_call` event (model, usage, ms, reply, effect), absent when the call did not finish. */
  call?: Extract<RunEvent, { type: 'llm_call' }>;
}

/** The prompts of a run's effective history, in order (sub-flows' included, with their flow). */
export function promptsOf(record: { readonly effective: readonly RunEvent[] }): RecordedPrompt[] {
  const out: RecordedPrompt[] = [];
  record.effective.forEach((e, i) => {
    const { inner, flow } = unwrap(e as unknown as Obj);
    if (inner.type !== 'prompt') return;
    const next = record.effective[i + 1];
    const after = next ? unwrap(next as unknown as Obj) : undefined;
    const call = after?.inner.type === 'llm_call' && after.flow === flow ? (after.inner as unknown as RecordedPrompt['call']) : undefined;
    const p = inner as unknown as PromptEvent & { problem?: string };
    out.push({
      turn: p.turn,
      purpose: p.purpose,
      state: p.state,
      ...(p.agent !== undefined ? { agent: p.agent } : {}),
      ...(flow ? { flow } : {}),
      messages: p.messages,
      ...(p.problem ? { problem: p.problem } : {}),
      ...(call ? { call } : {}),
    });
  });
  return out;
}

/** The prompts as readable text (sop show --prompts). */
export function formatPrompts(prompts: readonly RecordedPrompt[]): string {
  const parts: string[] = [];
  for (const p of prompts) {
    const who = p.agent ? `, agent ${p.agent}` : '';
    const where = p.flow ? ` (sub-flow ${p.flow})` : '';
    let s = `=== turn ${p.turn}: ${p.purpose} call in state "${p.state}"${who}${where}, ${p.messages.length} messages\n`;
    if (p.problem) s += `(incomplete: ${p.problem})\n`;
    for (const m of p.messages) s += `\n--- ${m.role} ---\n${m.content}\n`;
    parts.push(s);
  }
  return parts.join('\n');
}
