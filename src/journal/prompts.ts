// The prompts of a run, kept compactly in its journal. Each LLM call's `prompt` event (the
// messages it was sent, secrets redacted) is written as a delta against an earlier prompt:
//
//   {"type":"prompt_part","hash":H,"text":"..."}            a system prompt, the first time it is seen
//   {"type":"prompt",purpose,state,agent,turn,"base":B,"same":N,"messages":[...]}
//
// `base` is the hash of an earlier prompt (the same agent's last call, or the last call of the
// same purpose in the same state, whichever shares more leading messages), `same` the number of
// its leading messages this prompt repeats; `messages` holds the rest, each system message as
// {"role":"system","part":H}. A prompt with no useful base is written whole (no base, no same).
// Bases are named by the hash of their messages, not by position, so the first call after a
// resume (a new writer, which knows no earlier prompt) is simply written whole, and a reader
// decodes in file order whatever attempt a line belongs to. A prompt whose base or part is not
// in the journal (a damaged line) is read with what it has and a `problem`, never thrown.
import { createHash } from 'node:crypto';
import type { ChatMessage } from '../llm/types.js';
import type { RunEvent } from '../runtime/events.js';

export type PromptEvent = Extract<RunEvent, { type: 'prompt' }>;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The hash naming a prompt or a system prompt part. */
export function promptHash(value: string | readonly ChatMessage[]): string {
  const text = typeof value === 'string' ? 'part\u0000' + value : JSON.stringify(value.map((m) => [m.role, m.content]));
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

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
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  // Never split a surrogate pair.
  if (i > 0 && i < b.length && /[\ud800-\udbff]/.test(b[i - 1]!)) i--;
  return i;
}

interface Base {
  hash: string;
  messages: ChatMessage[];
}

/**
 * `messages` as entries against `base`: {copy: j, n: k} for k of its messages from index j on,
 * {role, of: j, from: n, content} for a (non-system) message that repeats the first n characters
 * of its message j and goes on with `content`, else the message itself.
 */
function deltaOps(messages: readonly ChatMessage[], base: readonly ChatMessage[] | undefined): Obj[] {
  const ops: Obj[] = [];
  const at = new Map<string, number[]>();
  base?.forEach((m, j) => {
    const k = `${m.role}\u0000${m.content}`;
    at.set(k, [...(at.get(k) ?? []), j]);
  });
  let next = 0; // the base message after the last one copied
  messages.forEach((m, i) => {
    const found = at.get(`${m.role}\u0000${m.content}`);
    if (found) {
      const j = found.includes(next) ? next : found[0]!;
      const last = ops[ops.length - 1];
      if (last && typeof last.copy === 'number' && typeof last.n === 'number' && last.copy + last.n === j) last.n++;
      else ops.push({ copy: j, n: 1 });
      next = j + 1;
      return;
    }
    // System prompts are stored whole, once each (prompt_part lines); other messages may continue one of the base's.
    for (const j of m.role === 'system' ? [] : new Set([next, i])) {
      const was = base?.[j];
      if (!was || was.role !== m.role) continue;
      const from = commonPrefix(was.content, m.content);
      if (from >= MIN_SHARED_PREFIX) {
        ops.push({ role: m.role, of: j, from, content: m.content.slice(from) });
        next = j + 1;
        return;
      }
    }
    ops.push({ role: m.role, content: m.content });
  });
  return ops;
}

/** A line of the journal: an object, written as JSON. */
export type JournalLine = Obj;

/** The writer's side: a `prompt` event (possibly inside `subflow`s) as its journal lines. */
export class PromptEncoder {
  private readonly parts = new Set<string>();
  private readonly last = new Map<string, Base>();

  constructor(private readonly redact: (text: string) => string = (t) => t) {}

  /** The lines for `event` when it is a prompt, else undefined. */
  encode(event: RunEvent): JournalLine[] | undefined {
    const { inner, flow } = unwrap(event as unknown as Obj);
    if (inner.type !== 'prompt' || !Array.isArray(inner.messages)) return undefined;
    // As a reader will see them (the journal line is redacted as a whole too).
    const messages = (inner.messages as ChatMessage[]).map((m) => ({ role: m.role, content: this.redact(m.content) }));
    const lines: JournalLine[] = [];
    const keys = baseKeys(flow, inner);
    // The base that makes the shortest line (or none).
    let best: { ops: Obj[]; base?: Base; size: number } | undefined;
    for (const base of [undefined, ...keys.map((k) => this.last.get(k))]) {
      const ops = deltaOps(messages, base?.messages);
      const size = JSON.stringify(ops).length;
      if (!best || size < best.size) best = { ops, base, size };
    }
    const ops = best!.ops.map((m): Obj => {
      if (m.role !== 'system' || typeof m.content !== 'string') return m;
      const hash = promptHash(m.content);
      if (!this.parts.has(hash)) {
        this.parts.add(hash);
        lines.push({ type: 'prompt_part', hash, text: m.content });
      }
      return { role: 'system', part: hash };
    });
    const encoded: Obj = { ...inner };
    delete encoded.messages;
    if (best!.base) encoded.base = best!.base.hash;
    encoded.messages = ops;
    lines.push(rewrap(event as unknown as Obj, encoded));
    const entry = { hash: promptHash(messages), messages };
    for (const k of keys) this.last.set(k, entry);
    return lines;
  }
}

/** The reader's side: takes `prompt_part` lines (returns true: not an event) and puts prompts back whole. */
export class PromptDecoder {
  private readonly parts = new Map<string, string>();
  private readonly prompts = new Map<string, ChatMessage[]>();

  /** True when the line is a `prompt_part` (kept here, not an event of the run). */
  part(value: Obj): boolean {
    if (value.type !== 'prompt_part') return false;
    if (typeof value.hash === 'string' && typeof value.text === 'string') this.parts.set(value.hash, value.text);
    return true;
  }

  /** Decodes a `prompt` line in place; what cannot be rebuilt is said in its `problem`. */
  read(value: Obj): void {
    const { inner } = unwrap(value);
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
}

/** The prompts of a run's effective history, in order (sub-flows' included, with their flow). */
export function promptsOf(record: { readonly effective: readonly RunEvent[] }): RecordedPrompt[] {
  const out: RecordedPrompt[] = [];
  for (const e of record.effective) {
    const { inner, flow } = unwrap(e as unknown as Obj);
    if (inner.type !== 'prompt') continue;
    const p = inner as unknown as PromptEvent & { problem?: string };
    out.push({
      turn: p.turn,
      purpose: p.purpose,
      state: p.state,
      ...(p.agent !== undefined ? { agent: p.agent } : {}),
      ...(flow ? { flow } : {}),
      messages: p.messages,
      ...(p.problem ? { problem: p.problem } : {}),
    });
  }
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
