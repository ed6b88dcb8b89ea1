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
import type { ChatMessage } from '../../core/llm/types.js';
import type { RunEvent } from '../../core/runtime/events.js';
import { SHARED_TEXT_MIN } from './shared-text.js';
import { Base, deltaOps, promptHash, wholeSize } from './prompt-delta.js';
import { MIN_REPLY_REF, replyPieces, type Reply } from './prompt-replies.js';
import { isObj, rewrap, unwrap, type Obj } from './subflow-wrap.js';

/** The delta bases a call may use: the same agent's last call, and the same purpose's in the same state. */
function baseKeys(flow: string, p: Obj): string[] {
  const keys = [`${flow}\u0000${String(p.purpose)}\u0000state\u0000${String(p.state)}`];
  if (typeof p.agent === 'string') keys.unshift(`${flow}\u0000agent\u0000${p.agent}`);
  return keys;
}

/** A line of the journal: an object, written as JSON. */
export type JournalLine = Obj;

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
    const { inner, flow } = unwrap(event);
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
    const ops = best.ops.map((m): Obj => {
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
    if (best.base) {
      encoded.base = best.base.hash;
      cur.copiedFrom(best.base, best.copied!);
    }
    encoded.messages = ops;
    lines.push(rewrap(event, encoded));
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
