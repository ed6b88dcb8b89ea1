// The MCP servers of a run as a plugin (src/runtime/hooks.ts): a hub for the SOP's mcp_servers
// (nothing starts until a state needs a tool), handed to the actions (granted tools become
// commands) and to the tool slots (bindings, whose calls are the run's journaled effects). The
// servers end with the run. Active only in a SOP that declares mcp_servers.
import { dirname, resolve } from 'node:path';
import type { ActionOptions } from '../actions/runtime.js';
import type { ToolSlotExecutor } from '../components/registry.js';
import type { RunContext } from '../runtime/context.js';
import type { RunPlugin } from '../runtime/hooks.js';
import type { Sop } from '../sop/types.js';
import { mcpServers } from './config.js';
import { McpHub } from './hub.js';
import { boundSlotExecutors, slotBindings } from './slots.js';

export interface McpRunOptions {
  /** Run stdio servers under bubblewrap (--sandbox given explicitly). */
  sandbox?: boolean;
  /** Tool slots bound from the command line: slot -> "server/tool" (--bind). */
  bind?: Record<string, string>;
}

export interface McpRun {
  hub: McpHub;
  /** The executors of the tool slots bound to the hub's tools (their calls go through the run's effects). */
  slots(ctx: RunContext): Record<string, ToolSlotExecutor>;
  /** The plugin: the bound slots join the run's tool slots; the servers close when the run ends. */
  plugin(slots: Record<string, ToolSlotExecutor>): RunPlugin;
}

/** The MCP servers of a run, or undefined for a SOP without mcp_servers. */
export function mcpForRun(o: { sop: Sop; file: string; actions?: ActionOptions; mcp?: McpRunOptions }): McpRun | undefined {
  const servers = mcpServers(o.sop);
  if (Object.keys(servers).length === 0) return undefined;
  const workspace = o.actions?.workspace;
  const hub = new McpHub({
    servers,
    baseDir: dirname(resolve(o.file)),
    runDir: o.actions?.runDir,
    ...(workspace ? { workspace } : {}),
    ...(o.mcp?.sandbox && workspace ? { sandbox: { workspace } } : {}),
  });
  const bindings = slotBindings(o.sop, o.mcp?.bind);
  const unattended = o.actions?.autoRun === true || o.actions?.yes === true;
  return {
    hub,
    slots: (ctx) =>
      boundSlotExecutors(hub, bindings, unattended, {
        get current() {
          return ctx.effects;
        },
      }),
    plugin: (slots) => ({
      name: 'mcp',
      toolSlots: (given) => ({ ...given, ...slots }),
      close: () => hub.close(), // servers end with the run (Ctrl-C included)
    }),
  };
}
