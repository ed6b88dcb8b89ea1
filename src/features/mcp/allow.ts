// The MCP servers the user allows to start without being asked, kept outside the SOP: on the
// command line (`--allow-mcp NAME`, `--allow-mcp-env NAME=VAR`, for this invocation) and in the
// user's allow file (CONFIG/allow.json, CONFIG being $SOP_CONFIG_DIR, else $XDG_CONFIG_HOME/sop,
// else ~/.config/sop). An entry of the file pins the server it allows, so that another SOP naming
// a server the same cannot borrow it: a stdio server by its command line and folder, an HTTP
// server by its host. `env` lists the variables `${VAR}` the server may read (docs/tools.md).
import { EngineError } from '../../shared/errors.js';
import { isAbsolute, resolve } from 'node:path';
import { allowFile, allowFileEntries, entryObject } from '../../core/io/allow-file.js';
import { isHttp, serverCwd, type McpServerConfig } from './config.js';

export { allowFile, configDir } from '../../core/io/allow-file.js';

export interface McpAllowEntry {
  name: string;
  /** Variables `${VAR}` the server may read. */
  env?: string[];
  /** A stdio server: its command and args as the SOP writes them. */
  command?: string[];
  /** A stdio server: the folder it runs in (absolute). */
  cwd?: string;
  /** An HTTP server: the host of its url (host[:port]). */
  host?: string;
  /** Where the entry comes from, for messages ("--allow-mcp", or the file). */
  from: string;
}

export class McpAllowError extends EngineError {
  constructor(message: string) {
    super(message, 'MCP_ALLOW');
    this.name = 'McpAllowError';
  }
}

const NAME = /^[A-Za-z0-9_.-]+$/;
const VAR_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** The entries of `--allow-mcp NAME` and `--allow-mcp-env NAME=VAR` (the latter allows NAME too). */
export function cliAllowEntries(names: string[] = [], envPairs: string[] = []): McpAllowEntry[] {
  const byName = new Map<string, McpAllowEntry>();
  const entry = (name: string, from: string) => {
    if (!NAME.test(name)) throw new McpAllowError(`${from} "${name}": give the name of a server of the SOP's mcp_servers`);
    let e = byName.get(name);
    if (!e) byName.set(name, (e = { name, env: [], from: '--allow-mcp' }));
    return e;
  };
  for (const n of names) entry(n, '--allow-mcp');
  for (const p of envPairs) {
    const eq = p.indexOf('=');
    const v = p.slice(eq + 1);
    if (eq <= 0 || !VAR_NAME.test(v))
      throw new McpAllowError(`--allow-mcp-env "${p}" must look like SERVER=VARIABLE, e.g. search=SEARCH_API_KEY`);
    entry(p.slice(0, eq), '--allow-mcp-env').env!.push(v);
  }
  return [...byName.values()];
}

const KEYS = new Set(['name', 'env', 'command', 'cwd', 'host']);

/** The entries of the user's allow file (none when there is no file); one clear line for a bad file. */
export function fileAllowEntries(file = allowFile()): McpAllowEntry[] {
  return allowFileEntries('mcp', file, mcpAllowError, (raw, where) => fileEntry(raw, where, file));
}

const mcpAllowError = (message: string) => new McpAllowError(message);

function fileEntry(raw: unknown, where: string, file: string): McpAllowEntry {
  const r = entryObject(raw, where, KEYS, mcpAllowError);
  const strings = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === 'string');
  if (typeof r.name !== 'string' || !NAME.test(r.name)) throw new McpAllowError(`${where}: "name" must be the name of a server`);
  if (r.env !== undefined && !(strings(r.env) && r.env.every((v) => VAR_NAME.test(v))))
    throw new McpAllowError(`${where}: "env" must be a list of variable names`);
  if (r.command !== undefined && !(strings(r.command) && r.command.length > 0))
    throw new McpAllowError(`${where}: "command" must be the command and its arguments, as a list of strings`);
  if (r.cwd !== undefined && !(typeof r.cwd === 'string' && isAbsolute(r.cwd)))
    throw new McpAllowError(`${where}: "cwd" must be an absolute path`);
  if (r.host !== undefined && !(typeof r.host === 'string' && r.host.length > 0))
    throw new McpAllowError(`${where}: "host" must be a host name`);
  const stdio = r.command !== undefined && r.cwd !== undefined;
  if (stdio === (r.host !== undefined) || (r.command === undefined) !== (r.cwd === undefined))
    throw new McpAllowError(
      `${where} must pin the server it allows: "command" and "cwd" for a stdio server, or "host" for an HTTP one (docs/tools.md)`,
    );
  return {
    name: r.name,
    env: r.env ?? [],
    ...(stdio ? { command: r.command, cwd: resolve(r.cwd as string) } : { host: (r.host as string).toLowerCase() }),
    from: file,
  };
}

/** The host an HTTP server's url names (the url as written: its host holds no `${VAR}`, see checks.ts). */
export function urlHost(url: string): string | undefined {
  try {
    return new URL(url).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/** The entries that allow this server: its name, and (file entries) the command and folder, or the host, it pins. */
export function matchingEntries(entries: McpAllowEntry[], name: string, config: McpServerConfig, baseDir: string): McpAllowEntry[] {
  return entries.filter((e) => {
    if (e.name !== name) return false;
    if (e.host !== undefined) return isHttp(config) && urlHost(config.url) === e.host;
    if (e.command !== undefined) {
      if (isHttp(config)) return false;
      const line = [config.command, ...(config.args ?? [])];
      return line.length === e.command.length && line.every((a, i) => a === e.command![i]) && serverCwd(config, baseDir) === e.cwd;
    }
    return true; // --allow-mcp NAME: this invocation, this SOP
  });
}

/** The allow-file entry that would allow this server (told in a refusal, to copy into the file). */
export function suggestedEntry(name: string, config: McpServerConfig, baseDir: string, vars: string[]): string {
  const pin = isHttp(config)
    ? { host: urlHost(config.url) ?? '?' }
    : { command: [config.command, ...(config.args ?? [])], cwd: serverCwd(config, baseDir) };
  return JSON.stringify({ name, ...pin, ...(vars.length > 0 ? { env: vars } : {}) });
}
