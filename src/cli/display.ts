// What a person sees while a run goes: the messages (streamed on a terminal), a live status
// line on stderr, and a closing line with the run folder and token usage.
import type { RunEvent } from '../runtime/events.js';
import type { Redactor } from '../util/redact.js';

const color = (code: number, s: string, on: boolean) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

export interface DisplayOptions {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  quiet: boolean;
  redact: Redactor;
}

export function terminalDisplay(o: DisplayOptions): (e: RunEvent) => void {
  const tty = Boolean(o.out.isTTY);
  const statusTty = Boolean(o.err.isTTY) && !o.quiet;
  let state = '';
  let speaker = '';
  let turn = 0;
  let tokens = 0;
  let streaming: string | undefined;
  let statusShown = false;
  const clearStatus = () => {
    if (statusShown) { o.err.write('\r\x1b[2K'); statusShown = false; }
  };
  const status = () => {
    if (!statusTty) return;
    clearStatus();
    o.err.write(color(2, `[${state}] turn ${turn} · ${speaker || '…'} · ${tokens} tokens`, true));
    statusShown = true;
  };
  const print = (s: string) => { clearStatus(); o.out.write(o.redact(s)); };
  return (e) => {
    switch (e.type) {
      case 'state_entered':
        state = e.state;
        if (!o.quiet) print(`\n${color(1, `== ${e.state} ==`, tty)}\n`);
        break;
      case 'speaker_chosen':
        speaker = `${e.agent} (${e.role})`;
        turn = e.turn;
        status();
        break;
      case 'delta':
        if (o.quiet || !tty) break;
        if (streaming !== e.agent) {
          print(`\n${color(36, `${speaker}:`, tty)} `);
          streaming = e.agent;
        }
        print(e.text);
        break;
      case 'message': {
        const m = e.message;
        if (!o.quiet) {
          if (streaming === m.sender && tty) print('\n');
          else print(`\n${color(36, `${m.sender} (${m.role}):`, tty)} ${m.content}\n`);
        }
        streaming = undefined;
        status();
        break;
      }
      case 'llm_call':
        tokens += e.usage.promptTokens + e.usage.completionTokens;
        status();
        break;
      case 'summary':
        if (!o.quiet) print(color(2, `\n(summary after ${e.after_messages} messages)\n`, tty));
        break;
      case 'warning':
        clearStatus();
        o.err.write(o.redact(`warning: ${e.message}\n`));
        break;
      case 'run_finished':
        clearStatus();
        break;
      default:
        break;
    }
  };
}
