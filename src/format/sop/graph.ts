// Graph helpers over a SOP: roles of a state, successors, reachability and Mermaid output.
import type { Sop, SopState } from './types.js';

/** The speaking roster: `roles`, or else the roles that have components. */
export function effectiveRoles(state: SopState): string[] {
  if (state.roles && state.roles.length > 0) return [...state.roles];
  return Object.keys(state.components ?? {});
}

/** The transitions of a state as [key, target] pairs (none for a final state). */
export function successorsOf(state: SopState): Array<[key: string, target: string]> {
  if (state.final) return [];
  const out = Object.entries(state.next_states ?? {});
  // a population state's metric transitions (keyed "when:N" here)
  (state.transitions ?? []).forEach((t, i) => out.push([`when:${i}`, t.to]));
  return out;
}

export function reachableStates(sop: Sop): Set<string> {
  const seen = new Set<string>();
  const todo = [sop.root];
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (seen.has(name) || !Object.prototype.hasOwnProperty.call(sop.states, name)) continue;
    seen.add(name);
    for (const [, target] of successorsOf(sop.states[name]!)) todo.push(target);
  }
  return seen;
}

function mermaidId(name: string, ids: Map<string, string>): string {
  let id = ids.get(name);
  if (!id) {
    id = `s${ids.size}`;
    ids.set(name, id);
  }
  return id;
}

/**
 * Text safe inside a quoted Mermaid label: no quotes, line breaks, separators, HTML tags, or
 * "%%" (which starts a Mermaid comment or an %%{init}%% directive anywhere in the text).
 */
function mermaidLabel(text: string): string {
  return text
    .replace(/["\n\r]/g, ' ')
    .replace(/[:;]/g, ' ')
    .replace(/</g, '‹')
    .replace(/>/g, '›')
    .replace(/%(?=%)/g, '% ');
}

/**
 * The lines of a state's box: its name; its roles, people marked "(human)"; its controller
 * type; the sub-SOPs its commands call (executor `sop`: command name and file).
 */
export function stateLines(sop: Sop, name: string): string[] {
  const state = sop.states[name]!;
  if (state.final) return [`${name} (final)`];
  const human = new Set(
    Object.values(sop.agents)
      .filter((a) => a.human)
      .map((a) => a.roles?.[name])
      .filter((r) => r !== undefined),
  );
  if (state.population) return populationLines(name, state);
  const roles = effectiveRoles(state).map((r) => (human.has(r) ? `${r} (human)` : r));
  const lines = [name];
  if (roles.length) lines.push(roles.join(', '));
  lines.push(`${state.controller?.type ?? 'order'} controller`);
  const calls = Object.entries(state.commands ?? {})
    .filter(([, c]) => c.executor === 'sop')
    .map(([command, c]) => {
      const file = c.settings?.file;
      return typeof file === 'string' ? `${command} (${file})` : command;
    });
  if (calls.length) lines.push(`calls ${calls.join(', ')}`);
  return lines;
}

/**
 * A population state's box: what it is (agents acting on a world per step), not a turn state's
 * roles and controller: its agents, its world, the tier that decides and how many steps at most.
 */
function populationLines(name: string, state: SopState): string[] {
  const pop = state.population!;
  const source = pop.source as { file?: unknown; generate?: { n?: unknown } };
  const agents =
    typeof source.file === 'string'
      ? `population of ${source.file}`
      : typeof source.generate?.n === 'number'
        ? `population of ${source.generate.n} generated agents`
        : 'population';
  const world = (state.world as { type?: unknown } | undefined)?.type;
  const tier = (state.cognition as { tier?: unknown } | undefined)?.tier;
  const how = [
    ...(typeof tier === 'string' ? [`${tier} tier`] : []),
    ...(typeof state.max_steps === 'number' ? [`up to ${state.max_steps} steps`] : []),
  ];
  return [name, typeof world === 'string' ? `${agents} · ${world} world` : agents, ...(how.length ? [how.join(' · ')] : [])];
}

/** Additions for a run's picture (sop view): a line under a state's box text and a class per state. */
export interface MermaidMarks {
  extraLine?: (state: string) => string | undefined;
  classOf?: (state: string) => string | undefined;
  classDefs?: Record<string, string>;
}

/** A Mermaid stateDiagram-v2 of the states and their transitions. */
export function toMermaid(sop: Sop, marks: MermaidMarks = {}): string {
  const ids = new Map<string, string>();
  const lines = ['stateDiagram-v2'];
  for (const [k, v] of Object.entries(marks.classDefs ?? {})) lines.push(`    classDef ${k} ${v}`);
  for (const name of Object.keys(sop.states)) {
    const id = mermaidId(name, ids);
    const extra = marks.extraLine?.(name);
    const label = [...stateLines(sop, name), ...(extra ? [extra] : [])].map(mermaidLabel).join('<br/>');
    lines.push(`    state "${label}" as ${id}`);
    const cls = marks.classOf?.(name);
    if (cls) lines.push(`    class ${id} ${cls}`);
  }
  lines.push(`    [*] --> ${mermaidId(sop.root, ids)}`);
  for (const [name, state] of Object.entries(sop.states)) {
    const from = mermaidId(name, ids);
    if (state.final) {
      lines.push(`    ${from} --> [*]`);
      continue;
    }
    const next = state.next_states ?? {};
    const keys = Object.keys(next);
    if (state.population) {
      // a population state leaves by a metric transition, or by next_states["1"] after its steps
      for (const t of state.transitions ?? []) lines.push(`    ${from} --> ${mermaidId(t.to, ids)} : ${mermaidLabel(`when ${t.when}`)}`);
      for (const [key, target] of Object.entries(next)) {
        const label = key === '1' && typeof state.max_steps === 'number' ? `after ${state.max_steps} steps` : `next ${key}`;
        lines.push(`    ${from} --> ${mermaidId(target, ids)} : ${mermaidLabel(label)}`);
      }
      continue;
    }
    for (const [key, target] of Object.entries(next)) {
      const maxTurns = state.controller?.max_turns;
      let label: string;
      // actions: a state with commands leaves by a finish command (or max_turns), never by a judge
      if (state.commands && Object.keys(state.commands).length > 0 && key === '1')
        label = maxTurns !== undefined ? `finish or ${maxTurns} turns` : 'finish';
      // scientist: other keys of a command state are taken by a command's settings.finish
      else if (state.commands && Object.keys(state.commands).length > 0 && key !== '0') label = `finish ${key}`;
      else if (keys.length === 1 && key === '0') label = 'next';
      else if (key === '0') label = target === name ? 'stay (0)' : 'judge 0';
      else if (key === '1' && maxTurns !== undefined) label = `judge 1 or ${maxTurns} turns`;
      else label = `judge ${key}`;
      lines.push(`    ${from} --> ${mermaidId(target, ids)} : ${mermaidLabel(label)}`);
    }
  }
  return lines.join('\n') + '\n';
}
