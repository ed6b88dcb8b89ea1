// Long earlier replies inside later prompts (the conversation shown again), written in a prompt
// line by reference to the reply's `llm_call` line: {effect, start, length}.
import type { Obj } from './subflow-wrap.js';

/** A long earlier reply, as the journal holds it. */
export interface Reply {
  effect: string;
  text: string;
}

/** Stretches of a reply at least this long inside a prompt's message are written by reference. */
export const MIN_REPLY_REF = 1024;

/**
 * `content` as pieces: its own text, and {effect, start, length} for stretches of one of `replies`
 * (an agent's long reply, shown again in later prompts). Undefined when nothing is shared.
 */
export function replyPieces(content: string, replies: readonly Reply[]): Array<string | Obj> | undefined {
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
