// task_board.json: checked reading (clear `file: /pointer: problem` errors) and atomic writing.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { TaskBoard, type TaskBoardData } from './board.js';
import { isTaskStatus, isTaskValue, ROUTE_STATUSES, TaskBoardError, TASK_STATUSES, TASK_VALUES, type Route, type Task, type Thought } from './task.js';

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isId = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 1;

/** Checks untrusted data (e.g. a file edited by hand) and builds the board. */
export function parseTaskBoard(doc: unknown, source = 'task board'): TaskBoard {
  const fail = (pointer: string, msg: string): never => { throw new TaskBoardError(`${source}: ${pointer}: ${msg}`); };
  if (!isObj(doc)) fail('', 'must be an object with tasks and thoughts');
  const d = doc as Record<string, unknown>;
  if (d.version !== 1) fail('/version', 'must be 1');
  if (!isId(d.next_task_id)) fail('/next_task_id', 'must be a positive integer');
  if (!isId(d.next_thought_id)) fail('/next_thought_id', 'must be a positive integer');
  if (!Array.isArray(d.tasks)) fail('/tasks', 'must be a list');
  if (!Array.isArray(d.thoughts)) fail('/thoughts', 'must be a list');
  const ids = (v: unknown, p: string): number[] => {
    if (!Array.isArray(v) || !v.every(isId)) fail(p, 'must be a list of task or thought ids');
    return v as number[];
  };
  const strings = (v: unknown, p: string): string[] => {
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string')) fail(p, 'must be a list of strings');
    return v as string[];
  };
  const tasks: Task[] = (d.tasks as unknown[]).map((raw, i) => {
    const p = `/tasks/${i}`;
    if (!isObj(raw)) fail(p, 'must be an object');
    const t = raw as Record<string, unknown>;
    if (!isId(t.id)) fail(`${p}/id`, 'must be a positive integer');
    if (typeof t.name !== 'string' || !t.name) fail(`${p}/name`, 'must be a non-empty string');
    if (typeof t.description !== 'string') fail(`${p}/description`, 'must be a string');
    if (!isTaskStatus(t.status)) fail(`${p}/status`, `must be one of ${TASK_STATUSES.join(', ')}`);
    if (!isTaskValue(t.value)) fail(`${p}/value`, `must be one of ${TASK_VALUES.join(', ')}`);
    if (!isObj(t.origin)) fail(`${p}/origin`, 'must be {tasks: [...], thoughts: [...]}');
    const o = t.origin as Record<string, unknown>;
    if (t.answer !== undefined && typeof t.answer !== 'string') fail(`${p}/answer`, 'must be a string');
    if (t.resource_level !== undefined && typeof t.resource_level !== 'string') fail(`${p}/resource_level`, 'must be a string');
    if (t.depth !== undefined && !(Number.isInteger(t.depth) && (t.depth as number) >= 0)) fail(`${p}/depth`, 'must be an integer >= 0');
    if (t.routes !== undefined && !Array.isArray(t.routes)) fail(`${p}/routes`, 'must be a list');
    const routes = (t.routes as unknown[] | undefined)?.map((raw, j): Route => {
      const rp = `${p}/routes/${j}`;
      if (!isObj(raw)) fail(rp, 'must be an object');
      const r = raw as Record<string, unknown>;
      if (r.id !== j + 1) fail(`${rp}/id`, `must be ${j + 1}`);
      if (typeof r.description !== 'string') fail(`${rp}/description`, 'must be a string');
      if (typeof r.score !== 'number' || r.score < 0 || r.score > 1) fail(`${rp}/score`, 'must be a number from 0 to 1');
      if (!Number.isInteger(r.depth) || (r.depth as number) < 1) fail(`${rp}/depth`, 'must be an integer >= 1');
      if (r.parent !== undefined && !(Number.isInteger(r.parent) && (r.parent as number) >= 1 && (r.parent as number) <= j)) fail(`${rp}/parent`, 'must be the id of an earlier route');
      if (!(ROUTE_STATUSES as readonly string[]).includes(r.status as string)) fail(`${rp}/status`, `must be one of ${ROUTE_STATUSES.join(', ')}`);
      if (r.level !== undefined && typeof r.level !== 'string') fail(`${rp}/level`, 'must be a string');
      if (r.note !== undefined && typeof r.note !== 'string') fail(`${rp}/note`, 'must be a string');
      return r as unknown as Route;
    });
    return {
      id: t.id as number, name: t.name as string, description: t.description as string,
      status: t.status as Task['status'], value: t.value as Task['value'],
      tasks_required: ids(t.tasks_required, `${p}/tasks_required`),
      tasks_depending: ids(t.tasks_depending, `${p}/tasks_depending`),
      origin: { tasks: ids(o.tasks, `${p}/origin/tasks`), thoughts: ids(o.thoughts, `${p}/origin/thoughts`) },
      stream_of_consciousness: strings(t.stream_of_consciousness, `${p}/stream_of_consciousness`),
      ...(t.answer !== undefined ? { answer: t.answer as string } : {}),
      ...(t.resource_level !== undefined ? { resource_level: t.resource_level as string } : {}),
      ...(t.depth !== undefined ? { depth: t.depth as number } : {}),
      ...(routes ? { routes } : {}),
    };
  });
  const thoughts: Thought[] = (d.thoughts as unknown[]).map((raw, i) => {
    const p = `/thoughts/${i}`;
    if (!isObj(raw)) fail(p, 'must be an object');
    const t = raw as Record<string, unknown>;
    if (!isId(t.id)) fail(`${p}/id`, 'must be a positive integer');
    if (typeof t.name !== 'string') fail(`${p}/name`, 'must be a string');
    if (typeof t.content !== 'string') fail(`${p}/content`, 'must be a string');
    if (t.task !== undefined && !isId(t.task)) fail(`${p}/task`, 'must be a task id');
    if (t.turn !== undefined && !(Number.isInteger(t.turn) && (t.turn as number) >= 0)) fail(`${p}/turn`, 'must be an integer >= 0');
    return {
      id: t.id as number, name: t.name as string, content: t.content as string,
      ...(t.task !== undefined ? { task: t.task as number } : {}), ...(t.turn !== undefined ? { turn: t.turn as number } : {}),
    };
  });
  // Cross references.
  const taskIds = new Map<number, number>();
  tasks.forEach((t, i) => {
    if (taskIds.has(t.id)) fail(`/tasks/${i}/id`, `task id ${t.id} is used twice`);
    if (t.id >= (d.next_task_id as number)) fail(`/tasks/${i}/id`, `must be below next_task_id (${d.next_task_id})`);
    taskIds.set(t.id, i);
  });
  const thoughtIds = new Set<number>();
  thoughts.forEach((t, i) => {
    if (thoughtIds.has(t.id)) fail(`/thoughts/${i}/id`, `thought id ${t.id} is used twice`);
    if (t.id >= (d.next_thought_id as number)) fail(`/thoughts/${i}/id`, `must be below next_thought_id (${d.next_thought_id})`);
    if (t.task !== undefined && !taskIds.has(t.task)) fail(`/thoughts/${i}/task`, `there is no task ${t.task}`);
    thoughtIds.add(t.id);
  });
  const byId = new Map(tasks.map((t) => [t.id, t]));
  tasks.forEach((t, i) => {
    t.tasks_required.forEach((r, j) => {
      const req = byId.get(r);
      if (!req) fail(`/tasks/${i}/tasks_required/${j}`, `there is no task ${r}`);
      if (!req!.tasks_depending.includes(t.id)) fail(`/tasks/${taskIds.get(r)}/tasks_depending`, `must include ${t.id}, which requires it`);
    });
    t.tasks_depending.forEach((dep, j) => {
      const other = byId.get(dep);
      if (!other) fail(`/tasks/${i}/tasks_depending/${j}`, `there is no task ${dep}`);
      if (!other!.tasks_required.includes(t.id)) fail(`/tasks/${taskIds.get(dep)}/tasks_required`, `must include ${t.id}, which lists it as depending`);
    });
    t.origin.tasks.forEach((o, j) => { if (!byId.has(o)) fail(`/tasks/${i}/origin/tasks/${j}`, `there is no task ${o}`); });
    t.origin.thoughts.forEach((o, j) => { if (!thoughtIds.has(o)) fail(`/tasks/${i}/origin/thoughts/${j}`, `there is no thought ${o}`); });
  });
  const data: TaskBoardData = { version: 1, next_task_id: d.next_task_id as number, next_thought_id: d.next_thought_id as number, tasks, thoughts };
  try {
    return TaskBoard.fromData(data);
  } catch (err) {
    throw new TaskBoardError(`${source}: ${(err as Error).message}`);
  }
}

/** Reads a board file; a missing file is an empty board. */
export function loadTaskBoard(file: string): TaskBoard {
  if (!existsSync(file)) return new TaskBoard();
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new TaskBoardError(`${file}: not valid JSON (${(err as Error).message})`);
  }
  return parseTaskBoard(doc, file);
}

/** Writes the board atomically (a temporary file renamed over the old one). */
export function saveTaskBoard(file: string, board: TaskBoard): void {
  const tmp = `${file}.tmp`;
  writeFileSync(tmp, JSON.stringify(board.toJSON(), null, 2) + '\n');
  renameSync(tmp, file);
}
