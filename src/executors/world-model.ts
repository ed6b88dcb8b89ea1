// The `world_model` executor: the scientific method of seed 003. A new fact is proposed as a
// hypothesis (with subject-predicate-object triples), falsifiable predictions are derived from
// it, each is tested (knowledge base, code run, user, self-reflection) and the outcome recorded;
// only a hypothesis whose predictions all held can be accepted into the world model, and a
// falsified one is rejected. The model is a memory file (memory_types: {"NAME": "world_model"}).
import { ArgumentError, parseItems, parseTriples } from '../scientist/args.js';
import { memoryNameOf, memoryTypes, readTaskBoard, readWorldModel, writeWorldModel } from '../scientist/memory-types.js';
import { TextIndex } from '../scientist/text-index.js';
import { worldModelView } from '../scientist/views.js';
import { TaskBoardError } from '../taskboard/task.js';
import type { WorldModel } from '../worldmodel/model.js';
import { TEST_METHODS, TEST_OUTCOMES, WorldModelError, type TestMethod, type TestOutcome } from '../worldmodel/statement.js';
import { ExecutorInputError, str, type ArgSpecs, type ExecContext, type ExecResult, type Executor } from './types.js';

export const WORLD_MODEL_OPS = ['propose', 'predict', 'test', 'accept', 'reject', 'about', 'search', 'show'] as const;
type Op = (typeof WORLD_MODEL_OPS)[number];

const STATEMENT = { type: 'integer', required: true, description: 'The statement (hypothesis) number.' } as const;

const ARGS: Record<Op, ArgSpecs> = {
  propose: {
    hypothesis: { type: 'string', required: true, description: 'The new fact, as one clear, falsifiable sentence.' },
    triples: { type: 'string', description: 'What it asserts as one "subject | predicate | object" per line.' },
    task: { type: 'integer', description: 'The task it came up in (default: the task in progress).' },
  },
  predict: {
    statement: STATEMENT,
    predictions: {
      type: 'string',
      required: true,
      description: 'One prediction per line: consequences of the hypothesis that are easy to falsify and not already known to be false.',
    },
  },
  test: {
    statement: STATEMENT,
    prediction: { type: 'integer', required: true, description: 'The prediction number.' },
    method: {
      type: 'string',
      required: true,
      enum: [...TEST_METHODS],
      description: 'How it was tested: the knowledge base, a code run, the user, or self-reflection (looking for a counterexample).',
    },
    outcome: {
      type: 'string',
      required: true,
      enum: [...TEST_OUTCOMES],
      description: 'confirmed if the prediction held, falsified if not.',
    },
    evidence: {
      type: 'string',
      required: true,
      description: "What was done and seen (the code's output, the answer, the counterexample).",
    },
  },
  accept: { statement: STATEMENT },
  reject: {
    statement: STATEMENT,
    reason: { type: 'string', required: true, description: 'Why: the falsified prediction and its evidence.' },
  },
  about: { entity: { type: 'string', required: true, description: 'An entity (a subject or object of the triples).' } },
  search: {
    query: { type: 'string', required: true, description: 'What you are looking for.' },
    k: { type: 'integer', description: 'How many statements to return (default 5).' },
  },
  show: {},
};

const intArg = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

interface Outcome {
  result: string;
  summary: string;
  changed?: boolean;
}
type OpFn = (model: WorldModel, args: Record<string, unknown>, ctx: ExecContext) => Promise<Outcome> | Outcome;

/** The task in progress on the SOP's task board, if it has one. */
function currentTask(ctx: ExecContext): number | undefined {
  const boards = Object.entries(memoryTypes(ctx.sop ?? {})).filter(([, t]) => t === 'task_board');
  if (boards.length !== 1 || !ctx.memory.has(boards[0]![0])) return undefined;
  return readTaskBoard(ctx.memory, boards[0]![0]).inProgress()?.id;
}

const OPS: Record<Op, OpFn> = {
  propose(model, args, ctx) {
    const s = model.propose(str(args.hypothesis) ?? '', parseTriples(str(args.triples)), intArg(args.task) ?? currentTask(ctx));
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
  test(model, args) {
    const id = intArg(args.statement)!;
    const p = model.recordTest(id, intArg(args.prediction)!, {
      method: str(args.method) as TestMethod,
      outcome: str(args.outcome) as TestOutcome,
      evidence: str(args.evidence) ?? '',
    });
    const s = model.statement(id);
    const untested = s.predictions.filter((x) => !x.test).map((x) => x.id);
    const next =
      p.test!.outcome === 'falsified'
        ? 'The hypothesis is falsified: reject it.'
        : untested.length
          ? `Still to test: prediction ${untested.join(', ')}.`
          : 'Every prediction held: it may be accepted.';
    return {
      result: `Prediction ${p.id} of hypothesis ${id} ${p.test!.outcome} by ${p.test!.method}. ${next}`,
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
  name: 'world_model',
  description:
    'Challenge new facts with the scientific method before they enter the world model (settings.op): propose a hypothesis, derive predictions, record a test, accept or reject; look up an entity or search statements.',
  settings: {
    type: 'object',
    additionalProperties: false,
    required: ['op'],
    properties: {
      op: { type: 'string', enum: [...WORLD_MODEL_OPS] },
      file: { type: 'string', minLength: 1, description: "The world_model memory file (default: the SOP's only one)." },
      finish: { type: 'string', description: 'After the command succeeds, end the state and take next_states[finish] (e.g. "1").' },
    },
  },
  args(settings): ArgSpecs {
    return { ...ARGS[settings.op as Op] };
  },
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
