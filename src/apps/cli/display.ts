// What a person sees while a run goes: the messages (streamed on a terminal), a live status
// line on stderr, and a closing line with the run folder and token usage. A message not for
// everyone is marked with whom it is for (`[to wolves]`), as in transcript.md, streamed or not: a
// streamed reply starts once its audience is known (src/apps/cli/stream-start.ts). A person who plays an
// agent at this terminal (`player`) sees only the messages that agent may see (its audience),
// each marked with whom it was for, and nothing streamed.
import { batchLine, populationStepLine } from './population-line.js';
import { progressText } from '../../core/runtime/llm-progress.js';
import type { RunEvent } from '../../core/runtime/events.js';
import { canSee, type AudienceRules } from '../../core/environment/audience.js';
import type { Message } from '../../core/environment/message.js';
import type { Redactor } from '../../shared/util/redact.js';
import { StreamRedactor } from '../../shared/util/stream-redactor.js';
import { terminalSafe as safe } from '../../shared/util/terminal-text.js';
import { agentColour, colourWanted, paint } from './agent-colour.js';
import { describeCommand, parseCommandMessage, summariseResult } from './command-summary.js';
import { labelTags, TagLabeller } from './tag-labels.js';
import { TerminalScreen } from './terminal-screen.js';
import { streamStart, type Speaker } from './stream-start.js';
import { cliMessage } from './errors.js';

export interface DisplayOptions {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  quiet: boolean;
  redact: Redactor;
  /** Where NO_COLOR is read; process.env by default. */
  env?: NodeJS.ProcessEnv;
  /** The agents played by the person at this terminal: only what they may all see is shown. */
  player?: readonly string[];
  /** The SOP's audience rules: streamed replies are marked with their audience. */
  audiences?: AudienceRules;
}

/** The audience mark of a message: `[to Bo]`, and for a message not for everyone, who may see it. */
export function audienceMark(m: Pick<Message, 'to' | 'audience'>, player?: readonly string[]): string {
  if (m.to === undefined) return '';
  const who = m.audience && player ? m.audience.map((a) => (player.includes(a) ? `${a} (you)` : a)).join(', ') : undefined;
  return who ? ` [to ${m.to}: ${who}]` : ` [to ${m.to}]`;
}

/** A message as shown: a command briefly (`▸ run_code python, 12 lines`), a command's result on one line, speech as it is. */
function readable(m: { kind: string; content: string }): string {
  if (m.kind === 'action') return summariseResult(m.content);
  const cmd = m.kind === 'speech' ? parseCommandMessage(m.content) : undefined;
  return cmd ? describeCommand(cmd) : m.content;
}

export function terminalDisplay(o: DisplayOptions): (e: RunEvent) => void {
  const tty = Boolean(o.out.isTTY);
  const colour = colourWanted(o.out, o.env);
  const errColour = colourWanted(o.err, o.env);
  const statusLine = Boolean(o.err.isTTY) && !o.quiet;
  const screen = new TerminalScreen(o.out, o.err, { status: statusLine, escapes: errColour });
  let state = '';
  let speaker = '';
  let speaking: Speaker | undefined;
  /** The audience mark the streamed reply's line started with. */
  let streamedMark = '';
  let turn = 0;
  let tokens = 0;
  /** How far the local model's call in flight has come (llm_progress), until it is answered. */
  let thinking = '';
  /** It is a population step's, which ends with the step (not with one of its calls). */
  let stepThinking = false;
  let streaming: string | undefined;
  // A streamed reply that starts with "{" is held back (likely a command) and shown readably with its message.
  let pending = '';
  let holding: boolean | undefined;
  let held = new StreamRedactor(o.redact); // a secret split across deltas is held back whole
  const tagLabel = (name: string) => `${paint(1, `${name}:`, colour)} `;
  let tags = new TagLabeller(tagLabel); // `<verdict>` streamed is shown as `verdict: `
  // what agents say reads with its tags as labels; command results (code output) are left as they are
  const shown = (m: { kind: string; content: string }) =>
    m.kind === 'action' ? safe(readable(m)) : labelTags(safe(readable(m)), tagLabel);
  const who = (agent: string, label: string) => paint(agentColour(agent), label, colour);
  const player = o.player && o.player.length > 0 ? o.player : undefined;
  /** Whether the person at the terminal may see `m` (no player: everything). */
  const visible = (m: Message) => player === undefined || canSee(player, m, 0);
  const clearStatus = () => screen.clearStatus();
  const status = () =>
    screen.status(o.redact(safe(`[${state}] turn ${turn} · ${speaker || '…'} · ${tokens} tokens${thinking ? ` · ${thinking}` : ''}`)));
  const print = (s: string) => screen.write(o.redact(s));
  const note = (s: string) => screen.note(o.redact(s));
  return (e) => {
    switch (e.type) {
      case 'state_entered':
        state = e.state;
        if (!o.quiet) print(`\n${paint(1, `== ${safe(e.state)} ==`, colour)}\n`);
        break;
      case 'speaker_chosen':
        speaker = `${e.agent} (${e.role})`;
        speaking = { state: e.state, role: e.role, agent: e.agent };
        turn = e.turn;
        status();
        break;
      case 'delta':
        if (o.quiet || !tty || player) break;
        if (streaming !== e.agent) {
          streaming = e.agent;
          pending = '';
          holding = undefined;
          held = new StreamRedactor(o.redact);
          tags = new TagLabeller(tagLabel);
        }
        {
          const text = held.push(e.text);
          if (holding === undefined) {
            pending += text;
            const start = streamStart(pending, speaking?.agent === e.agent ? speaking : { state, role: '', agent: e.agent }, o.audiences);
            if ('wait' in start) break;
            holding = 'hold' in start;
            if ('text' in start) {
              streamedMark = start.to === undefined ? '' : safe(audienceMark({ to: start.to }));
              print(`\n${who(e.agent, `${speaker}${streamedMark}:`)} ${tags.push(safe(start.text))}`);
            }
          } else if (!holding) {
            print(tags.push(safe(text)));
          }
        }
        break;
      case 'message': {
        const m = e.message;
        if (!o.quiet && visible(m)) {
          if (streaming === m.sender && tty && holding === false) {
            const mark = safe(audienceMark(m, player));
            // the mark the line started with, or the message's own when it turned out otherwise
            print(`${tags.push(safe(held.flush()))}${tags.flush()}${mark === streamedMark ? '' : who(m.sender, mark)}\n`);
          } else print(`\n${who(m.sender, `${m.sender} (${m.role})${safe(audienceMark(m, player))}:`)} ${shown(m)}\n`);
        }
        streaming = undefined;
        holding = undefined;
        status();
        break;
      }
      case 'llm_call':
      case 'embedding_call':
        tokens += e.usage.promptTokens + e.usage.completionTokens;
        if (e.type === 'llm_call' && !stepThinking) thinking = '';
        status();
        break;
      case 'llm_progress':
        // a local model thinking: on the status line on a terminal, else a line every 5 s
        if (o.quiet) break;
        thinking = progressText(e);
        stepThinking = e.population === true;
        if (statusLine) status();
        else note(paint(2, `(${safe(thinking)})\n`, errColour));
        break;
      case 'summary':
        // one line per viewer group, saying for whom (not for the player's eyes when it is not theirs)
        if (o.quiet || (player && e.audience && !player.every((p) => e.audience!.includes(p)))) break;
        print(
          paint(2, `\n(summary${e.audience ? ` for ${safe(e.audience.join(', '))}` : ''} after ${e.after_messages} messages)\n`, colour),
        );
        break;
      // population states: one line a step
      case 'population_started':
        if (!o.quiet) print(paint(2, `${e.agents} agents in a ${safe(e.world)} world\n`, colour));
        break;
      case 'population_step':
        thinking = '';
        stepThinking = false;
        if (!o.quiet) print(`${safe(populationStepLine(e))}\n`);
        break;
      case 'concurrency':
        // the adaptive limit of calls at once to a server (rare: decreases, slow start, an increase a second at most)
        if (!o.quiet)
          note(paint(2, `(${e.limit} LLM calls at once to ${safe(e.endpoint)}, was ${e.previous}: ${safe(e.reason)})\n`, errColour));
        break;
      // batch mode: the batch's progress; the command that answers a vllm batch is shown even with --quiet
      case 'batch':
        if (e.command) note(`Run this to answer the batch (sop waits for its output file):\n  ${safe(e.command)}\n`);
        if (!o.quiet) print(paint(2, `${safe(batchLine(e))}\n`, colour));
        break;
      case 'warning':
        // A retried stream starts its reply again on a line of its own (the torn text is discarded).
        if (streaming !== undefined && tty && !o.quiet) print('\n');
        streaming = undefined;
        note(`warning: ${safe(cliMessage(e.message))}\n`);
        break;
      case 'run_finished':
      case 'effect_started': // code, a question, a sub-flow: what it asks starts on a clean row
        clearStatus();
        break;
      // actions: rejected command replies, and what sub-flows say (prefixed with their path)
      case 'command_rejected':
        if (player && !player.includes(e.agent)) break; // what another agent tried to say is not the player's
        note(paint(2, `(${e.agent}'s reply was not a valid command, attempt ${e.attempt}: ${safe(e.error)})\n`, errColour));
        break;
      case 'subflow': {
        const inner = e.event;
        if (inner.type === 'warning') {
          note(`warning: [${e.flow}] ${safe(cliMessage(inner.message))}\n`);
          break;
        }
        if (inner.type === 'effect_started') clearStatus();
        if (o.quiet) break;
        if (inner.type === 'state_entered') print(`\n${paint(1, `== ${e.flow}: ${safe(inner.state)} ==`, colour)}\n`);
        else if (inner.type === 'message' && visible(inner.message))
          print(
            `\n${who(inner.message.sender, `[${e.flow}] ${inner.message.sender} (${inner.message.role})${safe(audienceMark(inner.message, player))}:`)} ${shown(inner.message)}\n`,
          );
        else if (inner.type === 'llm_call' || inner.type === 'embedding_call') {
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
