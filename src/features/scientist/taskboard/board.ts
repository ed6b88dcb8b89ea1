// The task board: tasks with dependencies and status, and the agent's thoughts. Every change
// goes through a method that checks it; a refused change leaves the board as it was.
import { findCycle, findCycleThrough } from './cycles.js';
import { addRoutes, nextRoute, routeResult, type NewRoute } from './routes.js';
import { assertTransition } from './transitions.js';
import {
  describeTask,
  TaskBoardError,
  type Route,
  type Task,
  type TaskOrigin,
  type TaskStatus,
  type TaskValue,
  type Thought,
} from './task.js';

export interface NewTask {
  name: string;
  description?: string;
  value?: TaskValue;
  /** Ids of existing tasks this one requires. */
  requires?: number[];
  origin?: Partial<TaskOrigin>;
  resource_level?: string;
}

/** A subtask of a decomposition; `after` names earlier subtasks of the same list by 0-based index. */
export interface SubtaskSpec extends NewTask {
  after?: number[];
}

export interface NewThought {
  name: string;
  content: string;
  task?: number;
  turn?: number;
}

/** The serialised board (task_board.json). */
export interface TaskBoardData {
  version: 1;
  next_task_id: number;
  next_thought_id: number;
  tasks: Task[];
  thoughts: Thought[];
}

export class TaskBoard {
  private nextTaskId = 1;
  private nextThoughtId = 1;
  private readonly taskMap = new Map<number, Task>();
  private readonly thoughtList: Thought[] = [];

  get tasks(): readonly Task[] {
    return [...this.taskMap.values()];
  }
  get thoughts(): readonly Thought[] {
    return this.thoughtList;
  }

  /** The task with this id, or a TaskBoardError listing the ids that exist. */
  task(id: number): Task {
    const t = this.taskMap.get(id);
    if (!t) {
      const ids = [...this.taskMap.keys()];
      throw new TaskBoardError(`there is no task ${id}${ids.length ? ` (tasks: ${ids.join(', ')})` : ' (the board has no tasks yet)'}`);
    }
    return t;
  }

  thought(id: number): Thought {
    const t = this.thoughtList.find((x) => x.id === id);
    if (!t) throw new TaskBoardError(`there is no thought ${id}`);
    return t;
  }

  createTask(spec: NewTask): Task {
    return this.atomically(() => this.addTask(spec));
  }

  /** Adds subtasks the parent requires (so the parent waits for them); an in-progress parent is
   * released to open. Subtasks may require each other (`after`) and existing tasks (`requires`). */
  decompose(parentId: number, specs: SubtaskSpec[], opts: { maxDepth?: number } = {}): Task[] {
    return this.atomically(() => {
      const parent = this.task(parentId);
      if (parent.status === 'closed' || parent.status === 'failed_with_current_available_instruments') {
        throw new TaskBoardError(`${describeTask(parent)} is ${parent.status}; only an open or in-progress task can be decomposed`);
      }
      if (specs.length === 0) throw new TaskBoardError(`decomposing ${describeTask(parent)} needs at least one subtask`);
      const depth = (parent.depth ?? 0) + 1;
      if (opts.maxDepth !== undefined && depth > opts.maxDepth) {
        throw new TaskBoardError(`${describeTask(parent)} is at the maximum decomposition depth (${opts.maxDepth}); solve it directly`);
      }
      const created: Task[] = [];
      specs.forEach((spec, i) => {
        const after = (spec.after ?? []).map((j) => {
          if (!Number.isInteger(j) || j < 0 || j >= i) {
            throw new TaskBoardError(
              `subtask ${i} ("${spec.name}") of ${describeTask(parent)}: "after" must name earlier subtasks by index 0..${i - 1}, got ${j}`,
            );
          }
          return created[j]!.id;
        });
        const origin = { tasks: [parentId, ...(spec.origin?.tasks ?? [])], thoughts: spec.origin?.thoughts ?? [] };
        created.push(
          this.addTask({ ...spec, value: spec.value ?? parent.value, requires: [...after, ...(spec.requires ?? [])], origin }, depth),
        );
      });
      for (const sub of created) this.link(parent, sub);
      if (parent.status === 'in_progress') {
        parent.status = 'open';
        parent.stream_of_consciousness.push(`Decomposed into ${created.map((t) => t.id).join(', ')}; waiting for them.`);
      } else {
        parent.stream_of_consciousness.push(`Decomposed into ${created.map((t) => t.id).join(', ')}.`);
      }
      return created;
    });
  }

  /** Makes `taskId` require `requiredId`; refused when it would close a dependency cycle. */
  addRequirement(taskId: number, requiredId: number): void {
    this.atomically(() => this.link(this.task(taskId), this.task(requiredId)));
  }

  start(id: number): Task {
    return this.atomically(() => {
      const t = this.task(id);
      assertTransition(t, 'in_progress');
      this.assertRequirementsClosed(t, 'start');
      t.status = 'in_progress';
      return t;
    });
  }

  close(id: number, answer: string): Task {
    return this.atomically(() => {
      const t = this.task(id);
      assertTransition(t, 'closed');
      this.assertRequirementsClosed(t, 'be closed');
      t.status = 'closed';
      t.answer = answer;
      return t;
    });
  }

  fail(id: number, reason: string): Task {
    return this.atomically(() => {
      const t = this.task(id);
      assertTransition(t, 'failed_with_current_available_instruments');
      t.status = 'failed_with_current_available_instruments';
      t.answer = reason;
      return t;
    });
  }

  /**
   * A new mission replaced the one these tasks were for: every open or in-progress task is
   * archived (final; not offered, not waited for), with `note` in its stream. Returns them.
   */
  archiveUnfinished(note: string): Task[] {
    return this.atomically(() => {
      const unfinished = this.tasks.filter((t) => t.status === 'open' || t.status === 'in_progress');
      for (const t of unfinished) {
        assertTransition(t, 'archived');
        t.status = 'archived';
        t.stream_of_consciousness.push(note);
      }
      return unfinished;
    });
  }

  /** Puts an in-progress task back to open (e.g. to wait for a new requirement). */
  release(id: number, note?: string): Task {
    return this.atomically(() => {
      const t = this.task(id);
      assertTransition(t, 'open');
      t.status = 'open';
      if (note) t.stream_of_consciousness.push(note);
      return t;
    });
  }

  /** Adds a note to a task's stream of consciousness. */
  annotate(id: number, text: string): Task {
    const t = this.task(id);
    if (!text.trim()) throw new TaskBoardError(`annotating ${describeTask(t)} needs some text`);
    t.stream_of_consciousness.push(text);
    return t;
  }

  setResourceLevel(id: number, level: string): Task {
    const t = this.task(id);
    t.resource_level = level;
    return t;
  }

  /** Adds scored routes to the task in progress, or refinements of its route being tried. */
  addRoutes(taskId: number, routes: readonly NewRoute[], maxDepth: number, parent?: number): Route[] {
    return this.atomically(() => addRoutes(this.task(taskId), routes, maxDepth, parent));
  }

  /** Starts the task's next route (depth-first, best first) within its steps at `level`. */
  nextRoute(taskId: number, level: string, maxSteps: number): Route {
    return this.atomically(() => nextRoute(this.task(taskId), level, maxSteps));
  }

  routeResult(taskId: number, routeId: number, outcome: 'succeeded' | 'failed', note: string): Route {
    return this.atomically(() => routeResult(this.task(taskId), routeId, outcome, note));
  }

  /** The task in progress (the flow works on one at a time), if any. */
  inProgress(): Task | undefined {
    return this.tasks.find((t) => t.status === 'in_progress');
  }

  addThought(spec: NewThought): Thought {
    if (!spec.name?.trim()) throw new TaskBoardError('a thought needs a name');
    if (!spec.content?.trim()) throw new TaskBoardError(`thought "${spec.name}" needs some content`);
    const task = spec.task !== undefined ? this.task(spec.task) : undefined;
    const thought: Thought = {
      id: this.nextThoughtId++,
      name: spec.name,
      content: spec.content,
      ...(task ? { task: task.id } : {}),
      ...(spec.turn !== undefined ? { turn: spec.turn } : {}),
    };
    this.thoughtList.push(thought);
    task?.stream_of_consciousness.push(`(thought ${thought.id}) ${thought.name}: ${thought.content}`);
    return thought;
  }

  toJSON(): TaskBoardData {
    return structuredClone({
      version: 1,
      next_task_id: this.nextTaskId,
      next_thought_id: this.nextThoughtId,
      tasks: this.tasks as Task[],
      thoughts: this.thoughtList,
    });
  }

  /** A board from already-checked data (see parseTaskBoard for untrusted input). */
  static fromData(data: TaskBoardData): TaskBoard {
    const board = new TaskBoard();
    board.restore(structuredClone(data));
    const cycle = findCycle(board.tasks);
    if (cycle) throw new TaskBoardError(`dependency cycle: ${cycle.join(' -> ')}`);
    return board;
  }

  private restore(data: TaskBoardData): void {
    this.nextTaskId = data.next_task_id;
    this.nextThoughtId = data.next_thought_id;
    this.taskMap.clear();
    for (const t of data.tasks) this.taskMap.set(t.id, t);
    this.thoughtList.splice(0, this.thoughtList.length, ...data.thoughts);
  }

  /** Runs a change; if it throws, the board is put back as it was. */
  private atomically<T>(change: () => T): T {
    const before = this.toJSON();
    try {
      return change();
    } catch (err) {
      this.restore(before);
      throw err;
    }
  }

  private addTask(spec: NewTask, depth = 0): Task {
    if (typeof spec.name !== 'string' || !spec.name.trim()) throw new TaskBoardError('a task needs a name');
    const task: Task = {
      id: this.nextTaskId++,
      name: spec.name.trim(),
      description: spec.description ?? '',
      status: 'open',
      value: spec.value ?? 'medium',
      tasks_required: [],
      tasks_depending: [],
      origin: { tasks: [...new Set(spec.origin?.tasks ?? [])], thoughts: [...new Set(spec.origin?.thoughts ?? [])] },
      stream_of_consciousness: [],
      ...(spec.resource_level ? { resource_level: spec.resource_level } : {}),
      depth,
    };
    for (const id of task.origin.tasks) this.task(id);
    for (const id of task.origin.thoughts) this.thought(id);
    this.taskMap.set(task.id, task);
    for (const r of spec.requires ?? []) this.link(task, this.task(r));
    return task;
  }

  /** `task` requires `required`; keeps both lists in step and refuses cycles. */
  private link(task: Task, required: Task): void {
    if (task.tasks_required.includes(required.id)) return;
    if (task.status === 'closed' || task.status === 'failed_with_current_available_instruments') {
      throw new TaskBoardError(`${describeTask(task)} is ${task.status} and cannot gain a requirement`);
    }
    const cycle = findCycleThrough(this.taskMap, task.id, required.id);
    if (cycle) {
      throw new TaskBoardError(
        `${describeTask(task)} cannot require ${describeTask(required)}: that would make a dependency cycle ${cycle.join(' -> ')}`,
      );
    }
    task.tasks_required.push(required.id);
    required.tasks_depending.push(task.id);
  }

  private assertRequirementsClosed(t: Task, action: string): void {
    const pending = t.tasks_required.map((id) => this.task(id)).filter((r) => r.status !== 'closed');
    if (pending.length === 0) return;
    throw new TaskBoardError(
      `${describeTask(t)} cannot ${action}: it requires ${pending.map((r) => `${describeTask(r)} (${r.status})`).join(', ')}`,
    );
  }
}

export type { Task, Thought, TaskStatus, TaskValue };
