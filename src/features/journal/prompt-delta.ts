// A prompt written against an earlier one (its base), for the journal's prompt lines
// (src/features/journal/prompts.ts): runs of copied messages, messages that continue one of the base's,
// and the length as JSON of either way of writing it, worked out without serialising again.
import { hash as digest } from 'node:crypto';
import type { ChatMessage } from '../../core/llm/types.js';
import type { Obj } from './subflow-wrap.js';

/** The hash naming a prompt or a system prompt part. */
export function promptHash(value: string | readonly ChatMessage[]): string {
  return hashText(typeof value === 'string' ? 'part\u0000' + value : JSON.stringify(value.map((m) => [m.role, m.content])));
}

/** The first 16 hex digits of the text's SHA-256. */
export const hashText = (text: string): string => digest('sha256', text, 'hex').slice(0, 16);

/** A message as it is in the JSON a prompt's hash is taken of (`["role","content"]`). */
const messageJson = (m: ChatMessage): string => JSON.stringify([m.role, m.content]);

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
export class Base {
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
export function wholeSize(cur: Base, above: number): number {
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
export function deltaOps(cur: Base, base: Base | undefined): { ops: Obj[]; size: number; copied: number[] } {
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
