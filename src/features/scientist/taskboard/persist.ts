// task_board.json: checked reading (clear `file: /pointer: problem` errors) and atomic writing.
// The shape is checked against schemas/taskboard.schema.json (an ajv validator generated at build
// time by scripts/gen-schema.mjs); what a schema cannot say (ids unique and below the next ids,
// references that exist, dependencies listed on both sides, route numbering) is checked here.
import type { FromSchema } from 'json-schema-to-ts';
import { writeFileAtomic } from '../../../shared/util/atomic-write.js';
import { checkSchema, type Known, type SameShape } from '../../../shared/util/schema-error.js';
import { TaskBoard, type TaskBoardData } from './board.js';
import { TaskBoardError, type Task, type Thought } from './task.js';
import { taskBoardSchema } from './schema.generated.js';
import validateTaskBoard from './taskboard-validator.generated.js';
import { readJsonFile } from '../../../shared/util/json-syntax.js';

/** A task board document as the schema describes it (unknown extra keys are tolerated). */
type TaskBoardDoc = FromSchema<typeof taskBoardSchema>;
// The schema and the interfaces of task.ts describe the same records: this fails to compile if they drift.
type DocTask = Known<TaskBoardDoc['tasks'][number]>;
const sameTask: SameShape<Omit<DocTask, 'origin' | 'routes'>, Omit<Task, 'origin' | 'routes'>> = true;
type Route = NonNullable<Task['routes']>[number];
const sameRoute: SameShape<Omit<Known<NonNullable<DocTask['routes']>[number]>, 'id'>, Omit<Route, 'id'>> = true;
const sameOrigin: SameShape<Known<DocTask['origin']>, Task['origin']> = true;
const sameThought: SameShape<Known<TaskBoardDoc['thoughts'][number]>, Thought> = true;
void [sameTask, sameRoute, sameOrigin, sameThought];

/** Checks untrusted data (e.g. a file edited by hand) and builds the board. */
export function parseTaskBoard(doc: unknown, source = 'task board'): TaskBoard {
  const fail = (pointer: string, msg: string): never => {
    throw new TaskBoardError(`${source}: ${pointer}: ${msg}`);
  };
  checkSchema(validateTaskBoard, taskBoardSchema, doc, fail);
  // A task or thought keeps only its known keys; a route keeps them all (as before the schema).
  const tasks: Task[] = doc.tasks.map((t, i) => {
    const routes = t.routes?.map((r, j) => {
      const rp = `/tasks/${i}/routes/${j}`;
      if (r.id !== j + 1) fail(`${rp}/id`, `must be ${j + 1}`);
      if (r.parent !== undefined && r.parent > j) fail(`${rp}/parent`, 'must be the id of an earlier route');
      return { ...r, id: j + 1 };
    });
    return {
      id: t.id,
      name: t.name,
      description: t.description,
      status: t.status,
      value: t.value,
      tasks_required: t.tasks_required,
      tasks_depending: t.tasks_depending,
      origin: { tasks: t.origin.tasks, thoughts: t.origin.thoughts },
      stream_of_consciousness: t.stream_of_consciousness,
      ...(t.answer !== undefined ? { answer: t.answer } : {}),
      ...(t.resource_level !== undefined ? { resource_level: t.resource_level } : {}),
      ...(t.depth !== undefined ? { depth: t.depth } : {}),
      ...(routes ? { routes } : {}),
    };
  });
  const thoughts: Thought[] = doc.thoughts.map((t) => ({
    id: t.id,
    name: t.name,
    content: t.content,
    ...(t.task !== undefined ? { task: t.task } : {}),
    ...(t.turn !== undefined ? { turn: t.turn } : {}),
  }));
  // Cross references.
  const taskIds = new Map<number, number>();
  tasks.forEach((t, i) => {
    if (taskIds.has(t.id)) fail(`/tasks/${i}/id`, `task id ${t.id} is used twice`);
    if (t.id >= doc.next_task_id) fail(`/tasks/${i}/id`, `must be below next_task_id (${doc.next_task_id})`);
    taskIds.set(t.id, i);
  });
  const thoughtIds = new Set<number>();
  thoughts.forEach((t, i) => {
    if (thoughtIds.has(t.id)) fail(`/thoughts/${i}/id`, `thought id ${t.id} is used twice`);
    if (t.id >= doc.next_thought_id) fail(`/thoughts/${i}/id`, `must be below next_thought_id (${doc.next_thought_id})`);
    if (t.task !== undefined && !taskIds.has(t.task)) fail(`/thoughts/${i}/task`, `there is no task ${t.task}`);
    thoughtIds.add(t.id);
  });
  const byId = new Map(tasks.map((t) => [t.id, t]));
  tasks.forEach((t, i) => {
    t.tasks_required.forEach((r, j) => {
      const req = byId.get(r) ?? fail(`/tasks/${i}/tasks_required/${j}`, `there is no task ${r}`);
      if (!req.tasks_depending.includes(t.id)) fail(`/tasks/${taskIds.get(r)}/tasks_depending`, `must include ${t.id}, which requires it`);
    });
    t.tasks_depending.forEach((dep, j) => {
      const other = byId.get(dep) ?? fail(`/tasks/${i}/tasks_depending/${j}`, `there is no task ${dep}`);
      if (!other.tasks_required.includes(t.id))
        fail(`/tasks/${taskIds.get(dep)}/tasks_required`, `must include ${t.id}, which lists it as depending`);
    });
    t.origin.tasks.forEach((o, j) => {
      if (!byId.has(o)) fail(`/tasks/${i}/origin/tasks/${j}`, `there is no task ${o}`);
    });
    t.origin.thoughts.forEach((o, j) => {
      if (!thoughtIds.has(o)) fail(`/tasks/${i}/origin/thoughts/${j}`, `there is no thought ${o}`);
    });
  });
  const data: TaskBoardData = { version: 1, next_task_id: doc.next_task_id, next_thought_id: doc.next_thought_id, tasks, thoughts };
  try {
    return TaskBoard.fromData(data);
  } catch (err) {
    throw new TaskBoardError(`${source}: ${(err as Error).message}`);
  }
}

/** Reads a board file; a missing file is an empty board. */
export function loadTaskBoard(file: string): TaskBoard {
  const doc = readJsonFile(file, (message) => new TaskBoardError(message));
  return doc === undefined ? new TaskBoard() : parseTaskBoard(doc, file);
}

/** Writes the board atomically (a temporary file renamed over the old one). */
export function saveTaskBoard(file: string, board: TaskBoard): void {
  writeFileAtomic(file, JSON.stringify(board.toJSON(), null, 2) + '\n');
}
