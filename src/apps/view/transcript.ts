// The transcript of a run page, built event by event: messages grouped by state visit, each
// with an inspector (the prompt when recorded, the judge and speaker decisions that led to the
// turn, its LLM calls with tokens and latency). The page is rendered from the same builder that
// turns the events a live run appends into HTML pieces sent to the browser.
import type { RunEvent } from '../../core/runtime/events.js';
import type { Message } from '../../core/environment/message.js';
import { agentColour, esc, formatTime, renderContent } from './html.js';
import { promptHtml } from './prompt.js';
import { stepEvent } from '../../features/population/results.js';
import { progressText } from '../../core/runtime/llm-progress.js';

/** A piece for the page: a new visit section, or a message appended to the last one. */
export type Piece =
  | { kind: 'visit'; html: string }
  | { kind: 'message'; html: string }
  | { kind: 'status'; status: string }
  /** How far a local model's call (or a population step's calls) in flight has come; '' once answered. */
  | { kind: 'progress'; text: string };

interface Visit {
  head: string;
  messages: string[];
}

export class TranscriptBuilder {
  private agents: string[] = [];
  /** The output tag of each state's roles ("state\u0000role" -> tag): their messages hold only its text. */
  private outputs = new Map<string, string>();
  private readonly visits: Visit[] = [];
  private readonly visitCounts = new Map<string, number>();
  private pending: unknown[] = [];
  messages = 0;
  /** The last progress of calls still in flight (llm_progress), '' when none. */
  progress = '';

  /** `viewer`: show only the messages this agent may see (their audience includes it), without inspectors (other agents' prompts). */
  constructor(private readonly viewer?: string) {}

  /** The pieces this event adds to the page. */
  add(e: RunEvent | { type: string }): Piece[] {
    const ev = e as RunEvent;
    if (this.progress !== '' && (ev.type === 'message' || ev.type === 'population_step' || ev.type === 'run_finished')) this.progress = '';
    switch (ev.type) {
      case 'llm_progress':
        // a local model thinking: shown under the transcript until its message (or step) comes
        if (this.viewer !== undefined && !ev.population && ev.agent !== undefined && ev.agent !== this.viewer) return [];
        this.progress = progressText(ev);
        return [{ kind: 'progress', text: this.progress }];
      case 'run_started': {
        const doc = ev.document as
          { agents?: Record<string, unknown>; states?: Record<string, { components?: Record<string, { output?: unknown }> }> } | undefined;
        this.agents = doc?.agents ? Object.keys(doc.agents) : [];
        for (const [state, def] of Object.entries(doc?.states ?? {}))
          for (const [role, comps] of Object.entries(def?.components ?? {}))
            if (typeof comps?.output === 'string') this.outputs.set(`${state}\u0000${role}`, comps.output);
        return [];
      }
      case 'state_entered':
        return [this.newVisit(ev.state, `${ev.reason}${ev.from ? ` from ${ev.from}` : ''}, after turn ${ev.turn}`)];
      case 'message': {
        const seen = ev.message.audience;
        if (this.viewer !== undefined && seen !== undefined && ev.message.sender !== this.viewer && !seen.includes(this.viewer)) {
          this.pending = [];
          // audiences: not this agent's to see; where it was is marked, what it said is not
          if (this.visits.length === 0) return [];
          const html = `<p class="hidden-msg">a message ${esc(this.viewer)} may not see (turn ${ev.message.turn})</p>`;
          this.visits[this.visits.length - 1]!.messages.push(html);
          return [{ kind: 'message', html }];
        }
        const pieces: Piece[] = [];
        if (this.visits.length === 0) pieces.push(this.newVisit(ev.message.state, ''));
        const html = this.messageHtml(ev.message, this.pending);
        this.pending = [];
        this.visits[this.visits.length - 1]!.messages.push(html);
        this.messages++;
        pieces.push({ kind: 'message', html });
        return pieces;
      }
      case 'population_step': {
        // the step's own calls (hundreds of agents) belong to it, not to the next message's inspector
        this.pending = [];
        const step = stepEvent(ev);
        if (!step) return [];
        const pieces: Piece[] = [];
        if (this.visits.length === 0) pieces.push(this.newVisit(step.state, ''));
        const done = step.actions.filter((a) => a.ok).length;
        const html =
          `<div class="pop-step" data-step="${step.step}"><b>step ${step.step}</b> <span class="muted">${esc(step.clock)} · turn ${step.turn}</span>` +
          ` · ${step.active} active · ${step.actions.length} action${step.actions.length === 1 ? '' : 's'} (${done} ok)` +
          `${step.surveys?.length ? ` · ${step.surveys.length} survey answers` : ''}</div>`;
        this.visits[this.visits.length - 1]!.messages.push(html);
        pieces.push({ kind: 'message', html });
        return pieces;
      }
      case 'run_finished':
        return [{ kind: 'status', status: ev.status }];
      case 'checkpoint':
      case 'delta':
      case 'file_written':
        return [];
      default:
        this.pending.push(e);
        return [];
    }
  }

  private newVisit(state: string, why: string): Piece {
    const n = (this.visitCounts.get(state) ?? 0) + 1;
    this.visitCounts.set(state, n);
    const head =
      `<h3 class="visit-head">${esc(state)} <span class="muted">visit ${n}${why ? ` · ${esc(why)}` : ''}</span></h3>` +
      `<div class="msgs">`;
    this.visits.push({ head, messages: [] });
    return { kind: 'visit', html: `<section class="visit" data-state="${esc(state)}">${head}</div></section>` };
  }

  html(): string {
    if (this.visits.length === 0) return '<p class="muted" id="no-messages">No messages yet.</p>';
    return this.visits.map((v) => `<section class="visit">${v.head}${v.messages.join('')}</div></section>`).join('');
  }

  private messageHtml(m: Message, before: unknown[]): string {
    const colour = agentColour(m.sender, this.agents);
    return (
      `<article class="msg" id="m${m.id}" data-turn="${m.turn}" style="--agent:${colour}">` +
      `<header><span class="agent">${esc(m.sender)}</span> <span class="muted">${esc(m.role)} · turn ${m.turn}` +
      `${m.kind !== 'speech' ? ` · ${esc(m.kind)}` : ''} · ${esc(formatTime(m.timestamp))}</span>` +
      `${m.to !== undefined ? ` <span class="to">[to ${esc(m.to)}]</span>` : ''}</header>` +
      `<div class="content">${renderContent(m.content, m.kind === 'speech' ? this.outputs.get(`${m.state}\u0000${m.role}`) : undefined)}</div>` +
      (this.viewer === undefined ? `<details class="inspector"><summary>inspect</summary>${inspectorHtml(m, before)}</details>` : '') +
      `</article>`
    );
  }
}

/** What led to a message: its prompt, the decisions before it, the LLM calls of the turn. */
function inspectorHtml(m: Message, before: unknown[]): string {
  const events = before as Array<RunEvent | { type: string }>;
  const decisions: string[] = [];
  const calls: string[] = [];
  const other: string[] = [];
  for (const e of events as RunEvent[]) {
    if (e.type === 'judge')
      decisions.push(
        `judge in <b>${esc(e.state)}</b> after turn ${e.turn}: key ${esc(e.key)} → <b>${esc(e.target)}</b>${e.fallback ? ' (fallback)' : ''}`,
      );
    else if (e.type === 'speaker_chosen')
      decisions.push(`speaker for turn ${e.turn}: <b>${esc(e.agent)}</b> as ${esc(e.role)} (${esc(e.how)})`);
    else if (e.type === 'llm_call') {
      const u = e.usage ?? { promptTokens: 0, completionTokens: 0 };
      calls.push(
        `<tr><td>${esc(e.purpose)}</td><td>${esc(e.agent ?? '')}</td><td>${esc(e.model)}</td>` +
          `<td>${u.promptTokens}</td><td>${u.completionTokens}</td><td>${e.ms} ms</td><td>${e.prompt_chars}</td></tr>`,
      );
    } else if (e.type === 'executor_result') other.push(`${esc(e.command)} (${esc(e.executor)}): ${esc(e.summary)}`);
    else if (e.type === 'command_rejected') other.push(`command rejected: ${esc(e.error)}`);
    else if (e.type === 'summary') other.push(`running summary after ${e.after_messages} messages`);
    else if (e.type === 'warning') other.push(`warning: ${esc(e.message)}`);
  }
  return (
    `<h4>Prompt</h4>${promptHtml(before)}` +
    `<h4>Decisions</h4>${decisions.length ? `<ul class="decisions">${decisions.map((d) => `<li>${d}</li>`).join('')}</ul>` : `<p class="muted">none (turn ${m.turn} needed no choice)</p>`}` +
    `<h4>LLM calls</h4>${
      calls.length
        ? `<table class="calls"><tr><th>purpose</th><th>agent</th><th>model</th><th>prompt tokens</th><th>completion tokens</th><th>latency</th><th>prompt chars</th></tr>${calls.join('')}</table>`
        : '<p class="muted">none (a scripted or human message)</p>'
    }` +
    (other.length ? `<h4>Also</h4><ul>${other.map((o) => `<li>${o}</li>`).join('')}</ul>` : '')
  );
}
