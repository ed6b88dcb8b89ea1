// sop import (Agents 1.0): the agents block read into tables of who plays which role where and
// who is a human, with the two-agent rule Agents 1.0 applies to a bot and a human.
import { has, type ImportLog } from './import-log.js';
import { isObject } from '../../../shared/util/is-object.js';
import type { V1Settings } from './v1-config-block.js';

export interface Tables {
  /** state -> role -> agent (the agent that plays it; the last claim wins, as in Agents 1.0). */
  players: Map<string, Map<string, string>>;
  humans: Set<string>;
  /** Every `state\0role` some agent claims, in the roster or not. */
  claims: Set<string>;
}

export function readAgents(
  agents: Record<string, unknown>,
  states: Record<string, unknown>,
  finish: string,
  settings: V1Settings,
  log: ImportLog,
): Tables {
  const players = new Map<string, Map<string, string>>();
  const humans = new Set<string>();
  const claims = new Set<string>();
  for (const name of settings.userNames) {
    if (!has(agents, name)) log.warn(['config', 'User_Names'], `"${name}" is not one of the agents`);
  }
  for (const [name, a] of Object.entries(agents)) {
    const at = ['agents', name];
    if (!isObject(a)) {
      log.error(at, 'must be an object {style, roles}');
      continue;
    }
    if (typeof a.style !== 'string') log.warn([...at, 'style'], 'missing (Agents 1.0 fails without it); the agent has no style');
    for (const key of Object.keys(a)) if (key !== 'style' && key !== 'roles') log.warn([...at, key], 'unknown key; not carried');
    if (settings.userNames.includes(name)) humans.add(name);
    if (!isObject(a.roles)) {
      log.error([...at, 'roles'], 'must be an object: state -> role');
      continue;
    }
    for (const [state, role] of Object.entries(a.roles)) {
      const rat = [...at, 'roles', state];
      if (typeof role !== 'string' || role === '') {
        log.error(rat, 'must be a role name');
        continue;
      }
      const st = has(states, state) ? states[state] : undefined;
      if (!isObject(st)) {
        log.error(rat, `state "${state}" is not in "states"`);
        continue;
      }
      if (state === finish) continue; // the finish state never runs
      const comps = isObject(st.agent_states) ? st.agent_states : {};
      if (!has(comps, role)) {
        log.error(
          rat,
          `role "${role}" has no entry in states.${state}.agent_states (Agents 1.0 fails to load this); add "${role}": {} there`,
        );
        continue;
      }
      claims.add(`${state}\u0000${role}`);
      const roster = Array.isArray(st.roles) && st.roles.length > 0 ? st.roles : Object.keys(comps);
      if (!roster.includes(role)) {
        log.warn(
          ['states', state, 'agent_states', role],
          `role "${role}" (played by ${name}) is not in "roles", so it never speaks and its components never run (as in Agents 1.0)`,
        );
        continue;
      }
      const byRole = players.get(state) ?? new Map<string, string>();
      players.set(state, byRole);
      const before = byRole.get(role);
      if (before !== undefined)
        log.warn(
          ['agents', before, 'roles', state],
          `${name} also plays "${role}" in "${state}"; the last one (${name}) plays it, as in Agents 1.0`,
        );
      byRole.set(role, name);
    }
  }
  return { players, humans, claims };
}

/** Agents 1.0 refuses a two-agent config (a bot and a human) whose root does not open with the bot's fixed line. */
export function checkTwoAgentRule(
  agents: Record<string, unknown>,
  states: Record<string, unknown>,
  root: string,
  t: Tables,
  log: ImportLog,
): void {
  if (Object.keys(agents).length !== 2) return;
  const st = states[root];
  if (!isObject(st)) return;
  const why =
    'Agents 1.0 requires, for a config with exactly two agents (one bot and one human), that the root state names a begin_role played by the bot and a begin_query';
  if (typeof st.begin_role !== 'string') {
    log.error(['states', root], `has no begin_role: ${why}`);
    return;
  }
  const player = t.players.get(root)?.get(st.begin_role);
  if (player !== undefined && t.humans.has(player))
    log.error(['states', root, 'begin_role'], `"${st.begin_role}" is played by the human ${player}: ${why}`);
  if (typeof st.begin_query !== 'string') log.error(['states', root], `has no begin_query: ${why}`);
}
