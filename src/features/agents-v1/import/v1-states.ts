// sop import (Agents 1.0): one state converted into a SOP state (roles, opening turn,
// transitions, controller, summaries, components per role), the finish state, and the states
// reachable from the root.
import type { LlmSettings, SopComponents, SopState } from '../../../format/sop/types.js';
import { has, literalText, type ImportLog, type KeyPath } from './import-log.js';
import { isObject } from '../../../shared/util/is-object.js';
import { convertComponents } from './v1-components.js';
import type { V1Settings } from './v1-config-block.js';
import { readLlmBlock } from './v1-llm.js';
import type { Tables } from './v1-agents.js';
import { convertController } from './v1-controller.js';

const STATE_KEYS = new Set([
  'roles',
  'begin_role',
  'begin_query',
  'environment_prompt',
  'LLM_type',
  'LLM',
  'log_path',
  'controller',
  'summary_system_prompt',
  'summary_last_prompt',
  'summary_prompt',
  'agent_states',
  'name',
]);
export function reachableStates(root: string, relations: Record<string, unknown>, finish: string): Set<string> {
  const seen = new Set<string>();
  const todo = [root];
  while (todo.length > 0) {
    const s = todo.pop()!;
    if (seen.has(s)) continue;
    seen.add(s);
    if (s === finish) continue;
    const rel = has(relations, s) ? relations[s] : undefined;
    if (isObject(rel)) for (const t of Object.values(rel)) if (typeof t === 'string') todo.push(t);
  }
  return seen;
}

export function finishState(name: string, st: Record<string, unknown>, relations: Record<string, unknown>, log: ImportLog): SopState {
  const unused = Object.keys(st).filter(
    (k) => k !== 'name' && !(k === 'agent_states' && isObject(st[k]) && Object.keys(st[k] as object).length === 0),
  );
  if (unused.length > 0) {
    log.warn(
      ['states', name],
      `"${name}" is the finish state: entering it ends the run, so its ${unused.join(', ')} never run (as in Agents 1.0); not carried`,
    );
  }
  if (has(relations, name) && isObject(relations[name]))
    log.warn(['relations', name], `transitions out of the finish state "${name}" are never taken (as in Agents 1.0); not carried`);
  return { final: true };
}

export interface StateContext {
  relations: Record<string, unknown>;
  states: Record<string, unknown>;
  finish: string;
  god: LlmSettings | undefined;
  settings: V1Settings;
  tables: Tables;
  reachable: Set<string>;
  log: ImportLog;
  configFile: string;
  outDir: string;
}

export function convertState(name: string, st: Record<string, unknown>, c: StateContext): SopState {
  const { log } = c;
  const at = (...rest: Array<string | number>): KeyPath => ['states', name, ...rest];
  for (const key of Object.keys(st)) {
    if (key === 'agent_state')
      log.warn(at(key), 'misspelt "agent_state" (Agents 1.0 silently ignored it; the key is "agent_states"); not carried');
    else if (!STATE_KEYS.has(key)) log.warn(at(key), 'unknown key; not carried');
  }
  if (st.name !== undefined && st.name !== name)
    log.warn(at('name'), `"${String(st.name)}" differs from the state's key "${name}"; the key is used`);
  const out: Record<string, unknown> = {};
  const agentStates = isObject(st.agent_states) ? st.agent_states : {};
  if (st.agent_states !== undefined && !isObject(st.agent_states)) log.error(at('agent_states'), 'must be an object: role -> components');

  let roles: string[];
  if (Array.isArray(st.roles) && st.roles.length > 0) {
    roles = [];
    st.roles.forEach((r, i) => {
      if (typeof r !== 'string' || r === '') log.error(at('roles', i), 'must be a role name');
      else if (roles.includes(r)) log.warn(at('roles', i), `"${r}" is listed twice; listed once`);
      else roles.push(r);
    });
  } else {
    roles = Object.keys(agentStates);
    if (roles.length === 0) log.error(at(), 'has no roles and no agent_states, so nobody can speak in it');
  }
  out.roles = roles;

  const humansHere = new Set<string>();
  for (const [role, player] of c.tables.players.get(name) ?? []) if (c.tables.humans.has(player)) humansHere.add(role);

  // Opening turn.
  if (typeof st.begin_role === 'string') {
    out.begin_role = st.begin_role;
    if (typeof st.begin_query === 'string') out.begin_query = literalText(st.begin_query);
    else if (!humansHere.has(st.begin_role)) {
      log.warn(
        at('begin_role'),
        'explicit begin_role without begin_query: Agents 1.0 opened the state with a single space; sop asks the LLM instead (--compat agents-v1 restores the space)',
      );
    }
  } else if (st.begin_role !== undefined) {
    log.warn(at('begin_role'), 'must be a role name; not carried');
  } else if (st.begin_query !== undefined) {
    log.warn(at('begin_query'), 'never said: Agents 1.0 used begin_query only with an explicit begin_role; not carried');
  }
  if (typeof st.environment_prompt === 'string' && st.environment_prompt !== '')
    out.environment_prompt = literalText(st.environment_prompt);

  // Transitions.
  const next = convertRelations(name, c);
  out.next_states = next;
  const successors = Object.keys(next).length;

  // Controller (judge with 2+ successors, router for rule with 2+ roles).
  const controller = convertController(name, st.controller, successors, roles.length, c);
  if (controller) out.controller = controller;

  // Summaries: the state's own LLM block is its summariser's, nothing else's.
  const summary: Record<string, unknown> = {};
  if (typeof st.summary_system_prompt === 'string' && st.summary_system_prompt !== '')
    summary.system_prompt = literalText(st.summary_system_prompt);
  const stateLlm = readLlmBlock(st, at(), log);
  if (stateLlm) {
    summary.llm = stateLlm;
    log.warnOnce(
      'state-llm',
      at('LLM'),
      "a state's LLM block drives only its environment summaries in Agents 1.0, not its agents (they use their role's LLM or the default gpt-3.5-turbo-16k-0613 at 0.3) nor the judge; carried as summary.llm",
    );
  }
  if (Object.keys(summary).length > 0) out.summary = summary;
  if (st.summary_last_prompt !== undefined) log.warn(at('summary_last_prompt'), 'never used by Agents 1.0; not carried');
  if (st.summary_prompt !== undefined)
    log.warn(at('summary_prompt'), 'per-agent summaries practically never ran in Agents 1.0 and sop does not make them; not carried');

  // Components per role.
  const components: Record<string, SopComponents> = {};
  for (const [role, map] of Object.entries(agentStates)) {
    const rat = at('agent_states', role);
    if (!isObject(map)) {
      log.error(rat, 'must be an object of components');
      continue;
    }
    if (!roles.includes(role) && !c.tables.claims.has(`${name}\u0000${role}`)) {
      log.warn(
        rat,
        `role "${role}" is not in "roles" and no agent plays it, so it never speaks (Agents 1.0 ignored it silently); not carried`,
      );
      continue;
    }
    if (humansHere.has(role)) {
      if (Object.keys(map).length > 0)
        log.warn(rat, 'a human plays this role, so its components are never used (as in Agents 1.0); not carried');
      continue;
    }
    const comps = convertComponents(map, { log, path: rat, configFile: c.configFile, outDir: c.outDir, settings: c.settings });
    if (Object.keys(comps).length > 0) components[role] = comps;
  }
  if (Object.keys(components).length > 0) out.components = components;
  return out;
}

function convertRelations(name: string, c: StateContext): Record<string, string> {
  const { log } = c;
  const rel = has(c.relations, name) ? c.relations[name] : undefined;
  if (!isObject(rel) || Object.keys(rel).length === 0) {
    if (c.reachable.has(name)) {
      log.error(
        ['relations', name],
        `state "${name}" has no relations (Agents 1.0 fails when the run leaves it); add "${name}": {"0": "${name}"} to stay, or a way on`,
      );
      return {};
    }
    log.warn(['relations'], `state "${name}" has no relations; it is unreachable, so sop makes it stay on itself`);
    return { '0': name };
  }
  const out: Record<string, string> = {};
  for (const [key, target] of Object.entries(rel)) {
    const at = ['relations', name, key];
    if (!/^[0-9]+$/.test(key)) {
      log.error(at, `key "${key}" must be a digit string ("0" stays, "1" moves on)`);
      continue;
    }
    if (typeof target !== 'string' || (!has(c.states, target) && target !== c.finish)) {
      log.error(at, `target ${JSON.stringify(target)} is not in "states"`);
      continue;
    }
    out[key] = target;
  }
  const keys = Object.keys(out);
  if (keys.length === 1 && keys[0] !== '0') {
    log.warn(
      ['relations', name, keys[0]!],
      `a single transition is always taken under key "0" (Agents 1.0 fails on any other key); read as "0"`,
    );
    return { '0': out[keys[0]!]! };
  }
  return out;
}
