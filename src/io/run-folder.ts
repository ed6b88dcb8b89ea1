// The run folder: journal.jsonl (every event), transcript.jsonl and transcript.md (messages),
// usage.json (calls and tokens). Files are appended as the run goes, so a killed run keeps
// everything said up to that point; every line passes through the secret redactor.
import { appendFileSync, closeSync, fsyncSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { RunEvent } from '../runtime/events.js';
import { makeRedactor, type Redactor } from '../util/redact.js';

export function newRunId(sopName: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace(/\.\d+Z$/, '').replace('T', '-');
  const slug = sopName.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(0, 40) || 'sop';
  const rand = Math.random().toString(36).slice(2, 6);
  return `${stamp}-${slug}-${rand}`;
}

export class RunFolder {
  readonly dir: string;
  private readonly journal: number;
  private readonly redact: Redactor;

  constructor(outDir: string, readonly runId: string, redact: Redactor = makeRedactor()) {
    this.dir = resolve(outDir, runId);
    mkdirSync(this.dir, { recursive: true });
    this.redact = redact;
    this.journal = openSync(join(this.dir, 'journal.jsonl'), 'a');
    writeFileSync(join(this.dir, 'transcript.jsonl'), '');
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  /** Listener: journal every event (except streamed deltas) and derive the transcripts. */
  readonly onEvent = (event: RunEvent): void => {
    if (event.type === 'delta') return;
    writeSync(this.journal, this.redact(JSON.stringify(event)) + '\n');
    switch (event.type) {
      case 'run_started':
        appendFileSync(this.path('transcript.md'), this.redact(`# ${event.sop}\n\nRun \`${event.run_id}\` of \`${event.file}\`, started ${event.time}, LLM: ${event.llm}, seed ${event.seed}.\n`));
        if (Object.keys(event.inputs).length > 0) {
          appendFileSync(this.path('transcript.md'), this.redact(`\nInputs:\n${Object.entries(event.inputs).map(([k, v]) => `- ${k}: ${v}`).join('\n')}\n`));
        }
        break;
      case 'state_entered':
        appendFileSync(this.path('transcript.md'), `\n## ${event.state}\n`);
        break;
      case 'message': {
        const m = event.message;
        appendFileSync(this.path('transcript.jsonl'), this.redact(JSON.stringify(m)) + '\n');
        appendFileSync(this.path('transcript.md'), this.redact(`\n**${m.sender}** (${m.role}), turn ${m.turn}:\n\n${m.content}\n`));
        fsyncSync(this.journal);
        break;
      }
      case 'summary':
        appendFileSync(this.path('transcript.md'), this.redact(`\n> Summary after ${event.after_messages} messages: ${event.summary.replace(/\n/g, '\n> ')}\n`));
        break;
      case 'run_finished': {
        const u = event.usage;
        writeFileSync(this.path('usage.json'), JSON.stringify(u, null, 2) + '\n');
        const end = event.status === 'finished' ? `Finished in state "${event.final_state}"` : `Stopped: ${event.status}${event.error ? ` (${event.error})` : ''}`;
        appendFileSync(this.path('transcript.md'), this.redact(`\n---\n\n${end} after ${event.turns} turns. LLM calls: ${u.calls}, prompt tokens: ${u.prompt_tokens}, completion tokens: ${u.completion_tokens}.\n`));
        fsyncSync(this.journal);
        break;
      }
      default:
        break;
    }
  };

  close(): void {
    closeSync(this.journal);
  }
}
