// A long text is journaled once. An agent's message is (a part of) the reply of the LLM call
// journaled just before it, and that `llm_call` line must keep the whole reply (a resume reuses
// it when a kill fell between the two). So a `message` (or `command_rejected`, `summary`) whose
// text is at least SHARED_TEXT_MIN characters and lies inside a recent reply is written with
// null for its text and `text_of: {effect, start, length}` beside it; reading the journal puts
// the text back. Shorter texts are written as they are, so a journal stays readable by eye.
import type { RunEvent } from '../../core/runtime/events.js';
import type { Redactor } from '../../shared/util/redact.js';
import { EngineError } from '../../shared/errors.js';
import { stringifyReusing } from '../../shared/util/json.js';

export const SHARED_TEXT_MIN = 4096;

/** Where the text of a reply-derived event was: the reply of LLM call `effect`, from `start`. */
export interface TextRef {
  effect: string;
  start: number;
  length: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The event itself, or the one a `subflow` event wraps (at any depth). */
function innermost(e: Obj): Obj {
  let cur = e;
  for (let d = 0; d < 32 && cur.type === 'subflow' && isObj(cur.event); d++) cur = cur.event;
  return cur;
}

function getText(e: Obj): string | undefined {
  const v =
    e.type === 'message'
      ? isObj(e.message)
        ? e.message.content
        : undefined
      : e.type === 'command_rejected'
        ? e.reply
        : e.type === 'summary'
          ? e.summary
          : undefined;
  return typeof v === 'string' ? v : undefined;
}

/** Sets the text in place (null: written elsewhere), so the event's keys keep their order. */
function setText(e: Obj, text: string | null): void {
  if (e.type === 'message' && isObj(e.message)) e.message.content = text;
  else if (e.type === 'command_rejected') e.reply = text;
  else if (e.type === 'summary') e.summary = text;
}

/** A copy of `e` down to its innermost event (the only part changed). */
function copyPath(e: Obj): { top: Obj; inner: Obj } {
  const top: Obj = { ...e };
  let cur = top;
  for (let d = 0; d < 32 && cur.type === 'subflow' && isObj(cur.event); d++) {
    const next: Obj = { ...cur.event };
    cur.event = next;
    cur = next;
  }
  if (cur.type === 'message' && isObj(cur.message)) cur.message = { ...cur.message };
  return { top, inner: cur };
}

/** Told of each long reply as the journal holds it (the prompt encoder refers to them too). */
export interface ReplyListener {
  noteReply(effect: string, text: string): void;
}

/**
 * The journal writer's side: each event as its journal line (redacted), long texts found in
 * one of the last few LLM replies written by reference.
 */
export class SharedTextWriter {
  /** Recent long replies as a reader will see them (redacted), newest last. */
  private readonly recent: Array<{ effect: string; reply: string }> = [];

  constructor(private readonly redact: Redactor = (t) => t) {}

  line(event: RunEvent, also?: ReplyListener): string {
    const e = event as unknown as Obj;
    const inner = innermost(e);
    if (
      inner.type === 'llm_call' &&
      typeof inner.effect === 'string' &&
      typeof inner.reply === 'string' &&
      inner.reply.length >= SHARED_TEXT_MIN
    ) {
      // The event is serialised once; the reply is read back from the line only when redaction
      // changed it, so references into it read back right.
      const json = JSON.stringify(event);
      const line = this.redact(json);
      const written = line === json ? inner.reply : replyOf(line);
      if (written !== undefined) {
        this.recent.push({ effect: inner.effect, reply: written });
        if (this.recent.length > 4) this.recent.shift();
        also?.noteReply(inner.effect, written);
      }
      return line;
    }
    const text = getText(inner);
    if (text !== undefined && text.length >= SHARED_TEXT_MIN && this.recent.length > 0) {
      let asRead: string;
      try {
        asRead = JSON.parse(this.redact(JSON.stringify(text))) as string;
      } catch {
        return this.redact(JSON.stringify(event));
      }
      for (let i = this.recent.length - 1; i >= 0; i--) {
        const r = this.recent[i]!;
        const start = r.reply.indexOf(asRead);
        if (start < 0) continue;
        const { top, inner: copy } = copyPath(e);
        setText(copy, null);
        copy.text_of = { effect: r.effect, start, length: asRead.length } satisfies TextRef;
        return this.redact(JSON.stringify(top));
      }
    }
    // a checkpoint's snapshot was serialised once already, when the run copied it (src/core/runtime/snapshot.ts)
    return this.redact(e.type === 'checkpoint' ? stringifyReusing(e) : JSON.stringify(event));
  }
}

/** The reply of a (redacted) llm_call line, as a reader will see it; undefined if redaction broke the line. */
function replyOf(line: string): string | undefined {
  try {
    const reply = innermost(JSON.parse(line) as Obj).reply;
    return typeof reply === 'string' ? reply : undefined;
  } catch {
    return undefined; // not referred to, then
  }
}

/** The reader's side: events in journal order; puts referenced texts back. Throws a message on a dangling reference. */
export class SharedTextReader {
  private readonly replies = new Map<string, string>();

  read(value: Obj): Obj {
    const inner = innermost(value);
    if (inner.type === 'llm_call' && typeof inner.effect === 'string' && typeof inner.reply === 'string') {
      if (inner.reply.length >= SHARED_TEXT_MIN) this.replies.set(inner.effect, inner.reply);
      return value;
    }
    const ref = inner.text_of;
    if (ref === undefined) return value;
    if (!isObj(ref) || typeof ref.effect !== 'string' || typeof ref.start !== 'number' || typeof ref.length !== 'number') {
      throw new EngineError('"text_of" is not {effect, start, length}', 'JOURNAL');
    }
    const reply = this.replies.get(ref.effect);
    if (reply === undefined || ref.start < 0 || ref.start + ref.length > reply.length) {
      throw new EngineError(`its text is the reply of LLM call ${ref.effect}, which no earlier line holds`, 'JOURNAL');
    }
    delete inner.text_of;
    setText(inner, reply.slice(ref.start, ref.start + ref.length));
    return value;
  }
}
