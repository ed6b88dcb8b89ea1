// What a person sees while a run goes: the messages (streamed on a terminal), a live status
// line on stderr, and a closing line with the run folder and token usage.
import type { RunEvent } from '../runtime/events.js';
import type { Redactor } from '../util/redact.js';
import { StreamRedactor } from '../util/stream-redactor.js';
import { terminalSafe as safe } from '../util/terminal-text.js';
import { describeCommand, parseCommandMessage, summariseResult } from './command-summary.js';

const color = (code: number, s: string, on: boolean) => (on ? `\x1b[${code}m${s}\x1b[0m` : s);

export interface DisplayOptions {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  quiet: boolean;
  redact: Redactor;
}

/** A message as shown: a command briefly (`▸ run_code python, 12 lines`), a command's result on one line, speech as it is. */
function readable(m: { kind: string; content: string }): string {
  if (m.kind === 'action') return summariseResult(m.content);
  const cmd = m.kind === 'speech' ? parseCommandMessage(m.content) : undefined;
  return cmd ? describeCommand(cmd) : m.content;
}

export function terminalDisplay(o: DisplayOptions): (e: RunEvent) => void {
  const tty = Boolean(o.out.isTTY);
  const statusTty = Boolean(o.err.isTTY) && !o.quiet;
  let state = '';
  let speaker = '';
  let turn = 0;
  let tokens = 0;
  let streaming: string | undefined;
  // A streamed reply that starts with "{" is held back (likely a command) and shown readably with its message.
  let pending = '';
  let holding: boolean | undefined;
  let held = new StreamRedactor(o.redact); // a secret split across deltas is held back whole
  let statusShown = false;
  const clearStatus = () => {
    if (statusShown) {
      o.err.write('\r\x1b[2K');
      statusShown = false;
    }
  };
  const status = () => {
    if (!statusTty) return;
    clearStatus();
    o.err.write(color(2, `[${state}] turn ${turn} · ${speaker || '…'} · ${tokens} tokens`, true));
    statusShown = true;
  };
  const print = (s: string) => {
    clearStatus();
    o.out.write(o.redact(s));
  };
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
          streaming = e.agent;
          pending = '';
          holding = undefined;
          held = new StreamRedactor(o.redact);
        }
        {
          const text = held.push(e.text);
          if (holding === undefined) {
            pending += text;
            if (pending.trim() === '') break;
            holding = pending.trimStart().startsWith('{');
            if (!holding) print(`\n${color(36, `${speaker}:`, tty)} ${safe(pending)}`);
          } else if (!holding) {
            print(safe(text));
          }
        }
        break;
      case 'message': {
        const m = e.message;
        if (!o.quiet) {
          if (streaming === m.sender && tty && holding === false) print(`${safe(held.flush())}\n`);
          else print(`\n${color(36, `${m.sender} (${m.role}):`, tty)} ${safe(readable(m))}\n`);
        }
        streaming = undefined;
        holding = undefined;
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
        // A retried stream starts its reply again on a line of its own (the torn text is discarded).
        if (streaming !== undefined && tty && !o.quiet) print('\n');
        streaming = undefined;
        clearStatus();
        o.err.write(o.redact(`warning: ${safe(e.message)}\n`));
        break;
      case 'run_finished':
        clearStatus();
        break;
      // actions: rejected command replies, and what sub-flows say (prefixed with their path)
      case 'command_rejected':
        clearStatus();
        o.err.write(
          o.redact(
            color(2, `(${e.agent}'s reply was not a valid command, attempt ${e.attempt}: ${safe(e.error)})\n`, Boolean(o.err.isTTY)),
          ),
        );
        break;
      case 'subflow': {
        const inner = e.event;
        if (inner.type === 'warning') {
          clearStatus();
          o.err.write(o.redact(`warning: [${e.flow}] ${safe(inner.message)}\n`));
          break;
        }
        if (o.quiet) break;
        if (inner.type === 'state_entered') print(`\n${color(1, `== ${e.flow}: ${inner.state} ==`, tty)}\n`);
        else if (inner.type === 'message')
          print(`\n${color(36, `[${e.flow}] ${inner.message.sender} (${inner.message.role}):`, tty)} ${safe(readable(inner.message))}\n`);
        else if (inner.type === 'llm_call') {
          tokens += inner.usage.promptTokens + inner.usage.completionTokens;
          status();
        }
        break;
      }
      default:
        break;
    }
  };
}
