// What the `task_board` executor (task-board.ts) declares: its settings and the arguments of each
// op. Loading a SOP needs only this; the executor's work (the board, the scientist modules) is
// imported at its first call (registry.ts).
import { TASK_VALUES } from '../taskboard/task.js';
import type { ArgSpecs, Executor } from '../../../core/commands/executor.js';
import { opSettings } from './op-settings.js';

export const TASK_BOARD_OPS = [
  'create',
  'decompose',
  'start',
  'close',
  'fail',
  'annotate',
  'think',
  'search_thoughts',
  'solution',
  'add_routes',
  'next_route',
  'route_result',
  'escalate',
  'framework',
  'ask_user',
  'done',
  'show',
] as const;
export type Op = (typeof TASK_BOARD_OPS)[number];

export const DEFAULT_MAX_DEPTH = 3;
export const DEFAULT_FRAMEWORKS_FILE = 'frameworks';

const TASK_ARG = { type: 'integer', description: 'The task number (default: the task in progress).' } as const;

const ARGS: Record<Op, ArgSpecs> = {
  create: {
    name: { type: 'string', required: true, description: 'A short name for the task.' },
    description: { type: 'string', description: 'What must be found or done, and what counts as an answer.' },
    value: {
      type: 'string',
      enum: [...TASK_VALUES],
      description: 'How much the task matters: high, medium or low (decides the resources it may use; default medium).',
    },
    requires: { type: 'string', description: 'Numbers of the tasks that must be closed first, e.g. "1, 2".' },
    from_thoughts: { type: 'string', description: 'Numbers of the thoughts that led to this task, e.g. "2" (its origin).' },
    from_tasks: {
      type: 'string',
      description: 'Numbers of the tasks that led to this task (its origin; default: the task in progress, if any).',
    },
  },
  decompose: {
    task: TASK_ARG,
    subtasks: {
      type: 'string',
      required: true,
      description:
        'One subtask per line: "name | description | value | after", where value is high, medium or low (default: the task\'s) and after lists the line numbers of earlier subtasks it needs, e.g. "Compare | compare both runs | low | 1, 2".',
    },
  },
  start: { task: { type: 'integer', required: true, description: 'The number of an offered task.' } },
  close: { task: TASK_ARG, answer: { type: 'string', description: 'The answer of the task (default: its proposed answer).' } },
  fail: {
    task: TASK_ARG,
    reason: { type: 'string', required: true, description: 'Why the task cannot be done with the instruments available.' },
  },
  annotate: { task: TASK_ARG, note: { type: 'string', required: true, description: "A note for the task's stream of consciousness." } },
  think: {
    name: { type: 'string', required: true, description: 'A short name for the thought (used to find it again).' },
    content: { type: 'string', required: true, description: 'The thought.' },
    task: { type: 'integer', description: 'The task it is about (default: the task in progress).' },
  },
  search_thoughts: {
    query: { type: 'string', required: true, description: 'What you are looking for.' },
    k: { type: 'integer', description: 'How many thoughts to return (default 5).' },
  },
  solution: {
    task: TASK_ARG,
    answer: { type: 'string', required: true, description: 'The proposed answer of the task, to be evaluated.' },
  },
  add_routes: {
    task: TASK_ARG,
    routes: {
      type: 'string',
      required: true,
      description:
        'One route per line: "score | description", where score (0 to 1) is how likely the route is to solve the task, e.g. "0.8 | simulate it numerically".',
    },
    parent: { type: 'integer', description: 'The route being tried that these routes refine (a level deeper).' },
  },
  next_route: { task: TASK_ARG },
  route_result: {
    task: TASK_ARG,
    route: { type: 'integer', required: true, description: 'The route being tried.' },
    outcome: { type: 'string', required: true, enum: ['succeeded', 'failed'], description: 'Whether the route solved the task.' },
    note: { type: 'string', description: 'What was found.' },
  },
  escalate: { task: TASK_ARG, reason: { type: 'string', required: true, description: 'Why the solution is not convincing yet.' } },
  framework: {
    task: TASK_ARG,
    kind: {
      type: 'string',
      required: true,
      enum: ['instruction', 'code', 'tool'],
      description:
        'instruction: knowledge and instructions for next time; code: a program and how to use it; tool: a recipe for using an external tool.',
    },
    name: { type: 'string', required: true, description: 'A short name for the framework.' },
    content: {
      type: 'string',
      required: true,
      description:
        'The framework itself. For code: functions (with docstrings) saved to the code library, which later code imports; not a script.',
    },
    language: {
      type: 'string',
      enum: ['python', 'javascript'],
      description: 'kind code: the language of the functions (default python).',
    },
  },
  ask_user: { task: TASK_ARG, question: { type: 'string', required: true, description: 'The question for the user.' } },
  done: {},
  show: {},
};

export function opOf(settings: Record<string, unknown>): Op {
  return settings.op as Op;
}

export const taskBoardSpec: Omit<Executor, 'run'> = {
  name: 'task_board',
  description:
    'Work with the task board (settings.op): create, decompose, start, close, fail or annotate tasks; think and search thoughts; propose a solution; add, try and report routes; escalate; save a framework; ask the user; confirm all done; show the board.',
  settings: opSettings('task_board', TASK_BOARD_OPS, {
    max_depth: {
      type: 'integer',
      minimum: 1,
      description: `decompose and add_routes: the deepest subtask or route refinement (default ${DEFAULT_MAX_DEPTH}).`,
    },
    frameworks: {
      type: 'string',
      minLength: 1,
      description: `framework: the memory file frameworks are saved in (default ${DEFAULT_FRAMEWORKS_FILE}).`,
    },
  }),
  args(settings): ArgSpecs {
    return { ...ARGS[opOf(settings)] };
  },
};
