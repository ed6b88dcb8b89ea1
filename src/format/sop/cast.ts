// A state's `cast` (role -> agent) is the other way of writing an agent's `roles` (state -> role):
// `"cast": {"Pro": "Ada", "Con": "Ben"}` in state debate says what `"roles": {"debate": "Pro"}` in
// Ada and `{"debate": "Con"}` in Ben say. Loading moves it into the agents' roles, so every check
// and the run read one form; the two may both name a role when they agree.
import type { Diagnostic } from './diagnostics.js';
import type { Sop } from './types.js';

const esc = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** The SOP with every state's cast in its agents' roles (and every agent with `roles`), and the problems found. */
export function applyCast(sop: Sop): { sop: Sop; problems: Diagnostic[] } {
  const problems: Diagnostic[] = [];
  const agents: Sop['agents'] = {};
  for (const [name, a] of Object.entries(sop.agents)) agents[name] = { ...a, roles: { ...(a.roles ?? {}) } };
  const names = Object.keys(agents);
  for (const [stateName, state] of Object.entries(sop.states)) {
    const cast = state.cast;
    if (!cast) continue;
    const castAs = new Map<string, string>();
    for (const [role, agent] of Object.entries(cast)) {
      const pointer = `/states/${esc(stateName)}/cast/${esc(role)}`;
      const error = (message: string) => problems.push({ severity: 'error', pointer, message });
      const def = Object.prototype.hasOwnProperty.call(agents, agent) ? agents[agent] : undefined;
      if (!def) {
        error(`"${agent}" is not an agent of this SOP (agents: ${names.join(', ')})`);
        continue;
      }
      if (!(state.roles ?? []).includes(role)) {
        error(`"${role}" is not a role of state "${stateName}" (its roles: ${(state.roles ?? []).join(', ') || 'none'})`);
        continue;
      }
      const other = castAs.get(agent);
      if (other !== undefined) {
        error(`${agent} is cast as both "${other}" and "${role}" in state "${stateName}": an agent plays one role in a state`);
        continue;
      }
      castAs.set(agent, role);
      const roles = def.roles!;
      const already = roles[stateName];
      if (already !== undefined && already !== role) {
        error(`${agent} plays "${already}" in state "${stateName}" by agents.${agent}.roles, and the cast says "${role}"`);
        continue;
      }
      roles[stateName] = role;
    }
  }
  return { sop: { ...sop, agents }, problems };
}
