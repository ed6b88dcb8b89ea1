// The `mcp_servers` block of a SOP: NAME -> a stdio server ({command, args, env, cwd}) or a
// Streamable HTTP server ({url, headers}). `${VAR}` in the cwd and env values, the headers and the
// url (after its host) is read from the environment when the server starts, for the variables the
// user allowed that server (approval.ts), and never written to the run folder: what sop shows of
// a server (its command line or url in a message) keeps the `${VAR}`. A stdio server's command
// and args hold none (checks.ts): `ps` shows them to every user of the machine.
import { resolve } from 'node:path';
import type { Sop } from '../../format/sop/types.js';
import { EngineError } from '../../shared/errors.js';

export interface StdioServerConfig {
  command: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
}
export interface HttpServerConfig {
  url: string;
  headers?: Record<string, string>;
}
export type McpServerConfig = StdioServerConfig | HttpServerConfig;

export const isHttp = (c: McpServerConfig): c is HttpServerConfig => typeof (c as HttpServerConfig).url === 'string';

export class McpConfigError extends EngineError {
  constructor(message: string) {
    super(message, 'MCP_CONFIG');
    this.name = 'McpConfigError';
  }
}

/** The servers of a SOP (empty when it has none). */
export function mcpServers(sop: Sop): Record<string, McpServerConfig> {
  return (sop as { mcp_servers?: Record<string, McpServerConfig> }).mcp_servers ?? {};
}

/** The tool grants of a state (`tools: ["files/*", "notes/add_note"]`). */
export function stateGrants(state: unknown): string[] {
  const t = (state as { tools?: unknown }).tools;
  return Array.isArray(t) ? t.filter((x): x is string => typeof x === 'string') : [];
}

const VAR = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `${VAR}` replaced from `env`; a variable that is not set is an error naming it (never its value). */
export function expandVars(text: string, where: string, env: NodeJS.ProcessEnv = process.env): string {
  return text.replace(VAR, (_m, name: string) => {
    const v = env[name];
    if (v === undefined) throw new McpConfigError(`${where} uses \${${name}}, and the environment variable ${name} is not set`);
    return v;
  });
}

/** Every value of a record with `${VAR}` expanded. */
export function expandRecord(
  rec: Record<string, string> | undefined,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(rec ?? {})) out[k] = expandVars(v, `${where}.${k}`, env);
  return out;
}

/** The names `${VAR}` in these texts reads, once each, in order. */
export function varNames(texts: string[]): string[] {
  return [...new Set(texts.flatMap((t) => [...t.matchAll(VAR)].map((m) => m[1]!)))];
}

/** Whether a text reads a variable. */
export const hasVar = (text: string): boolean => varNames([text]).length > 0;

/** A variable read by `${VAR}` and its value. */
export interface ExpandedVar {
  name: string;
  value: string;
}

/**
 * The command, args and cwd of a stdio server with `${VAR}` expanded, and the variables read:
 * `unexpand` puts their `${VAR}` back into a message (an error naming the program it ran).
 */
export function expandCommandLine(
  c: StdioServerConfig,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): { command: string; args: string[]; cwd?: string; vars: ExpandedVar[] } {
  const command = expandVars(c.command, `${where}.command`, env);
  const args = (c.args ?? []).map((a, i) => expandVars(a, `${where}.args[${i}]`, env));
  const cwd = c.cwd === undefined ? undefined : expandVars(c.cwd, `${where}.cwd`, env);
  return { command, args, ...(cwd === undefined ? {} : { cwd }), vars: varsIn([c.command, ...(c.args ?? []), c.cwd ?? ''], env) };
}

/** The variables `${VAR}` in these texts reads, with their values (once each; all set). */
export function varsIn(texts: string[], env: NodeJS.ProcessEnv = process.env): ExpandedVar[] {
  return varNames(texts)
    .filter((name) => env[name] !== undefined)
    .map((name) => ({ name, value: env[name]! }));
}

/** `text` with each value read by `${VAR}` written as `${VAR}` again (longest first; values under 3 characters are left). */
export function unexpand(text: string, vars: ExpandedVar[]): string {
  const byLength = [...vars].filter((v) => v.value.length >= 3).sort((a, b) => b.value.length - a.value.length);
  for (const v of byLength) text = text.split(v.value).join(`\${${v.name}}`);
  return text;
}

/** The working folder of a stdio server: relative to the SOP file's folder (default: that folder). */
export function serverCwd(c: { cwd?: string }, baseDir: string): string {
  return c.cwd ? resolve(baseDir, c.cwd) : baseDir;
}

/** Split a grant or binding "server/tool" (tool may be "*"). */
export function splitRef(ref: string): { server: string; tool: string } | undefined {
  const i = ref.indexOf('/');
  if (i <= 0 || i === ref.length - 1) return undefined;
  return { server: ref.slice(0, i), tool: ref.slice(i + 1) };
}

/** The command name an MCP tool gets in a state: server__tool (function names allow no "/"). */
export function toolCommandName(server: string, tool: string): string {
  return `${server}__${tool}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}
