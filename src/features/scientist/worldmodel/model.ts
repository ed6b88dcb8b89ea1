// The world model: statements about the world that survived the scientific method. A statement
// is proposed as a hypothesis, predictions are derived from it and tested (knowledge base, code
// run, user, self-reflection); when every prediction is confirmed it may be accepted (its
// triples enter the knowledge graph); when one is falsified it is rejected. An accepted
// statement can later be falsified: it leaves the model with its triples.
import type { SearchHit, TextIndex } from '../text-index.js';
import { KnowledgeGraph, type GraphTriple } from './graph.js';
import { isOneOf } from '../../../shared/util/one-of.js';
import {
  TEST_METHODS,
  TEST_OUTCOMES,
  WorldModelError,
  type Prediction,
  type PredictionTest,
  type Statement,
  type Triple,
} from './statement.js';

export interface WorldModelData {
  version: 1;
  next_statement_id: number;
  /** Hypotheses and accepted statements. */
  statements: Statement[];
  /** Statements that were rejected or falsified, kept as a record (not part of the model). */
  rejected: Statement[];
}

const describe = (s: Pick<Statement, 'id' | 'text'>) => `statement ${s.id} "${s.text.length > 60 ? `${s.text.slice(0, 57)}...` : s.text}"`;

export class WorldModel {
  private nextId = 1;
  private readonly live = new Map<number, Statement>();
  private readonly archive: Statement[] = [];
  readonly graph = new KnowledgeGraph();

  /** Hypotheses and accepted statements, oldest first. */
  get statements(): readonly Statement[] {
    return [...this.live.values()];
  }
  get accepted(): Statement[] {
    return this.statements.filter((s) => s.status === 'accepted');
  }
  get hypotheses(): Statement[] {
    return this.statements.filter((s) => s.status === 'hypothesis');
  }
  get rejected(): readonly Statement[] {
    return this.archive;
  }

  statement(id: number): Statement {
    const s = this.live.get(id);
    if (s) return s;
    const gone = this.archive.find((x) => x.id === id);
    if (gone)
      throw new WorldModelError(`${describe(gone)} was rejected (${gone.reason ?? 'no reason given'}); it is no longer in the world model`);
    const ids = [...this.live.keys()];
    throw new WorldModelError(`there is no statement ${id}${ids.length ? ` (statements: ${ids.join(', ')})` : ''}`);
  }

  propose(text: string, triples: readonly Triple[] = [], task?: number, turn?: number): Statement {
    if (typeof text !== 'string' || !text.trim()) throw new WorldModelError('a hypothesis needs its statement as text');
    triples.forEach((t, i) => {
      for (const part of ['subject', 'predicate', 'object'] as const) {
        if (typeof t?.[part] !== 'string' || !t[part].trim())
          throw new WorldModelError(`triple ${i} of the hypothesis needs a non-empty ${part}`);
      }
    });
    const s: Statement = {
      id: this.nextId++,
      text: text.trim(),
      status: 'hypothesis',
      triples: triples.map((t) => ({ subject: t.subject.trim(), predicate: t.predicate.trim(), object: t.object.trim() })),
      predictions: [],
      ...(task !== undefined ? { task } : {}),
      ...(turn !== undefined ? { proposed_turn: turn } : {}),
    };
    this.live.set(s.id, s);
    return s;
  }

  /** Adds falsifiable predictions to a hypothesis. */
  derivePredictions(id: number, texts: readonly string[]): Prediction[] {
    const s = this.hypothesis(id, 'derive predictions from');
    if (texts.length === 0) throw new WorldModelError(`deriving predictions from ${describe(s)} needs at least one prediction`);
    const added = texts.map((text, i) => {
      if (typeof text !== 'string' || !text.trim()) throw new WorldModelError(`prediction ${i} for ${describe(s)} is empty`);
      return { id: s.predictions.length + i + 1, text: text.trim() };
    });
    s.predictions.push(...added);
    return added;
  }

  /** Records how a prediction was tested and what came out. A prediction is tested once. */
  recordTest(id: number, predictionId: number, test: PredictionTest): Prediction {
    const s = this.hypothesis(id, 'record a test for');
    const p = s.predictions.find((x) => x.id === predictionId);
    if (!p) {
      throw new WorldModelError(
        `${describe(s)} has no prediction ${predictionId}${s.predictions.length ? ` (predictions: ${s.predictions.map((x) => x.id).join(', ')})` : '; derive predictions first'}`,
      );
    }
    if (p.test)
      throw new WorldModelError(`prediction ${predictionId} of ${describe(s)} was already tested (${p.test.outcome} by ${p.test.method})`);
    if (!isOneOf(TEST_METHODS, test.method))
      throw new WorldModelError(`test method must be one of ${TEST_METHODS.join(', ')}, got ${JSON.stringify(test.method)}`);
    if (!isOneOf(TEST_OUTCOMES, test.outcome))
      throw new WorldModelError(`test outcome must be one of ${TEST_OUTCOMES.join(', ')}, got ${JSON.stringify(test.outcome)}`);
    if (typeof test.evidence !== 'string' || !test.evidence.trim())
      throw new WorldModelError(`the test of prediction ${predictionId} needs its evidence (what was done and seen)`);
    if (test.outcome === 'confirmed') {
      // a prediction already known to be false cannot confirm a new hypothesis
      const known = this.falsifiedAs(p.text, s.id);
      if (known)
        throw new WorldModelError(
          `prediction ${predictionId} of ${describe(s)} ("${p.text}") is already known to be false: it was falsified as prediction ${known.prediction.id} of ${describe(known.statement)} (${known.prediction.test!.evidence}); it cannot confirm a hypothesis: record it falsified, or derive a prediction not yet refuted`,
        );
    }
    p.test = { method: test.method, outcome: test.outcome, evidence: test.evidence, ...(test.code_run ? { code_run: test.code_run } : {}) };
    return p;
  }

  /** A falsified prediction of another statement (live or rejected) with the same text, if any. */
  private falsifiedAs(text: string, except: number): { statement: Statement; prediction: Prediction } | undefined {
    const norm = (t: string) =>
      t
        .trim()
        .toLowerCase()
        .replace(/\s+/g, ' ')
        .replace(/[.!]+$/, '');
    const wanted = norm(text);
    for (const statement of [...this.live.values(), ...this.archive]) {
      if (statement.id === except) continue;
      const prediction = statement.predictions.find((q) => q.test?.outcome === 'falsified' && norm(q.text) === wanted);
      if (prediction) return { statement, prediction };
    }
    return undefined;
  }

  /** Accepts a hypothesis whose predictions were all tested and none falsified. */
  accept(id: number): Statement {
    const s = this.hypothesis(id, 'accept');
    if (s.predictions.length === 0)
      throw new WorldModelError(`${describe(s)} cannot be accepted: it has no predictions; derive and test at least one`);
    const untested = s.predictions.filter((p) => !p.test);
    if (untested.length > 0)
      throw new WorldModelError(`${describe(s)} cannot be accepted: prediction ${untested.map((p) => p.id).join(', ')} not tested yet`);
    const falsified = s.predictions.filter((p) => p.test?.outcome === 'falsified');
    if (falsified.length > 0)
      throw new WorldModelError(
        `${describe(s)} cannot be accepted: prediction ${falsified.map((p) => p.id).join(', ')} was falsified; reject it`,
      );
    s.status = 'accepted';
    this.graph.add(s.id, s.triples);
    return s;
  }

  /** Rejects a hypothesis, or falsifies an accepted statement: it leaves the model, its triples
   * leave the graph, and it is kept in the record of rejected statements. */
  reject(id: number, reason: string): Statement {
    const s = this.statement(id);
    if (typeof reason !== 'string' || !reason.trim()) throw new WorldModelError(`rejecting ${describe(s)} needs a reason`);
    this.live.delete(id);
    this.graph.removeStatement(id);
    s.status = 'rejected';
    s.reason = reason.trim();
    this.archive.push(s);
    return s;
  }

  /** Triples about an entity (subject or object), from accepted statements only. */
  about(entity: string): GraphTriple[] {
    return this.graph.about(entity);
  }

  /** Accepted statements most similar to the query. */
  async search(index: TextIndex, query: string, k = 5, minScore = -1): Promise<Array<{ statement: Statement; score: number }>> {
    const items = this.accepted.map((s) => ({ key: s, text: s.text }));
    const hits: SearchHit<Statement>[] = await index.search(query, items, k, minScore);
    return hits.map((h) => ({ statement: h.key, score: h.score }));
  }

  toJSON(): WorldModelData {
    return structuredClone({
      version: 1,
      next_statement_id: this.nextId,
      statements: this.statements as Statement[],
      rejected: this.archive,
    });
  }

  /** A model from already-checked data (parseWorldModel checks untrusted input). */
  static fromData(data: WorldModelData): WorldModel {
    const m = new WorldModel();
    const d = structuredClone(data);
    m.nextId = d.next_statement_id;
    for (const s of d.statements) {
      m.live.set(s.id, s);
      if (s.status === 'accepted') m.graph.add(s.id, s.triples);
    }
    m.archive.push(...d.rejected);
    return m;
  }

  private hypothesis(id: number, action: string): Statement {
    const s = this.statement(id);
    if (s.status !== 'hypothesis') {
      throw new WorldModelError(
        `cannot ${action} ${describe(s)}: it is ${s.status}, not a hypothesis under test${s.status === 'accepted' ? ' (to challenge it again, reject it with the evidence and propose it anew)' : ''}`,
      );
    }
    return s;
  }
}
