// Routes of a task (seed 003): possible ways to solve it, each with a score. They are tried
// depth-first: the refinements of the route being tried come before its siblings, the best
// scored first; when every refinement of a route failed, the route failed (backtracking); when
// one succeeded, so did the route. A maximum depth bounds the refinements, and the steps a task
// may take at its resource level bound how many routes it tries.
import { describeTask, TaskBoardError, type Route, type Task } from './task.js';

export interface NewRoute {
  description: string;
  score: number;
}

function routesOf(task: Task): Route[] {
  return (task.routes ??= []);
}

export function route(task: Task, id: number): Route {
  const r = task.routes?.find((x) => x.id === id);
  if (!r) {
    const ids = (task.routes ?? []).map((x) => x.id);
    throw new TaskBoardError(
      `${describeTask(task)} has no route ${id}${ids.length ? ` (routes: ${ids.join(', ')})` : '; add routes first'}`,
    );
  }
  return r;
}

/** Adds routes to an in-progress task, or refinements of the route being tried (`parent`). */
export function addRoutes(task: Task, routes: readonly NewRoute[], maxDepth: number, parent?: number): Route[] {
  if (task.status !== 'in_progress')
    throw new TaskBoardError(`${describeTask(task)} is ${task.status}; routes are added to the task in progress`);
  if (routes.length === 0) throw new TaskBoardError(`no routes given for ${describeTask(task)}`);
  let depth = 1;
  if (parent !== undefined) {
    const p = route(task, parent);
    if (p.status !== 'trying')
      throw new TaskBoardError(`route ${parent} of ${describeTask(task)} is ${p.status}; only the route being tried can be refined`);
    depth = p.depth + 1;
  }
  if (depth > maxDepth) {
    throw new TaskBoardError(
      `route ${parent} of ${describeTask(task)} is at the maximum depth (${maxDepth}); try it directly and report its result`,
    );
  }
  const list = routesOf(task);
  return routes.map((r, i) => {
    if (typeof r.description !== 'string' || !r.description.trim()) throw new TaskBoardError(`route ${i + 1} has no description`);
    if (typeof r.score !== 'number' || !(r.score >= 0 && r.score <= 1))
      throw new TaskBoardError(`route ${i + 1} ("${r.description}") needs a score from 0 to 1, got ${r.score}`);
    const added: Route = {
      id: list.length + 1,
      description: r.description.trim(),
      score: r.score,
      depth,
      ...(parent !== undefined ? { parent } : {}),
      status: 'untried',
    };
    list.push(added);
    return added;
  });
}

/** Routes tried at a level (the steps spent there). */
export function stepsAt(task: Task, level: string): number {
  return (task.routes ?? []).filter((r) => r.status !== 'untried' && r.level === level).length;
}

/** The next route in depth-first, best-first order, or the reason there is none. */
export function pickRoute(task: Task): Route | string {
  const list = task.routes ?? [];
  const byId = new Map(list.map((r) => [r.id, r]));
  const leaf = list.find((r) => r.status === 'trying' && !list.some((c) => c.parent === r.id && c.status !== 'failed'));
  if (leaf) return `route ${leaf.id} ("${leaf.description}") is being tried: report its result first, or refine it into sub-routes`;
  const candidates = list.filter((r) => r.status === 'untried' && (r.parent === undefined || byId.get(r.parent)?.status === 'trying'));
  if (candidates.length === 0) {
    return list.length === 0
      ? 'the task has no routes yet: add some'
      : 'every route has been tried: add new routes, escalate, or close or fail the task';
  }
  candidates.sort((a, b) => b.depth - a.depth || b.score - a.score || a.id - b.id);
  return candidates[0]!;
}

/** Starts the next route at `level`, within `maxSteps` routes per level. */
export function nextRoute(task: Task, level: string, maxSteps: number): Route {
  if (task.status !== 'in_progress') throw new TaskBoardError(`${describeTask(task)} is ${task.status}; start it before trying routes`);
  if (stepsAt(task, level) >= maxSteps) {
    throw new TaskBoardError(
      `${describeTask(task)} has used its ${maxSteps} step(s) at level ${level}: evaluate what you have, escalate, or close or fail it`,
    );
  }
  const picked = pickRoute(task);
  if (typeof picked === 'string') throw new TaskBoardError(`no route to try for ${describeTask(task)}: ${picked}`);
  picked.status = 'trying';
  picked.level = level;
  return picked;
}

/** Records a route's outcome; propagates to the routes it refines. */
export function routeResult(task: Task, id: number, outcome: 'succeeded' | 'failed', note: string): Route {
  const r = route(task, id);
  if (r.status !== 'trying') throw new TaskBoardError(`route ${id} of ${describeTask(task)} is ${r.status}, not being tried`);
  r.status = outcome;
  if (note.trim()) r.note = note.trim();
  const list = task.routes!;
  for (
    let p = r.parent !== undefined ? route(task, r.parent) : undefined;
    p && p.status === 'trying';
    p = p.parent !== undefined ? route(task, p.parent) : undefined
  ) {
    const children = list.filter((c) => c.parent === p.id);
    if (outcome === 'succeeded') {
      p.status = 'succeeded';
    } else if (children.every((c) => c.status === 'failed')) {
      p.status = 'failed';
      p.note = 'all its refinements failed';
    } else {
      break;
    }
  }
  return r;
}
