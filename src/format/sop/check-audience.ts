// Checks of a SOP's audiences (docs/memory.md#audiences): group members are agents, a role's
// `to` names all, self, a group or an agent, audiences are given to roles of their state, and a
// controller's `sees` is roles, all or an agent.
import type { Diagnostic } from './diagnostics.js';
import { pointerOf } from './json-source.js';
import type { Sop } from './types.js';
import { effectiveRoles } from './graph.js';

export function audienceDiagnostics(sop: Sop): Diagnostic[] {
  const out: Diagnostic[] = [];
  const err = (path: Array<string | number>, message: string) => out.push({ severity: 'error', pointer: pointerOf(path), message });
  const agents = Object.keys(sop.agents);
  const groups = sop.groups ?? {};
  for (const [group, members] of Object.entries(groups)) {
    members.forEach((m, i) => {
      if (!agents.includes(m))
        err(['groups', group, i], `group "${group}" names "${m}", which is not an agent (agents: ${agents.join(', ')})`);
    });
    if (agents.includes(group)) err(['groups', group], `group "${group}" has the name of an agent; give it another name`);
  }
  const names = ['all', 'self', ...Object.keys(groups), ...agents];
  const declares = Object.keys(groups).length > 0 || Object.values(sop.states).some((st) => st.audience || st.controller?.sees);
  // Agents 1.0 prompts come from each agent's private memory of observations, which audiences do not filter.
  if (sop.agents_v1 && declares)
    err(['agents_v1'], 'audiences (groups, states.X.audience, controller.sees) do not apply to Agents 1.0 imports');
  for (const [stateName, state] of Object.entries(sop.states)) {
    const roles = effectiveRoles(state);
    for (const [role, spec] of Object.entries(state.audience ?? {})) {
      const at = ['states', stateName, 'audience', role];
      if (!roles.includes(role)) err(at, `"${role}" is not a role of state "${stateName}" (roles: ${roles.join(', ') || 'none'})`);
      if (spec.to !== undefined) {
        for (const part of spec.to.split(',').map((p) => p.trim())) {
          if (!names.includes(part))
            err([...at, 'to'], `"${part}" is not all, self, a group or an agent (groups: ${Object.keys(groups).join(', ') || 'none'})`);
        }
      }
    }
    const sees = state.controller?.sees;
    if (sees !== undefined && sees !== 'roles' && sees !== 'all' && !agents.includes(sees))
      err(['states', stateName, 'controller', 'sees'], `controller.sees is "roles", "all" or an agent's name, not "${sees}"`);
  }
  return out;
}
