// The prompt an agent saw, for the inspector. Runs that record their prompts journal them as
// events of type "prompt"; older runs do not, and the inspector says so.
import { esc } from './html.js';

interface PromptLike {
  type: string;
  agent?: unknown;
  turn?: unknown;
  messages?: unknown;
  text?: unknown;
}

/** The HTML of the prompt(s) recorded among the events that led to a message, or a note that there are none. */
export function promptHtml(events: readonly unknown[]): string {
  const prompts = events.filter((e): e is PromptLike => typeof e === 'object' && e !== null && (e as PromptLike).type === 'prompt');
  if (prompts.length === 0) return '<p class="muted">prompts not recorded in this run</p>';
  return prompts
    .map((p) => {
      if (Array.isArray(p.messages)) {
        return p.messages
          .map((m: unknown) => {
            const o = (typeof m === 'object' && m !== null ? m : {}) as { role?: unknown; content?: unknown };
            return `<div class="prompt-msg"><b>${esc(String(o.role ?? '?'))}</b><pre>${esc(String(o.content ?? ''))}</pre></div>`;
          })
          .join('');
      }
      return `<pre>${esc(typeof p.text === 'string' ? p.text : JSON.stringify(p, null, 2))}</pre>`;
    })
    .join('');
}
