// Static checks of a SOP's MCP parts (no server started): grants and bindings name declared servers.
import type { Diagnostic } from '../sop/diagnostics.js';
import { pointerOf } from '../sop/json-source.js';
import type { Sop } from '../sop/types.js';
import { mcpServers, splitRef, stateGrants } from './config.js';

export function mcpDiagnostics(sop: Sop): Diagnostic[] {
  const servers = Object.keys(mcpServers(sop));
  const out: Diagnostic[] = [];
  for (const [name, state] of Object.entries(sop.states)) {
    stateGrants(state).forEach((grant, i) => {
      const r = splitRef(grant);
      if (!r || !servers.includes(r.server))
        out.push({
          severity: 'error',
          pointer: pointerOf(['states', name, 'tools', String(i)]),
          message: `"${grant}" names no server of mcp_servers (${servers.length ? `servers: ${servers.join(', ')}` : 'the SOP declares none'})`,
        });
    });
  }
  return out;
}
