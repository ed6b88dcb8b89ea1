// Which task to work on next: only open tasks whose required tasks are all closed are offered,
// the most valuable first, then the oldest.
import { findCycle } from './cycles.js';
import { TaskBoardError, TASK_VALUES, type Task } from './task.js';

export interface Schedule {
  /** Open tasks whose requirements are all closed, best first. */
  offered: Task[];
  in_progress: Task[];
  /** Open tasks still waiting for requirements that may yet be closed. */
  waiting: Task[];
  /** Open tasks that can never start: a requirement failed (directly or further down). */
  blocked: Array<{ task: Task; failed: number[] }>;
  /** No task is open or in progress. */
  done: boolean;
}

const rank = (t: Task) => TASK_VALUES.indexOf(t.value);

/** Classifies the open tasks. A dependency cycle is reported as an error (it would never end). */
export function schedule(tasks: readonly Task[]): Schedule {
  const cycle = findCycle(tasks);
  if (cycle) throw new TaskBoardError(`dependency cycle: ${cycle.join(' -> ')}; no task on it can ever start`);
  const byId = new Map(tasks.map((t) => [t.id, t]));
  const failedBelow = new Map<number, number[]>();
  const failedUnder = (t: Task): number[] => {
    // Memoised; terminates because the graph has no cycle.
    const known = failedBelow.get(t.id);
    if (known) return known;
    const out = new Set<number>();
    for (const id of t.tasks_required) {
      const r = byId.get(id);
      if (!r) continue;
      if (r.status === 'failed_with_current_available_instruments') out.add(r.id);
      else if (r.status === 'open') for (const f of failedUnder(r)) out.add(f);
    }
    const list = [...out].sort((a, b) => a - b);
    failedBelow.set(t.id, list);
    return list;
  };
  const s: Schedule = { offered: [], in_progress: [], waiting: [], blocked: [], done: true };
  for (const t of tasks) {
    if (t.status === 'in_progress') {
      s.in_progress.push(t);
      s.done = false;
      continue;
    }
    if (t.status !== 'open') continue;
    s.done = false;
    const failed = failedUnder(t);
    if (failed.length > 0) s.blocked.push({ task: t, failed });
    else if (t.tasks_required.every((id) => byId.get(id)?.status === 'closed')) s.offered.push(t);
    else s.waiting.push(t);
  }
  s.offered.sort((a, b) => rank(a) - rank(b) || a.id - b.id);
  return s;
}

/** The task to work on next, or undefined when none is offered. */
export function nextTask(tasks: readonly Task[]): Task | undefined {
  return schedule(tasks).offered[0];
}
