// The start of a streamed reply, before the terminal shows it: the recorded message drops a
// leading "Name:" (src/core/agent/output.ts) and, where the state lets the role address its message,
// a <to>NAME</to> tag that sets its audience. The display holds the first pieces back until it
// knows both, so the streamed line starts with the same label and audience mark as the message.
import type { AudienceRules } from '../../core/environment/audience.js';

export interface Speaker {
  state: string;
  role: string;
  agent: string;
}

export type StreamStart =
  /** Too little text to tell yet. */
  | { wait: true }
  /** Show nothing until the message: a command's JSON, or an address tag that is not at the start. */
  | { hold: true }
  /** Start the line: the audience mark's name (`to`) and the text after what the message drops. */
  | { to?: string; text: string };

const LEADING_NAME = (name: string) =>
  new RegExp(`^\\s*(?:\\*\\*)?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?:\\*\\*)?\\s*[:：]`, 'u');

/** Whether `s` may still grow into the speaker's "Name:" or "**Name**:". */
function maybeName(s: string, name: string): boolean {
  let t = s;
  if (t === '*') return true;
  if (t.startsWith('**')) t = t.slice(2);
  if (name.startsWith(t)) return true;
  if (!t.startsWith(name)) return false;
  t = t.slice(name.length);
  if (t.startsWith('**')) t = t.slice(2);
  return /^\*?\s*$/.test(t);
}

const OPEN = '<to>';
const CLOSE = '</to>';

/** How the display starts a reply of `who` whose first pieces are `pending`. */
export function streamStart(pending: string, who: Speaker, rules?: AudienceRules): StreamStart {
  let s = pending.trimStart();
  const name = LEADING_NAME(who.agent);
  for (;;) {
    if (name.test(s)) s = s.replace(name, '').trimStart();
    else if (maybeName(s, who.agent)) return { wait: true };
    else break;
  }
  if (s === '') return { wait: true };
  if (s.startsWith('{')) return { hold: true };
  if (!rules?.active) return { text: s };
  const declared = rules.address(who.state, who.role, who.agent, '').to;
  if (!rules.addresses(who.state, who.role)) return { to: declared, text: s };
  if (OPEN.startsWith(s)) return { wait: true };
  if (!s.startsWith(OPEN)) return { hold: true }; // a <to> tag later in the reply may still address it
  const end = s.indexOf(CLOSE);
  if (end === -1) return s.length > 200 ? { hold: true } : { wait: true };
  const tag = s.slice(0, end + CLOSE.length);
  return { to: rules.address(who.state, who.role, who.agent, tag).to, text: s.slice(tag.length).trimStart() };
}
