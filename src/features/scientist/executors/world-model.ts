// The `world_model` executor: the scientific method of seed 003. A new fact is proposed as a
// hypothesis (with subject-predicate-object triples), falsifiable predictions are derived from
// it, each is tested (knowledge base, code run, user, self-reflection) and the outcome recorded;
// only a hypothesis whose predictions all held can be accepted into the world model, and a
// falsified one is rejected. The model is a memory file (memory_types: {"NAME": "world_model"}).
import { ArgumentError, parseItems, parseTriples } from '../args.js';
import { memoryNameOf, memoryTypes, readTaskBoard, readWorldModel, writeWorldModel } from '../memory-types.js';
import { TextIndex } from '../text-index.js';
import { worldModelView } from '../views.js';
import { TaskBoardError } from '../taskboard/task.js';
import type { WorldModel } from '../worldmodel/model.js';
import { WorldModelError, type CodeRunRecord, type TestMethod, type TestOutcome } from '../worldmodel/statement.js';
import { ExecutorInputError, str, type ExecContext, type ExecResult, type Executor } from '../../../core/commands/executor.js';
import { worldModelSpec, type Op } from './world-model-spec.js';

export { WORLD_MODEL_OPS } from './world-model-spec.js';

const intArg = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

interface Outcome {
  result: string;
  summary: string;
  changed?: boolean;
}
type OpFn = (model: WorldModel, args: Record<string, unknown>, ctx: ExecContext) => Promise<Outcome> | Outcome;

/**
 * The code run a code_run test rests on: the one at `turn`, or the last, among the code that
 * really ran since the hypothesis was proposed; refused when there is none (a test must not
 * claim a run that did not happen).
 */
function ranCode(model: WorldModel, id: number, turn: number | undefined, ctx: ExecContext): CodeRunRecord {
  const since = model.statement(id).proposed_turn ?? 0;
  const runs = (ctx.codeRuns?.() ?? []).filter((r) => r.turn >= since);
  const run = turn === undefined ? runs.at(-1) : runs.find((r) => r.turn === turn);
  if (!run) {
    const which = turn === undefined ? 'no code has run' : `no code ran at turn ${turn}`;
    throw new WorldModelError(
      `a code_run test needs code that really ran: ${which} since hypothesis ${id} was proposed${runs.length ? ` (code ran at turn ${runs.map((r) => r.turn).join(', ')})` : ''}; run the code first, then record its test`,
    );
  }
  return run;
}

/** The task in progress on the SOP's task board, if it has one. */
function currentTask(ctx: ExecContext): number | undefined {
  const boards = Object.entries(memoryTypes(ctx.sop ?? {})).filter(([, t]) => t === 'task_board');
  if (boards.length !== 1 || !ctx.memory.has(boards[0]![0])) return undefined;
  return readTaskBoard(ctx.memory, boards[0]![0]).inProgress()?.id;
}

const OPS: Record<Op, OpFn> = {
  propose(model, args, ctx) {
    const s = model.propose(str(args.hypothesis) ?? '', parseTriples(str(args.triples)), intArg(args.task) ?? currentTask(ctx), ctx.turn);
    return {
      result: `Hypothesis ${s.id} proposed: ${s.text}${s.triples.length ? `\nTriples: ${s.triples.map((t) => `(${t.subject}; ${t.predicate}; ${t.object})`).join(' ')}` : ''}\nDerive predictions that could falsify it, then test them.`,
      summary: `hypothesis ${s.id}: ${s.text}`,
    };
  },
  predict(model, args) {
    const id = intArg(args.statement)!;
    const added = model.derivePredictions(id, parseItems(str(args.predictions) ?? '', 'predictions'));
    return {
      result: `Predictions of hypothesis ${id}:\n${added.map((p) => `- prediction ${p.id}: ${p.text}`).join('\n')}`,
      summary: `hypothesis ${id}: predictions ${added.map((p) => p.id).join(', ')}`,
    };
  },
  test(model, args, ctx) {
    const id = intArg(args.statement)!;
    const method = str(args.method) as TestMethod;
    const codeRun = method === 'code_run' ? ranCode(model, id, intArg(args.code_turn), ctx) : undefined;
    const p = model.recordTest(id, intArg(args.prediction)!, {
      method,
      outcome: str(args.outcome) as TestOutcome,
      evidence: str(args.evidence) ?? '',
      ...(codeRun ? { code_run: codeRun } : {}),
    });
    const s = model.statement(id);
    const untested = s.predictions.filter((x) => !x.test).map((x) => x.id);
    const next =
      p.test!.outcome === 'falsified'
        ? 'The hypothesis is falsified: reject it.'
        : untested.length
          ? `Still to test: prediction ${untested.join(', ')}.`
          : 'Every prediction held: it may be accepted.';
    const by = codeRun ? `${p.test!.method} (${codeRun.command} at turn ${codeRun.turn})` : p.test!.method;
    return {
      result: `Prediction ${p.id} of hypothesis ${id} ${p.test!.outcome} by ${by}. ${next}`,
      summary: `hypothesis ${id}, prediction ${p.id}: ${p.test!.outcome} by ${p.test!.method}`,
    };
  },
  accept(model, args) {
    const s = model.accept(intArg(args.statement)!);
    return { result: `Statement ${s.id} is now part of the world model: ${s.text}`, summary: `accepted statement ${s.id}: ${s.text}` };
  },
  reject(model, args) {
    const s = model.reject(intArg(args.statement)!, str(args.reason) ?? '');
    return {
      result: `Statement ${s.id} rejected (${s.reason}); it is not part of the world model.`,
      summary: `rejected statement ${s.id}: ${s.reason}`,
    };
  },
  about(model, args) {
    const entity = str(args.entity) ?? '';
    const triples = model.about(entity);
    return {
      result: triples.length
        ? `Known about "${entity}":\n${triples.map((t) => `- (${t.subject}; ${t.predicate}; ${t.object}) from statement ${t.statement}`).join('\n')}`
        : `Nothing is known about "${entity}".`,
      summary: `looked up "${entity}": ${triples.length} triple(s)`,
      changed: false,
    };
  },
  async search(model, args, ctx) {
    if (!ctx.embedder) throw new WorldModelError('this run has no embedder to search the world model with');
    const hits = await model.search(new TextIndex(await ctx.embedder()), str(args.query) ?? '', intArg(args.k) ?? 5);
    return {
      result: hits.length
        ? `Closest statements:\n${hits.map((h) => `- [${h.statement.id}] (${h.score.toFixed(2)}) ${h.statement.text}`).join('\n')}`
        : 'The world model is empty.',
      summary: `searched the world model: ${hits.length} found`,
      changed: false,
    };
  },
  show(model) {
    return { result: worldModelView(model).text, summary: 'showed the world model', changed: false };
  },
};

export const executor: Executor = {
  ...worldModelSpec,
  async run(args, ctx): Promise<ExecResult> {
    try {
      if (!ctx.sop) throw new WorldModelError("the world_model executor needs the run's SOP");
      const name = memoryNameOf(ctx.sop, 'world_model', str(ctx.settings.file));
      const model = readWorldModel(ctx.memory, name);
      const out = await OPS[ctx.settings.op as Op](model, args, ctx);
      if (out.changed !== false) writeWorldModel(ctx.memory, name, model);
      const key = str(ctx.settings.finish);
      return {
        ok: true,
        result: out.result,
        summary: out.summary,
        ...(key !== undefined ? { finish: { result: out.result, summary: out.summary, next: key } } : {}),
      };
    } catch (err) {
      if (err instanceof WorldModelError || err instanceof ArgumentError || err instanceof TaskBoardError)
        throw new ExecutorInputError(err.message);
      throw err;
    }
  },
};
