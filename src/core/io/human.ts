// Where a human's turns come from: the terminal, an answers file, or nowhere (a clear error).
import { EngineError, type MessagePart, opt, say } from '../../shared/errors.js';
import { InputFileError, readInputFile } from '../../shared/io/read-input-file.js';
import { createInterface } from 'node:readline/promises';
import type { Readable, Writable } from 'node:stream';
import { describeJsonProblem } from '../../shared/util/json-syntax.js';

export interface HumanQuestion {
  agent: string;
  role: string;
  state: string;
  /** What the human is shown before answering (the last message or a question). */
  prompt: string;
  kind: 'turn' | 'question' | 'approval';
}

export interface HumanInput {
  readonly id: string;
  ask(q: HumanQuestion): Promise<string>;
  /** Answers consumed so far (journaled so a resumed run does not ask again). */
  readonly consumed: number;
  skip?(n: number): void;
  /** A person answers as the run goes (a terminal): only such an input can approve code. */
  readonly interactive?: boolean;
  /** Where approvals go when this input cannot give them (answers from a file, with a terminal at hand). */
  readonly approver?: HumanInput;
  /** Scripted answers (a file, a list): the next answer, without taking it (tagged answers such as `run: approve`). */
  peek?(): string | undefined;
}

export class HumanInputError extends EngineError {
  constructor(message: string | readonly MessagePart[]) {
    super(message, 'HUMAN_INPUT');
    this.name = 'HumanInputError';
  }
}

/**
 * The person stopped answering: the answers given with --answers ran out, or Ctrl-D at the
 * terminal. Nothing went wrong: the run stops as interrupted, and `sop resume` goes on (with
 * more answers, or at a terminal). An open-ended SOP (a chat) ends this way.
 */
export class NoMoreAnswersError extends HumanInputError {
  readonly resumable = true;
  constructor(message: string | readonly MessagePart[]) {
    super(message);
    this.name = 'NoMoreAnswersError';
  }
}

/**
 * Code (or another side effect) needs approval, and nobody can give it: answers written in
 * advance answer questions only. The run stops as interrupted; it can be resumed at a terminal
 * or with --auto-run.
 */
export class ApprovalNeededError extends HumanInputError {
  readonly resumable = true;
  /** Thrown before the effect it guards: the effect ledger records that it did not take place. */
  readonly beforeEffect = true;
  constructor(message: string | readonly MessagePart[]) {
    super(message);
    this.name = 'ApprovalNeededError';
  }
}

/**
 * Approval of a side effect (running code): asked of a person at a terminal, never taken from
 * an answers file, where an "ok" meant for a plan review would approve code nobody has seen.
 */
export async function askApproval(human: HumanInput, q: Omit<HumanQuestion, 'kind'>, what = 'approval to run code'): Promise<string> {
  const person = human.interactive ? human : human.approver?.interactive ? human.approver : undefined;
  if (!person) {
    const source =
      human instanceof AnswersFileInput
        ? say`answers from ${opt('answers', { arg: true })} answer questions only, not approvals`
        : 'there is no terminal to ask';
    throw new ApprovalNeededError([
      ...say`${q.agent} (${q.role}) in state "${q.state}" needs ${what}, and ${source}. `,
      ...say`Run it at a terminal to approve it, or let code run without asking with ${opt('autoRun')} (or ${opt('yes')}); `,
      ...say`a stopped run continues with ${opt('autoRun', { form: 'resume' })}.`,
    ]);
  }
  return person.ask({ ...q, kind: 'approval' });
}

/** Answers used in order (a file's, a list's): how many are used, and skipping those a resumed run used before. */
export abstract class AnswersInOrder {
  protected abstract readonly answers: readonly string[];
  private cursor = 0;
  get consumed(): number {
    return this.cursor;
  }
  skip(n: number): void {
    this.cursor += n;
  }
  peek(): string | undefined {
    return this.answers[this.cursor];
  }
  /** The next answer, used; undefined when none is left. */
  protected next(): string | undefined {
    const a = this.answers[this.cursor];
    if (a !== undefined) this.cursor++;
    return a;
  }
}

/**
 * Answers from a file: a JSON list of strings, or plain text with one answer per line
 * (blank lines and lines starting with # are skipped). They answer questions and human turns;
 * approvals go to `approver` (a terminal) when there is one.
 */
export class AnswersFileInput extends AnswersInOrder implements HumanInput {
  readonly id: string;
  protected readonly answers: string[];
  readonly approver?: HumanInput;
  constructor(
    readonly file: string,
    o: { approver?: HumanInput } = {},
  ) {
    super();
    this.approver = o.approver;
    this.id = `answers:${file}`;
    let text: string;
    try {
      text = readInputFile(file, { what: 'an answers file' }); // files: regular, under the cap, never blocks
    } catch (err) {
      if (!(err instanceof InputFileError)) throw err;
      throw new HumanInputError(
        `answers file ${file}: ${err.errno === 'ENOENT' || err.errno === 'EACCES' ? `cannot read (${err.errno})` : err.reason}`,
      );
    }
    if (text.trimStart().startsWith('[')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        throw new HumanInputError(`answers file ${file}: invalid JSON (${describeJsonProblem(text, err)})`);
      }
      if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) {
        throw new HumanInputError(`answers file ${file}: must be a JSON list of strings`);
      }
      this.answers = parsed;
    } else {
      this.answers = text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.startsWith('#'));
    }
  }
  async ask(q: HumanQuestion): Promise<string> {
    if (q.kind === 'approval') return askApproval(this, q);
    const a = this.next();
    if (a === undefined) {
      throw new NoMoreAnswersError(
        say`answers file ${this.file}: no answer left for ${q.agent} (${q.role}) in state "${q.state}" (${this.answers.length} answers were given); ${opt('answers', { arg: true, form: 'continue' })} holding the answers to come`,
      );
    }
    return a;
  }
}

/**
 * Ctrl-C at a question asked at the terminal. The first goes back to the flow that called the one
 * asking (a sub-flow's caller is told "the user interrupted" and may re-plan: `toCaller`); at the
 * top level, or at the second Ctrl-C, the run stops (interrupted, resumable).
 */
export class AnswerInterruptedError extends HumanInputError {
  readonly resumable = true;
  constructor(
    message: string,
    readonly toCaller: boolean,
  ) {
    super(message);
    this.name = 'AnswerInterruptedError';
  }
}

/** The first line of an answer that spans several lines: `<<<` (what follows it on the line is its first line). */
export const MULTILINE_OPEN = '<<<';
/** A second Ctrl-C at a question within this long of the first stops the run (the first goes back to the caller). */
export const CTRL_C_AGAIN_MS = 3000;
/** The line that ends an answer of several lines (the seed's end_of_input_string), unless given another. */
export const END_OF_INPUT = 'EOF';

/**
 * Reads an answer from the terminal (or the given streams): one line, or, when its first line
 * starts with `<<<`, every line up to one that is exactly the end-of-input string (`EOF`): a plan
 * or feedback of several lines, typed or pasted.
 */
export class TerminalInput implements HumanInput {
  readonly id = 'terminal';
  readonly interactive = true;
  private count = 0;
  private hinted = false;
  /** When Ctrl-C was last pressed at a question (a second one within AGAIN_MS stops the run). */
  private lastInterrupt = -Infinity;
  private readonly input: Readable & { isTTY?: boolean };
  private readonly output: Writable;
  private readonly endOfInput: string;
  constructor(o: { input?: Readable; output?: Writable; endOfInput?: string } = {}) {
    this.input = o.input ?? process.stdin;
    this.output = o.output ?? process.stderr;
    this.endOfInput = o.endOfInput ?? END_OF_INPUT;
  }
  get consumed(): number {
    return this.count;
  }
  async ask(q: HumanQuestion): Promise<string> {
    const rl = createInterface({ input: this.input, output: this.output, terminal: this.input.isTTY === true });
    // Ctrl-D at a terminal, or the end of piped input: the person stopped answering
    const stopped = () => new NoMoreAnswersError(`${q.agent} (${q.role}) stopped answering (Ctrl-D, or the end of the input)`);
    // lines are queued as they come, so the lines of a paste are all read
    const queue: string[] = [];
    let waiting: { resolve: (line: string) => void; reject: (err: Error) => void } | undefined;
    let closed = false;
    rl.on('line', (line) => {
      const w = waiting;
      waiting = undefined;
      if (w) w.resolve(line);
      else queue.push(line);
    });
    rl.once('close', () => {
      closed = true;
      waiting?.reject(stopped());
    });
    // Ctrl-C at the question: back to the caller of this flow; a second Ctrl-C within
    // CTRL_C_AGAIN_MS (at this question or the next) stops the run. Counted per question, not per
    // run: a Ctrl-C minutes later, at another flow's question, goes back to its caller again.
    rl.on('SIGINT', () => {
      const now = performance.now();
      const again = now - this.lastInterrupt < CTRL_C_AGAIN_MS;
      this.lastInterrupt = now;
      const w = waiting;
      waiting = undefined;
      this.output.write('^C\n');
      w?.reject(
        new AnswerInterruptedError(
          `the user interrupted ${q.agent} (${q.role})'s question with Ctrl-C${again ? ' a second time' : ''}`,
          !again,
        ),
      );
    });
    const next = (prompt: string): Promise<string> => {
      if (queue.length > 0) return Promise.resolve(queue.shift()!);
      if (closed) return Promise.reject(stopped());
      // waiting before the prompt is shown: a line may come at once (a paste, a scripted terminal)
      const line = new Promise<string>((resolve, reject) => (waiting = { resolve, reject }));
      rl.setPrompt(prompt);
      rl.prompt();
      return line;
    };
    try {
      // Questions and approvals (executors) carry their own text: the question, the code to run.
      if (q.kind !== 'turn' && q.prompt) this.output.write(`\n${q.prompt}\n`);
      if (!this.hinted) {
        this.hinted = true;
        this.output.write(`(an answer of several lines: start it with ${MULTILINE_OPEN}, end it with a line ${this.endOfInput})\n`);
      }
      const first = await next(`${q.agent} (${q.role}) > `);
      let answer = first;
      if (first.trimStart().startsWith(MULTILINE_OPEN)) {
        const lines: string[] = [];
        const rest = first.trimStart().slice(MULTILINE_OPEN.length).trim();
        if (rest !== '') lines.push(rest);
        for (;;) {
          const line = await next('... ');
          if (line.trim() === this.endOfInput) break;
          lines.push(line);
        }
        answer = lines.join('\n');
      } else if (queue.length > 0) {
        // several lines pasted at once without <<<: they are one answer, not a first line and lost others
        const pasted = [first, ...queue.splice(0)];
        answer = pasted.join('\n');
        this.output.write(`(${pasted.length} lines pasted: taken as one answer)\n`);
      }
      this.count++;
      this.lastInterrupt = -Infinity; // an answer in between: the next Ctrl-C is a first one again
      return answer;
    } finally {
      rl.close();
    }
  }
}

/** No way to ask a human (no TTY and no --answers): fail with instructions. */
export class NoHumanInput implements HumanInput {
  readonly id = 'none';
  readonly consumed = 0;
  async ask(q: HumanQuestion): Promise<string> {
    if (q.kind !== 'turn') {
      // actions: a command asks the user (a question, a review, approval to run code)
      throw new HumanInputError([
        `${q.agent} (${q.role}) in state "${q.state}" needs ${q.kind === 'approval' ? 'approval to run code' : 'an answer from the user'}, but there is no terminal to ask. `,
        ...(q.kind === 'approval'
          ? say`Run code without asking with ${opt('autoRun')}, or accept everything with ${opt('yes')} (an answers file never approves code).`
          : say`Give the answers with ${opt('answers', { arg: true })}, or accept everything with ${opt('yes')}.`),
      ]);
    }
    throw new HumanInputError([
      `${q.agent} (${q.role}) in state "${q.state}" is played by a human, but there is no terminal to ask. `,
      ...say`Give the answers with ${opt('answers', { arg: true })} (a JSON list of strings, or one answer per line).`,
    ]);
  }
}

/** A yes/no question to the person at this process's terminal (stdin, on stderr); no means no. */
export async function askYesNo(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

/** Whether the user is away (a SOP's resources.user_away, or the input user_away: true, yes or 1): nobody is asked. */
export function userAway(resources: { user_away?: boolean } = {}, inputs: Record<string, string | undefined> = {}): boolean {
  const input = inputs.user_away?.trim().toLowerCase();
  return resources.user_away === true || input === 'true' || input === 'yes' || input === '1';
}
