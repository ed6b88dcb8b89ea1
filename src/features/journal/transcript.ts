// Transcripts derived from journal events: transcript.md (for people) and transcript.jsonl
// (one message per line). The run folder appends these pieces as the run goes; `sop show` and
// `sop resume` render them from the journal's effective history, so they always agree.
import type { RunEvent } from '../../core/runtime/events.js';
import { count } from '../../shared/util/plural.js';

/** The Markdown piece an event adds to transcript.md ('' for events that add nothing). */
export function markdownPiece(event: RunEvent): string {
  switch (event.type) {
    case 'run_started': {
      let s = `# ${event.sop}\n\nRun \`${event.run_id}\` of \`${event.file}\`, started ${event.time}, LLM: ${event.llm}, seed ${event.seed}.\n`;
      if (event.forked_from)
        s +=
          `\nForked from run \`${event.forked_from.run_id}\` at turn ${event.forked_from.turn}` +
          (event.forked_from.llm && event.forked_from.llm !== event.llm ? ` (turns up to there: LLM ${event.forked_from.llm})` : '') +
          '.\n';
      if (Object.keys(event.inputs).length > 0) {
        s += `\nInputs:\n${Object.entries(event.inputs)
          .map(([k, v]) => `- ${k}: ${v}`)
          .join('\n')}\n`;
      }
      return s;
    }
    case 'state_entered':
      return `\n## ${event.state}\n`;
    case 'message': {
      const m = event.message;
      const to = m.to !== undefined ? ` [to ${m.to}]` : ''; // audiences: a message not for everyone
      return `\n**${m.sender}** (${m.role}), turn ${m.turn}${to}:\n\n${m.content}\n`;
    }
    case 'summary':
      return `\n> Summary${event.audience ? ` [for ${event.audience.join(', ')}]` : ''} after ${event.after_messages} messages: ${event.summary.replace(/\n/g, '\n> ')}\n`;
    case 'run_finished': {
      const u = event.usage;
      const end =
        event.status === 'finished'
          ? `Finished in state "${event.final_state}"`
          : `Stopped: ${event.status}${event.error ? ` (${event.error})` : ''}`;
      return (
        `\n---\n\n${end} after ${count(event.turns, 'turn')}. LLM calls: ${u.calls}, prompt tokens: ${u.prompt_tokens}, completion tokens: ${u.completion_tokens}.\n` +
        (event.result !== undefined ? `\nResult: ${event.result}\n` : '')
      );
    }
    case 'subflow': {
      // actions: a sub-flow's states and messages, nested under the command that ran it
      const inner = event.event;
      if (inner.type === 'state_entered') return `\n### ${event.flow}: ${inner.state}\n`;
      if (inner.type === 'message') {
        const m = inner.message;
        return `\n**${m.sender}** (${m.role}) in ${event.flow}, turn ${m.turn}:\n\n${m.content}\n`;
      }
      if (inner.type === 'run_finished') return `\n*${event.flow} ended (${inner.status}) after ${count(inner.turns, 'turn')}.*\n`;
      return '';
    }
    default:
      return '';
  }
}

/** The line an event adds to transcript.jsonl ('' for events that are not messages). */
export function jsonlPiece(event: RunEvent): string {
  return event.type === 'message' ? JSON.stringify(event.message) + '\n' : '';
}

export interface Transcript {
  markdown: string;
  jsonl: string;
}

export function renderTranscript(events: Iterable<RunEvent>): Transcript {
  let markdown = '';
  let jsonl = '';
  for (const e of events) {
    markdown += markdownPiece(e);
    jsonl += jsonlPiece(e);
  }
  return { markdown, jsonl };
}
