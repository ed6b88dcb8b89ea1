// The prompts behind a message, for the inspector: the journal keeps every LLM call's messages
// (src/features/journal/prompts.ts; the reader gives them back whole as `prompt` events). Runs made
// before prompts were recorded have none, and the inspector says so.
import { esc } from './html.js';

interface PromptLike {
  type: string;
  purpose?: unknown;
  agent?: unknown;
  state?: unknown;
  messages?: unknown;
  problem?: unknown;
}

/** The HTML of the prompts recorded among the events that led to a message (agent, judge, speaker, summary calls), or a note that there are none. */
export function promptHtml(events: readonly unknown[]): string {
  const prompts = events.filter((e): e is PromptLike => typeof e === 'object' && e !== null && (e as PromptLike).type === 'prompt');
  if (prompts.length === 0) return '<p class="muted">prompts not recorded in this run</p>';
  return prompts
    .map((p) => {
      const who = typeof p.agent === 'string' ? ` of ${esc(p.agent)}` : '';
      const where = typeof p.state === 'string' ? ` in ${esc(p.state)}` : '';
      const head = `<h5>${esc(String(p.purpose ?? 'LLM'))} call${who}${where}</h5>`;
      const problem = typeof p.problem === 'string' ? `<p class="muted">incomplete: ${esc(p.problem)}</p>` : '';
      const messages = Array.isArray(p.messages) ? p.messages : [];
      const body = messages
        .map((m: unknown) => {
          const o = (typeof m === 'object' && m !== null ? m : {}) as { role?: unknown; content?: unknown };
          return `<div class="prompt-msg"><b>${esc(String(o.role ?? '?'))}</b><pre>${esc(String(o.content ?? ''))}</pre></div>`;
        })
        .join('');
      return `<div class="prompt">${head}${problem}${body}</div>`;
    })
    .join('');
}
