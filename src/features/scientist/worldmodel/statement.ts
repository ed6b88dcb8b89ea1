// The records of the world model: statements (hypotheses until they survive their tests), their
// predictions and how each was tested, and their subject-predicate-object triples.
import { EngineError } from '../../../shared/errors.js';

/** How a prediction was tested (seed 003, "the epistemological method"). */
export const TEST_METHODS = ['knowledge_base', 'code_run', 'user', 'self_reflection'] as const;
export type TestMethod = (typeof TEST_METHODS)[number];

export const TEST_OUTCOMES = ['confirmed', 'falsified'] as const;
export type TestOutcome = (typeof TEST_OUTCOMES)[number];

/** hypothesis: proposed, under test. accepted: in the world model. rejected: falsified or withdrawn. */
export type StatementStatus = 'hypothesis' | 'accepted' | 'rejected';

export interface Triple {
  subject: string;
  predicate: string;
  object: string;
}

export interface PredictionTest {
  method: TestMethod;
  outcome: TestOutcome;
  /** What was done and seen: the code and its output, the user's answer, the reasoning. */
  evidence: string;
  /** method code_run: the code command that ran, and the turn it ran at. */
  code_run?: CodeRunRecord;
}

/** A code command that really ran in the run (an `action` message of the code executor). */
export interface CodeRunRecord {
  turn: number;
  command: string;
}

export interface Prediction {
  /** 1-based within its statement. */
  id: number;
  text: string;
  test?: PredictionTest;
}

export interface Statement {
  /** Monotonic across the world model. */
  id: number;
  text: string;
  status: StatementStatus;
  triples: Triple[];
  predictions: Prediction[];
  /** The task the statement came up in. */
  task?: number;
  /** The turn it was proposed at (a code_run test must use code that ran since). */
  proposed_turn?: number;
  /** Why it was rejected (set with status rejected). */
  reason?: string;
}

export class WorldModelError extends EngineError {
  constructor(message: string) {
    super(message, 'WORLD_MODEL');
    this.name = 'WorldModelError';
  }
}
