// Where a human's turns come from: the terminal, an answers file, or nowhere (a clear error).
import { EngineError } from '../errors.js';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';

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
}

export class HumanInputError extends EngineError {
  constructor(message: string) {
    super(message, 'HUMAN_INPUT');
    this.name = 'HumanInputError';
  }
}

/**
 * Answers from a file: a JSON list of strings, or plain text with one answer per line
 * (blank lines and lines starting with # are skipped).
 */
export class AnswersFileInput implements HumanInput {
  readonly id: string;
  private readonly answers: string[];
  private cursor = 0;
  constructor(readonly file: string) {
    this.id = `answers:${file}`;
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (err) {
      throw new HumanInputError(`answers file ${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
    }
    if (text.trimStart().startsWith('[')) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch (err) {
        throw new HumanInputError(`answers file ${file}: invalid JSON (${(err as Error).message})`);
      }
      if (!Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) {
        throw new HumanInputError(`answers file ${file}: must be a JSON list of strings`);
      }
      this.answers = parsed;
    } else {
      this.answers = text.split(/\r?\n/).filter((l) => l.trim() !== '' && !l.startsWith('#'));
    }
  }
  get consumed(): number { return this.cursor; }
  skip(n: number): void { this.cursor += n; }
  async ask(q: HumanQuestion): Promise<string> {
    const a = this.answers[this.cursor];
    if (a === undefined) {
      throw new HumanInputError(`answers file ${this.file}: no answer left for ${q.agent} (${q.role}) in state "${q.state}" (${this.answers.length} answers were given)`);
    }
    this.cursor++;
    return a;
  }
}

/** Reads one line per answer from the terminal. */
export class TerminalInput implements HumanInput {
  readonly id = 'terminal';
  private count = 0;
  get consumed(): number { return this.count; }
  async ask(q: HumanQuestion): Promise<string> {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY });
    try {
      // Questions and approvals (executors) carry their own text: the question, the code to run.
      if (q.kind !== 'turn' && q.prompt) process.stderr.write(`\n${q.prompt}\n`);
      const answer = await rl.question(`${q.agent} (${q.role}) > `);
      this.count++;
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
      throw new HumanInputError(
        `${q.agent} (${q.role}) in state "${q.state}" needs ${q.kind === 'approval' ? 'approval to run code' : 'an answer from the user'}, but there is no terminal to ask. ` +
        `Give the answers with --answers FILE, or accept everything with --yes${q.kind === 'approval' ? ' (or run code without asking: --auto-run)' : ''}.`,
      );
    }
    throw new HumanInputError(
      `${q.agent} (${q.role}) in state "${q.state}" is played by a human, but there is no terminal to ask. ` +
      `Give the answers with --answers FILE (a JSON list of strings, or one answer per line).`,
    );
  }
}
