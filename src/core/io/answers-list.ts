// Human answers given as a list in memory (the library's `answers: [...]`), used in order.
import { NoMoreAnswersError, type HumanInput, type HumanQuestion } from './human.js';

export class AnswersListInput implements HumanInput {
  readonly id = 'answers:list';
  private cursor = 0;
  constructor(private readonly answers: readonly string[]) {}
  get consumed(): number {
    return this.cursor;
  }
  skip(n: number): void {
    this.cursor += n;
  }
  peek(): string | undefined {
    return this.answers[this.cursor];
  }
  async ask(q: HumanQuestion): Promise<string> {
    const a = this.answers[this.cursor];
    if (a === undefined) {
      throw new NoMoreAnswersError(
        `no answer left for ${q.agent} (${q.role}) in state "${q.state}" (${this.answers.length} answers were given)`,
      );
    }
    this.cursor++;
    return a;
  }
}
