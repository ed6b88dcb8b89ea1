// The MCP servers of a run as a plugin (src/core/runtime/hooks.ts): a hub for the SOP's mcp_servers
// (nothing starts until a state needs a tool, and then only with the user's approval); the tools a
// state grants become its commands (stateCommands), and bound tool slots join the run's
// (toolSlots; their calls are the run's journaled effects). The servers end with the run. Active only in a SOP that declares mcp_servers.
import { dirname, resolve } from 'node:path';
import type { ToolSlotExecutor } from '../../core/components/registry.js';
import type { RunContext } from '../../core/runtime/context.js';
import type { RunPlugin } from '../../core/runtime/hooks.js';
import type { Sop } from '../../format/sop/types.js';
import { approveStart, type McpApproval } from './approval.js';
import { isHttp, mcpServers, splitRef, stateGrants } from './config.js';
import { McpHub } from './hub.js';
import { grantedCommands } from './tool-command.js';
import { boundSlotExecutors, slotBindings } from './slots.js';

export interface McpRunOptions {
  /** Run stdio servers under bubblewrap (by default when it works here; --no-sandbox: not). */
  sandbox?: boolean;
  /** Tool slots bound from the command line: slot -> "server/tool" (--bind). */
  bind?: Record<string, string>;
  /** Who allows a server to start and the variables it reads (absent: nobody; approval.ts). */
  approval?: McpApproval;
  /** sop check: start no server (the tools the SOP names are known by name only, and never called). */
  offline?: boolean;
}

/** The tools a SOP names of each server: its grants (not `server/*`) and its slot bindings. */
export function namedTools(sop: Sop, bind: Record<string, string> = {}): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  const add = (ref: string) => {
    const r = splitRef(ref);
    if (!r || r.tool === '*') return;
    const list = (out[r.server] ??= []);
    if (!list.includes(r.tool)) list.push(r.tool);
  };
  for (const state of Object.values(sop.states)) stateGrants(state).forEach(add);
  Object.values(slotBindings(sop, bind)).forEach(add);
  return out;
}

/**
 * With nobody to ask (no terminal), whether every server the SOP uses (its grants and slot
 * bindings) is allowed to start: a run refused now leaves no run folder, rather than failing at the
 * first state that needs a tool. Throws the refusal (McpApprovalError) of the first one that is not.
 */
export async function approveUnattended(o: {
  sop: Sop;
  file: string;
  approval: McpApproval;
  sandbox: boolean;
  bind?: Record<string, string>;
}): Promise<void> {
  if (o.approval.ask) return;
  const servers = mcpServers(o.sop);
  const used = new Set<string>();
  for (const state of Object.values(o.sop.states)) for (const ref of stateGrants(state)) used.add(splitRef(ref)?.server ?? '');
  for (const ref of Object.values(slotBindings(o.sop, o.bind))) used.add(splitRef(ref)?.server ?? '');
  for (const server of used) {
    const config = servers[server];
    if (!config) continue; // sop validate names a grant of no server
    await approveStart({ server, config, baseDir: dirname(resolve(o.file)), sandboxed: !isHttp(config) && o.sandbox }, o.approval);
  }
}

export interface McpRun {
  hub: McpHub;
  /** The executors of the tool slots bound to the hub's tools (their calls go through the run's effects). */
  slots(ctx: RunContext): Record<string, ToolSlotExecutor>;
  /** The plugin: a state's granted tools join its commands, the bound slots the run's tool slots; the servers close when the run ends. */
  plugin(slots: Record<string, ToolSlotExecutor>): RunPlugin;
}

/** What a run's MCP servers read of its action options: the run folder, the workspace, and whether nobody is asked. */
export interface McpActionOptions {
  runDir?: string;
  workspace?: string;
  autoRun?: boolean;
  yes?: boolean;
}

/** The MCP servers of a run, or undefined for a SOP without mcp_servers. */
export function mcpForRun(o: { sop: Sop; file: string; actions?: McpActionOptions; mcp?: McpRunOptions }): McpRun | undefined {
  const servers = mcpServers(o.sop);
  if (Object.keys(servers).length === 0) return undefined;
  const workspace = o.actions?.workspace;
  const hub = new McpHub({
    servers,
    baseDir: dirname(resolve(o.file)),
    runDir: o.actions?.runDir,
    ...(workspace ? { workspace } : {}),
    ...(o.mcp?.sandbox && workspace ? { sandbox: { workspace } } : {}),
    ...(o.mcp?.approval ? { approval: o.mcp.approval } : {}),
    ...(o.mcp?.offline ? { offline: namedTools(o.sop, o.mcp.bind) } : {}),
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
      // the tools a state grants, as commands (a command the state declares of the same name wins)
      stateCommands: async (commands, state) => {
        const grants = stateGrants(state.def);
        return grants.length === 0 ? commands : { ...(await grantedCommands(hub, state.name, grants)), ...commands };
      },
      toolSlots: (given) => ({ ...given, ...slots }),
      close: () => hub.close(), // servers end with the run (Ctrl-C included)
    }),
  };
}
