// sop validate --check-tools: start each SOP's MCP servers and check every grant (server/tool,
// server/*) and tool slot binding against the tools the servers list. One line per problem.
import { dirname, resolve } from 'node:path';
import { loadSopFile } from '../loader/load.js';
import { mcpServers, splitRef } from './config.js';
import { McpHub } from './hub.js';
import { slotBindings } from './slots.js';
import { checkGrants } from './tool-command.js';

export async function checkToolsCommand(files: string[], opts: { quiet: boolean }): Promise<number> {
  let failed = 0;
  for (const file of files) {
    const { sop } = loadSopFile(file);
    const servers = mcpServers(sop);
    if (Object.keys(servers).length === 0) {
      if (!opts.quiet) process.stdout.write(`${file}: no mcp_servers to check\n`);
      continue;
    }
    const hub = new McpHub({ servers, baseDir: dirname(resolve(file)), clientName: 'sop-validate' });
    const problems: string[] = [];
    const counts: string[] = [];
    try {
      for (const name of hub.names()) {
        try {
          counts.push(`${name}: ${(await hub.tools(name)).length} tools`);
        } catch (err) {
          problems.push((err as Error).message);
        }
      }
      if (problems.length === 0) problems.push(...(await checkGrants(hub, sop.states as Record<string, { tools?: unknown }>)));
      for (const [slot, ref] of Object.entries(slotBindings(sop))) {
        const r = splitRef(ref);
        if (!r || !hub.has(r.server)) problems.push(`tool slot "${slot}" is bound to "${ref}", which names no server of mcp_servers`);
        else if (problems.length === 0 && !(await hub.tool(r.server, r.tool)))
          problems.push(`tool slot "${slot}" is bound to "${ref}", and server "${r.server}" has no tool "${r.tool}"`);
      }
    } finally {
      await hub.close();
    }
    if (problems.length > 0) {
      failed++;
      for (const p of problems) process.stderr.write(`${file}: ${p}\n`);
    } else if (!opts.quiet) process.stdout.write(`${file}: tools ok (${counts.join(', ')})\n`);
  }
  return failed > 0 ? 1 : 0;
}
