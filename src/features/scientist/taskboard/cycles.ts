// Dependency cycles among tasks (edges: a task -> each task it requires).
import type { Task } from './task.js';

type Graph = ReadonlyMap<number, Pick<Task, 'id' | 'tasks_required'>>;

/** If `from` may not require `to` because `to` already (transitively) requires `from`, the
 * cycle as ids `[from, to, ..., from]`; otherwise null. */
export function findCycleThrough(graph: Graph, from: number, to: number): number[] | null {
  if (from === to) return [from, from];
  // Depth-first search from `to` along requirements, looking for `from`.
  const parent = new Map<number, number>();
  const stack = [to];
  const seen = new Set([to]);
  while (stack.length > 0) {
    const id = stack.pop()!;
    for (const next of graph.get(id)?.tasks_required ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      parent.set(next, id);
      if (next === from) {
        const path = [from];
        for (let at = from; at !== to;) {
          at = parent.get(at)!;
          path.push(at);
        }
        return [from, ...path.reverse()];
      }
      stack.push(next);
    }
  }
  return null;
}

/** Any cycle in the requirement graph, as ids `[a, b, ..., a]`, or null. Iterative: never
 * recurses deeply and always terminates. */
export function findCycle(tasks: Iterable<Pick<Task, 'id' | 'tasks_required'>>): number[] | null {
  const graph = new Map<number, Pick<Task, 'id' | 'tasks_required'>>();
  for (const t of tasks) graph.set(t.id, t);
  const color = new Map<number, 1 | 2>(); // 1: on the current path, 2: done
  for (const start of graph.keys()) {
    if (color.has(start)) continue;
    const path: number[] = [start];
    const iters: number[] = [0];
    color.set(start, 1);
    while (path.length > 0) {
      const id = path[path.length - 1]!;
      const reqs = graph.get(id)?.tasks_required ?? [];
      const i = iters[iters.length - 1]!;
      if (i >= reqs.length) {
        color.set(id, 2);
        path.pop();
        iters.pop();
        continue;
      }
      iters[iters.length - 1] = i + 1;
      const next = reqs[i]!;
      const c = color.get(next);
      if (c === 1) return [...path.slice(path.indexOf(next)), next];
      if (c === undefined && graph.has(next)) {
        color.set(next, 1);
        path.push(next);
        iters.push(0);
      }
    }
  }
  return null;
}
