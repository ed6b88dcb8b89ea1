// An MCP tool granted to a state, as one of the state's commands: the agent calls it like any
// command (a JSON command or a function call), its result becomes the command's result (an
// action message in the environment), and the journal records the call as an effect, so a
// resumed run reuses the result instead of calling the tool again. A tool not annotated
// readOnlyHint needs approval as code does (--auto-run, --yes, or a person at the terminal).
import { askApproval } from '../../core/io/human.js';
import type { CommandSpec } from '../../core/commands/commands.js';
import {
  ExecutorInputError,
  isAcceptance,
  type ArgSpec,
  type ArgSpecs,
  type ExecResult,
  type Executor,
} from '../../core/commands/executor.js';
import { McpServerError, type McpHub, type McpTool } from './hub.js';
import { splitRef, toolCommandName } from './config.js';

/** Characters of a tool result the agent sees; the rest is cut, with a note saying so. */
export const MAX_TOOL_RESULT_CHARS = 16_000;

export function truncateResult(text: string, max = MAX_TOOL_RESULT_CHARS): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n[truncated: the tool returned ${text.length} characters; only the first ${max} are shown]`;
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line.trim();
}

const SIMPLE = new Set(['string', 'integer', 'number', 'boolean']);

/** The arguments of a tool as the command list shows them (object and list arguments are shown as such). */
function argSpecs(schema: Record<string, unknown>): ArgSpecs {
  const props = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const out: ArgSpecs = {};
  for (const [name, p] of Object.entries(props)) {
    const t: unknown = Array.isArray(p.type) ? (p.type as unknown[]).find((x) => x !== 'null') : p.type;
    out[name] = {
      type: (typeof t === 'string' ? t : 'string') as ArgSpec['type'],
      description: typeof p.description === 'string' ? p.description : '',
      ...(required.has(name) ? { required: true } : {}),
      ...(Array.isArray(p.enum) && p.enum.every((e) => typeof e === 'string') && SIMPLE.has(String(t)) ? { enum: p.enum } : {}),
    };
  }
  return out;
}

function approvalPrompt(agent: string, ref: string, args: Record<string, unknown>): string {
  return `${agent} wants to call the MCP tool ${ref} with these arguments:\n${JSON.stringify(args, null, 2)}\nAllow it? (yes/no)`;
}

/** The executor of one granted tool. */
export function toolExecutor(hub: McpHub, server: string, tool: McpTool): Executor {
  const ref = `${server}/${tool.name}`;
  const readOnly = tool.annotations?.readOnlyHint === true;
  return {
    name: 'mcp',
    description: tool.description ?? `MCP tool ${ref}`,
    settings: { type: 'object' },
    // durability: a call a crash interrupted is made again only with approval, unless it only reads
    durability: { rerunNeedsApproval: !readOnly },
    args: () => argSpecs(tool.inputSchema),
    async run(args, ctx): Promise<ExecResult> {
      if (!readOnly && !ctx.autoRun && !ctx.yes) {
        const reply = await askApproval(
          ctx.human,
          { agent: ctx.agent, role: ctx.role, state: ctx.state, prompt: approvalPrompt(ctx.agent, ref, args) },
          `approval to call the MCP tool ${ref}`,
        );
        if (!isAcceptance(reply))
          return {
            ok: false,
            result: `The MCP tool ${ref} was not called: the user did not approve it${reply.trim() ? ` ("${firstLine(reply)}")` : ''}.`,
            summary: `${ref} not called: the user did not approve`,
          };
      }
      let res;
      try {
        res = await hub.call(server, tool.name, args, ctx.signal);
      } catch (err) {
        if (err instanceof McpServerError) throw new ExecutorInputError(err.message); // told to the agent; the run goes on
        throw err;
      }
      const text = truncateResult(res.text);
      if (res.isError)
        return { ok: false, result: `The MCP tool ${ref} reported an error:\n${text}`, summary: `${ref} failed: ${firstLine(res.text)}` };
      return { ok: true, result: text, summary: `called ${ref}${firstLine(res.text) ? `: ${firstLine(res.text)}` : ''}` };
    },
  };
}

/** The tools a state's grants name, as commands; throws McpServerError naming a grant no server lists. */
export async function grantedCommands(hub: McpHub, stateName: string, grants: string[]): Promise<Record<string, CommandSpec>> {
  const out: Record<string, CommandSpec> = {};
  for (const grant of grants) {
    const r = splitRef(grant);
    if (!r || !hub.has(r.server))
      throw new McpServerError(
        `state "${stateName}" grants "${grant}", which names no server of mcp_servers (servers: ${hub.names().join(', ') || 'none'})`,
      );
    const tools = await hub.tools(r.server);
    const picked = r.tool === '*' ? tools : tools.filter((t) => t.name === r.tool);
    if (picked.length === 0 && hub.offline) continue; // sop check: server/* is not listed (no server starts)
    if (picked.length === 0)
      throw new McpServerError(
        `state "${stateName}" grants "${grant}", and server "${r.server}" has no tool "${r.tool}" (its tools: ${tools.map((t) => t.name).join(', ') || 'none'})`,
      );
    for (const tool of picked) {
      const executor = toolExecutor(hub, r.server, tool);
      const name = toolCommandName(r.server, tool.name);
      const args = executor.args({}, {})!;
      const schema = { type: 'object', properties: {}, ...tool.inputSchema };
      delete (schema as Record<string, unknown>).$schema;
      out[name] = {
        name,
        executor,
        settings: {},
        args,
        description:
          `${tool.description ?? ''}${tool.description ? ' ' : ''}(MCP tool ${r.server}/${tool.name}${tool.annotations?.readOnlyHint ? ', read-only' : ''})`.trim(),
        argsSchema: schema,
        parameters: schema,
      };
    }
  }
  return out;
}

/** Problems of the grants of a SOP against what its servers list (sop validate --check-tools). */
export async function checkGrants(hub: McpHub, states: Record<string, { tools?: unknown }>): Promise<string[]> {
  const problems: string[] = [];
  for (const [name, state] of Object.entries(states)) {
    const grants = Array.isArray(state.tools) ? (state.tools as string[]) : [];
    for (const g of grants) {
      try {
        await grantedCommands(hub, name, [g]);
      } catch (err) {
        if (!(err instanceof McpServerError)) throw err;
        problems.push(err.message);
      }
    }
  }
  return problems;
}
