// What the `world_model` executor (world-model.ts) declares: its settings and the arguments of
// each op. Loading a SOP needs only this; the executor's work (the world model, the scientist
// modules) is imported at its first call (registry.ts).
import { TEST_METHODS, TEST_OUTCOMES } from '../worldmodel/statement.js';
import type { ArgSpecs, Executor } from '../../../core/commands/executor.js';
import { opSettings } from './op-settings.js';

export const WORLD_MODEL_OPS = ['propose', 'predict', 'test', 'accept', 'reject', 'about', 'search', 'show'] as const;
export type Op = (typeof WORLD_MODEL_OPS)[number];

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
    code_turn: {
      type: 'integer',
      description:
        'method code_run: the turn of the code run that is the evidence (default: the last code that ran since the hypothesis was proposed); code that did not run is no evidence.',
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

export const worldModelSpec: Omit<Executor, 'run'> = {
  name: 'world_model',
  description:
    'Challenge new facts with the scientific method before they enter the world model (settings.op): propose a hypothesis, derive predictions, record a test, accept or reject; look up an entity or search statements.',
  settings: opSettings('world_model', WORLD_MODEL_OPS),
  args(settings): ArgSpecs {
    return { ...ARGS[settings.op as Op] };
  },
};
