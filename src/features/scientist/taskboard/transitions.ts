// Which status changes a task may make, and the error for the others.
import { describeTask, TaskBoardError, type Task, type TaskStatus } from './task.js';

/** Allowed moves: open -> in_progress (start) or failed (given up, e.g. a required task failed);
 * in_progress -> closed, failed, or back to open (released, e.g. after being decomposed); open or
 * in_progress -> archived (a new mission replaced theirs). closed, failed and archived are final. */
export const TRANSITIONS: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  open: ['in_progress', 'failed_with_current_available_instruments', 'archived'],
  in_progress: ['closed', 'failed_with_current_available_instruments', 'open', 'archived'],
  closed: [],
  failed_with_current_available_instruments: [],
  archived: [],
};

export function canTransition(from: TaskStatus, to: TaskStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

/** Throws a TaskBoardError naming the task, the move and what is allowed instead. */
export function assertTransition(task: Task, to: TaskStatus): void {
  if (canTransition(task.status, to)) return;
  const allowed = TRANSITIONS[task.status];
  const hint = allowed.length === 0 ? `${task.status} is final` : `from ${task.status} it can only become ${allowed.join(' or ')}`;
  throw new TaskBoardError(`${describeTask(task)} cannot go from ${task.status} to ${to}: ${hint}`);
}
