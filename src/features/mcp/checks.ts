// Static checks of a SOP's MCP parts (no server started): grants and bindings name declared
// servers; a stdio server's command and args read no `${VAR}` (secrets go through its env, where
// `ps` does not show them); an HTTP server's url writes its host out (the host is what the user
// approves sending to).
import type { Diagnostic } from '../../format/sop/diagnostics.js';
import { pointerOf } from '../../format/sop/json-source.js';
import type { Sop } from '../../format/sop/types.js';
import { isHttp, mcpServers, splitRef, stateGrants, varNames } from './config.js';

export function mcpDiagnostics(sop: Sop): Diagnostic[] {
  const declared = mcpServers(sop);
  const servers = Object.keys(declared);
  const out: Diagnostic[] = [];
  for (const [name, config] of Object.entries(declared)) {
    if (typeof config !== 'object' || config === null) continue; // the schema says so
    if (isHttp(config)) {
      const head = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(config.url)?.[0] ?? '';
      if (varNames([head]).length > 0)
        out.push({
          severity: 'error',
          pointer: pointerOf(['mcp_servers', name, 'url']),
          message: `the host of an MCP server's url must be written out, not read from \${${varNames([head])[0]}}: it is where the server's requests (and the variables you allow it) go, and you approve it by name`,
        });
      continue;
    }
    const line: Array<[string[], string]> = [
      [['mcp_servers', name, 'command'], config.command],
      ...(config.args ?? []).map((a, i): [string[], string] => [['mcp_servers', name, 'args', String(i)], a]),
    ];
    for (const [path, text] of line) {
      const v = typeof text === 'string' ? varNames([text])[0] : undefined;
      if (v !== undefined)
        out.push({
          severity: 'error',
          pointer: pointerOf(path),
          message: `\${${v}} in the command line of a stdio MCP server, where ps shows it to every user of the machine: pass it in "env" ("env": {"${v}": "\${${v}}"}) and read it there`,
        });
    }
  }
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
