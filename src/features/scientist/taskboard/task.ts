// The records of the task board (working memory): tasks and thoughts, as stored in task_board.json.
import { EngineError } from '../../../shared/errors.js';

/** archived: open or in progress when a new mission (--goal with --memory-dir) replaced the one it was for. */
export const TASK_STATUSES = ['open', 'in_progress', 'closed', 'failed_with_current_available_instruments', 'archived'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

/** A task's value decides the resources it may use (see src/features/scientist/resources.ts). */
export const TASK_VALUES = ['high', 'medium', 'low'] as const;
export type TaskValue = (typeof TASK_VALUES)[number];

/** What led to a task: the tasks and thoughts it came from (empty for the mission's first tasks). */
export interface TaskOrigin {
  tasks: number[];
  thoughts: number[];
}

export interface Task {
  /** Monotonic: each new task gets the next number, never reused. */
  id: number;
  name: string;
  description: string;
  status: TaskStatus;
  value: TaskValue;
  /** Tasks that must be closed before this one can be started or closed. */
  tasks_required: number[];
  /** Tasks that require this one (kept symmetric with tasks_required). */
  tasks_depending: number[];
  origin: TaskOrigin;
  /** The agent's notes and thoughts while working on the task, oldest first. */
  stream_of_consciousness: string[];
  /** The answer given when the task was closed, or the reason it failed. */
  answer?: string;
  /** Current resource level of the task (raised when a solution is not convincing). */
  resource_level?: string;
  /** Decomposition depth: 0 for the mission's tasks, parent's depth + 1 for subtasks. */
  depth?: number;
  /** Scored ways to solve the task, tried depth-first (see routes.ts). */
  routes?: Route[];
}

export const ROUTE_STATUSES = ['untried', 'trying', 'succeeded', 'failed'] as const;
export type RouteStatus = (typeof ROUTE_STATUSES)[number];

export interface Route {
  /** 1-based within its task. */
  id: number;
  description: string;
  /** How likely the route is to solve the task, 0..1. */
  score: number;
  /** 1 for a top-level route, parent's depth + 1 for a refinement. */
  depth: number;
  /** The route this one refines. */
  parent?: number;
  status: RouteStatus;
  /** The resource level the route was tried at. */
  level?: string;
  note?: string;
}

export interface Thought {
  /** Monotonic, like task ids. */
  id: number;
  /** A short name, used to search thoughts by relevance. */
  name: string;
  content: string;
  /** The task the thought was had on, if any. */
  task?: number;
  /** The run's turn when it was had (drives the mood's sentiment). */
  turn?: number;
}

/** A task-board operation that is not allowed (bad id, bad transition, cycle, bad input). */
export class TaskBoardError extends EngineError {
  constructor(message: string) {
    super(message, 'TASK_BOARD');
    this.name = 'TaskBoardError';
  }
}

/** `task 3 "Measure the pendulum"`, for messages. */
export function describeTask(task: Pick<Task, 'id' | 'name'>): string {
  return `task ${task.id} "${task.name}"`;
}
