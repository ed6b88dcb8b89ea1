// Agents 1.0 tool slots (web search, flight offers, product search) bound to MCP tools: in the
// SOP (`{"name": "web_search", "bind": "search/web_search"}`) or from the command line
// (`--bind web_search=search/web_search`, which wins). The tool is called with the slot's
// settings and what the role just observed as its query argument; its text enters the last prompt.
import type { ToolSlotExecutor } from '../../core/components/registry.js';
import type { Effects } from '../../core/runtime/effects.js';
import type { Sop } from '../../format/sop/types.js';
import { splitRef } from './config.js';
import type { McpHub } from './hub.js';
import { truncateResult } from './tool-command.js';
import { EngineError, opt, say } from '../../shared/errors.js';

/** Slot name -> "server/tool", from the SOP's tool slots and then `--bind` pairs. */
export function slotBindings(sop: Sop, cli: Record<string, string> = {}): Record<string, string> {
  const out: Record<string, string> = {};
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(visit);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.name === 'string' && typeof o.bind === 'string' && !(o.name in out)) out[o.name] = o.bind;
      for (const x of Object.values(o)) if (x && typeof x === 'object') visit(x);
    }
  };
  for (const s of Object.values(sop.states)) visit((s as { components?: unknown }).components);
  visit((sop as { agents_v1?: unknown }).agents_v1);
  return { ...out, ...cli };
}

/** Parse `--bind SLOT=server/tool` pairs (one clear error for a malformed one). */
export function parseBindings(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf('=');
    const slot = p.slice(0, eq);
    if (eq <= 0 || !splitRef(p.slice(eq + 1)) || !/^[A-Za-z_][A-Za-z0-9_.-]*$/.test(slot))
      throw new EngineError(say`${opt('bind')} "${p}" must look like SLOT=server/tool, e.g. web_search=search/web_search`, 'OPTION');
    out[slot] = p.slice(eq + 1);
  }
  return out;
}

/**
 * The executors of bound slots. A tool that is not read-only (readOnlyHint) is called only when
 * the run may act without asking (--auto-run, --yes); otherwise the slot says so and is skipped.
 */
export function boundSlotExecutors(
  hub: McpHub,
  bindings: Record<string, string>,
  unattended: boolean,
  /** The run's effects (set once the run exists): a call is journaled, and reused on resume. */
  effects: { current?: Effects } = {},
): Record<string, ToolSlotExecutor> {
  const out: Record<string, ToolSlotExecutor> = {};
  for (const [slot, ref] of Object.entries(bindings)) {
    const r = splitRef(ref);
    if (!r) continue;
    out[slot] = {
      async run(req) {
        if (!hub.has(r.server)) return `[tool slot ${slot}: bound to ${ref}, and there is no MCP server "${r.server}" in mcp_servers]`;
        const tool = await hub.tool(r.server, r.tool);
        if (!tool) return `[tool slot ${slot}: server "${r.server}" has no tool "${r.tool}"]`;
        if (tool.annotations?.readOnlyHint !== true && !unattended)
          return `[tool slot ${slot}: ${ref} is not read-only and needs --auto-run or --yes to be called from a slot; not called]`;
        const props = Object.keys(tool.inputSchema.properties ?? {});
        const required = Array.isArray(tool.inputSchema.required) ? (tool.inputSchema.required as string[]) : [];
        const queryArg = props.includes('query') ? 'query' : (required.find((k) => !(k in req.settings)) ?? props[0]);
        const args: Record<string, unknown> = {
          ...req.settings,
          ...(queryArg && req.query.trim() ? { [queryArg]: req.query.trim() } : {}),
        };
        const call = async () => {
          const res = await hub.call(r.server, r.tool, args);
          return truncateResult(res.isError ? `[${ref} reported an error] ${res.text}` : res.text);
        };
        if (!effects.current) return call();
        const spec = {
          kind: 'mcp',
          label: `${slot}=${ref}@${req.state}`,
          marksStart: true,
          rerunNeedsApproval: tool.annotations?.readOnlyHint !== true,
        };
        return (await effects.current.perform(spec, call)).value;
      },
    };
  }
  return out;
}
