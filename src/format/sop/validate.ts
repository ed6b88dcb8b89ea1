// Validation of a parsed SOP: the JSON schema (ajv) and the graph checks a schema cannot express.
// The schema validator is ajv standalone code generated at build time (scripts/gen-schema.mjs),
// so no schema is compiled at start-up.
import type { ErrorObject, ValidateFunction } from 'ajv';
import compiledValidator from './sop-validator.generated.js';
import type { Diagnostic } from './diagnostics.js';
import { pointerOf } from './json-source.js';
import type { Sop } from './types.js';
import { effectiveRoles, reachableStates, successorsOf } from './graph.js';
import { ajvProblem, escapeSegment } from '../../shared/util/schema-error.js';

/**
 * A check of another layer (e.g. the commands and executors of src/features/actions), passed into
 * validation so the format layer imports nothing above it (see src/api/loader/checks.ts).
 */
/** A check of a layer above the format; `file` is the SOP file (relative paths in the SOP are resolved from its folder). */
export type SopCheck = (sop: Sop, file?: string) => Diagnostic[];

function schemaValidator(): ValidateFunction {
  return compiledValidator;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

function describeAlternatives(schema: unknown): string {
  if (!Array.isArray(schema)) return 'a valid value';
  return schema
    .map((s: { type?: string; items?: { type?: string } }) =>
      s.type === 'array' && s.items?.type ? `a list of ${s.items.type}s` : (TYPE_WORDS[s.type ?? ''] ?? 'a valid value'),
    )
    .join(' or ');
}

function ajvMessage(e: ErrorObject): { pointer: string; message: string } {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'type':
      return {
        pointer: e.instancePath,
        message: `must be ${TYPE_WORDS[String(p.type)] ?? String(p.type)}, got ${JSON.stringify(e.data)?.slice(0, 60) ?? typeof e.data}`,
      };
    case 'enum': {
      const { pointer, message } = ajvProblem(e);
      return { pointer, message: `${message}, got ${JSON.stringify(e.data)?.slice(0, 60)}` };
    }
    case 'oneOf':
      return { pointer: e.instancePath, message: `must be ${describeAlternatives(e.schema)}` };
    case 'propertyNames':
      return {
        pointer: `${e.instancePath}/${escapeSegment(String(p.propertyName))}`,
        message: `invalid name "${String(p.propertyName)}"`,
      };
    case 'not':
      return { pointer: e.instancePath, message: 'is a reserved name (__proto__, constructor, prototype)' };
    default:
      return ajvProblem(e);
  }
}

/** Schema errors, most specific first, one per pointer. */
export function schemaDiagnostics(doc: unknown): Diagnostic[] {
  const validate = schemaValidator();
  if (validate(doc)) return [];
  const errors = validate.errors ?? [];
  // Inside a oneOf, the branches' own errors are noise: keep only the oneOf summary.
  const oneOfPaths = new Set(errors.filter((e) => e.keyword === 'oneOf').map((e) => e.instancePath));
  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const e of errors) {
    if (e.keyword !== 'oneOf' && [...oneOfPaths].some((p) => e.instancePath === p || e.instancePath.startsWith(p + '/'))) continue;
    if (e.keyword === 'propertyNames') continue; // reported through its nested error with the name
    const { pointer, message } =
      e.keyword === 'not' || e.keyword === 'minLength' || e.keyword === 'maxLength' || e.keyword === 'pattern'
        ? nameAwareMessage(e)
        : ajvMessage(e);
    const key = `${pointer}\u0000${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ severity: 'error', pointer, message });
  }
  return out;
}

// Errors raised on property names carry the name in params.propertyName of the parent error;
// ajv reports nested name errors with an instancePath of the object and a propertyName param.
function nameAwareMessage(e: ErrorObject): { pointer: string; message: string } {
  const p = e.params as Record<string, unknown>;
  const name = (e as ErrorObject & { propertyName?: string }).propertyName;
  if (name !== undefined) {
    const pointer = `${e.instancePath}/${escapeSegment(name)}`;
    if (e.keyword === 'not') return { pointer, message: `"${name}" is a reserved name (__proto__, constructor, prototype)` };
    return { pointer, message: `invalid name "${name}": ${e.message}` };
  }
  if (e.keyword === 'pattern') return { pointer: e.instancePath, message: `must match ${String(p.pattern)}` };
  return ajvMessage(e);
}

/** Checks across the document: references between states, roles and agents; reachability; then `checks`. */
export function graphDiagnostics(sop: Sop, checks: readonly SopCheck[] = [], file?: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const err = (path: Array<string | number>, message: string) => out.push({ severity: 'error', pointer: pointerOf(path), message });
  const warn = (path: Array<string | number>, message: string) => out.push({ severity: 'warning', pointer: pointerOf(path), message });
  const states = sop.states;
  const has = (name: string) => Object.prototype.hasOwnProperty.call(states, name);

  if (!has(sop.root)) err(['root'], `root state "${sop.root}" is not defined in "states"`);

  // Who plays which role, per state.
  const players = new Map<string, Map<string, string[]>>();
  for (const [agentName, agent] of Object.entries(sop.agents)) {
    for (const [stateName, role] of Object.entries(agent.roles ?? {})) {
      if (!has(stateName)) {
        err(['agents', agentName, 'roles', stateName], `state "${stateName}" is not defined in "states"`);
        continue;
      }
      const state = states[stateName]!;
      if (state.final) continue;
      if (!effectiveRoles(state).includes(role)) {
        err(
          ['agents', agentName, 'roles', stateName],
          `role "${role}" is not a role of state "${stateName}" (roles: ${effectiveRoles(state).join(', ') || 'none'})`,
        );
        continue;
      }
      const byRole = players.get(stateName) ?? new Map<string, string[]>();
      players.set(stateName, byRole);
      byRole.set(role, [...(byRole.get(role) ?? []), agentName]);
    }
  }

  for (const [name, state] of Object.entries(states)) {
    const at = (...rest: Array<string | number>) => ['states', name, ...rest];
    if (state.final) continue;
    const roles = effectiveRoles(state);
    const population = state.population !== undefined; // its agents come from data (docs/population.md)
    if (roles.length === 0 && !population) err(at(), `state "${name}" has no roles; list them in "roles" or mark the state "final": true`);
    if (population && roles.length > 0) err(at('roles'), `a population state's agents come from its "population"; it has no "roles"`);
    for (const [i, t] of (state.transitions ?? []).entries())
      if (!has(t.to)) err(at('transitions', i, 'to'), `state "${t.to}" is not defined in "states"`);
    if (state.begin_role !== undefined && !roles.includes(state.begin_role)) {
      err(at('begin_role'), `begin_role "${state.begin_role}" is not one of the state's roles (${roles.join(', ')})`);
    }
    for (const role of Object.keys(state.components ?? {})) {
      if (!roles.includes(role)) warn(at('components', role), `role "${role}" has components but is not in "roles", so it never speaks`);
    }
    for (const role of roles) {
      const who = players.get(name)?.get(role) ?? [];
      if (who.length === 0) err(at('roles'), `role "${role}" is played by no agent; add "${name}": "${role}" to one agent's "roles"`);
      else if (who.length > 1)
        err(at('roles'), `role "${role}" is played by ${who.length} agents (${who.join(', ')}); exactly one must play it`);
    }
    const next = state.next_states ?? {};
    if (Object.keys(next).length === 0) err(at(), `state "${name}" has no "next_states"; add one or mark the state "final": true`);
    for (const [key, target] of Object.entries(next)) {
      if (!has(target)) err(at('next_states', key), `next state "${target}" is not defined in "states"`);
    }
    const onExhausted = state.budget?.on_exhausted; // cost: docs/cost.md
    if (onExhausted !== undefined && !has(onExhausted))
      err(at('budget', 'on_exhausted'), `budget.on_exhausted "${onExhausted}" is not defined in "states"`);
    const maxTurns = state.controller?.max_turns;
    if (maxTurns !== undefined && next['1'] === undefined && Object.keys(next).length > 1) {
      warn(at('controller', 'max_turns'), `max_turns has no effect without next_states["1"]`);
    }
  }

  if (sop.budget?.on_exhausted !== undefined && !has(sop.budget.on_exhausted))
    err(['budget', 'on_exhausted'], `budget.on_exhausted "${sop.budget.on_exhausted}" is not defined in "states"`);
  if (has(sop.root) && out.every((d) => d.severity !== 'error')) {
    const reachable = reachableStates(sop);
    const finals = [...reachable].filter((s) => states[s]?.final);
    if (finals.length === 0 && sop.open_ended !== true)
      err(
        ['states'],
        `no final state is reachable from root "${sop.root}"; mark a state "final": true and link it through next_states, or set "open_ended": true for a SOP that runs until it is stopped`,
      );
    for (const name of Object.keys(states)) {
      if (!reachable.has(name)) warn(['states', name], `state "${name}" is not reachable from root "${sop.root}"`);
    }
    if (finals.length > 0 && sop.open_ended !== true) {
      // Cycles without exit: states a run can enter but never leave for a final state.
      const exits = statesReachingFinal(sop);
      for (const name of reachable) {
        if (!exits.has(name))
          warn(
            ['states', name, 'next_states'],
            `no final state can be reached from state "${name}" (a cycle without exit); a run that enters it stops only at --max-turns`,
          );
      }
    }
  }
  for (const check of checks) out.push(...check(sop, file)); // e.g. executors, settings and arguments of commands
  return out;
}

/** States from which some final state can be reached (final states included). */
function statesReachingFinal(sop: Sop): Set<string> {
  const into = new Map<string, string[]>();
  for (const [name, state] of Object.entries(sop.states)) {
    for (const [, target] of successorsOf(state)) {
      let from = into.get(target);
      if (!from) into.set(target, (from = []));
      from.push(name);
    }
  }
  const seen = new Set<string>();
  const todo = Object.keys(sop.states).filter((n) => sop.states[n]!.final);
  while (todo.length > 0) {
    const name = todo.pop()!;
    if (seen.has(name)) continue;
    seen.add(name);
    todo.push(...(into.get(name) ?? []));
  }
  return seen;
}
