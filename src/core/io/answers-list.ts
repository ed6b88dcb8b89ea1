// Human answers given as a list in memory (the library's `answers: [...]`), used in order.
import { AnswersInOrder, NoMoreAnswersError, type HumanInput, type HumanQuestion } from './human.js';

export class AnswersListInput extends AnswersInOrder implements HumanInput {
  readonly id = 'answers:list';
  constructor(protected readonly answers: readonly string[]) {
    super();
  }
  async ask(q: HumanQuestion): Promise<string> {
    const a = this.next();
    if (a === undefined) {
      throw new NoMoreAnswersError(
        `no answer left for ${q.agent} (${q.role}) in state "${q.state}" (${this.answers.length} answers were given)`,
      );
    }
    return a;
  }
}
