// The graph around a state, as call metadata for providers that walk it: the mock's dry runs
// choose judge keys and commands with it so that a dry run visits the graph and ends in a final
// state. Models never see it (metadata is not sent).
import type { WalkInfo } from './types.js';
import type { ResolvedSop } from '../../format/sop/resolved.js';
/** What the walk reads of a state's counters in the run's position. */
type StateRuntime = { chatNums: number; visits: number };

const stepsCache = new WeakMap<ResolvedSop, Map<string, number>>();

/** Fewest transitions from each state to a final state (absent: no final state is reachable). */
export function stepsToFinal(resolved: ResolvedSop): Map<string, number> {
  const cached = stepsCache.get(resolved);
  if (cached) return cached;
  const into = new Map<string, string[]>();
  for (const s of Object.values(resolved.states)) {
    for (const t of Object.values(s.nextStates)) into.set(t, [...(into.get(t) ?? []), s.name]);
  }
  const steps = new Map<string, number>();
  let frontier = Object.values(resolved.states)
    .filter((s) => s.final)
    .map((s) => s.name);
  for (const f of frontier) steps.set(f, 0);
  for (let d = 1; frontier.length > 0; d++) {
    const next: string[] = [];
    for (const t of frontier) {
      for (const s of into.get(t) ?? [])
        if (!steps.has(s)) {
          steps.set(s, d);
          next.push(s);
        }
    }
    frontier = next;
  }
  stepsCache.set(resolved, steps);
  return steps;
}

/** The next_states key a command takes when it succeeds: finish and accepted reviews take "1", `settings.finish` names one. */
function commandKey(def: { executor: string; settings?: Record<string, unknown> }): string | undefined {
  const s = def.settings ?? {};
  if (typeof s.finish === 'string') return s.finish;
  if (def.executor === 'finish') return '1';
  if (def.executor === 'human' && s.kind === 'review' && s.finish_on_accept !== false) return '1';
  return undefined;
}

export function walkMeta(
  resolved: ResolvedSop,
  stateName: string,
  runtimes: Record<string, StateRuntime | undefined>,
  seed: number,
): WalkInfo {
  const state = resolved.states[stateName]!;
  const steps = stepsToFinal(resolved);
  const routes = Object.entries(state.nextStates).map(([key, target]) => ({
    key,
    target,
    steps: steps.get(target) ?? -1,
    visits: runtimes[target]?.visits ?? 0,
  }));
  const commands = state.def.commands;
  const commandKeys: Record<string, string> = {};
  for (const [name, def] of Object.entries(commands ?? {})) {
    const key = commandKey(def);
    if (key !== undefined) commandKeys[name] = key;
  }
  return {
    seed,
    routes,
    turnsBefore: state.def.begin_query !== undefined ? 1 : 0,
    ...(state.maxTurns !== undefined ? { maxTurns: state.maxTurns } : {}),
    ...(commands ? { commandKeys } : {}),
  };
}
