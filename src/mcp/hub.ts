// The MCP servers of one run: each is started (or connected to) the first time a state needs its
// tools, once per run, with the official SDK client; all are closed when the run ends (Ctrl-C
// included). A stdio server's stderr goes to the run folder (mcp/NAME.stderr.log); under
// --sandbox it runs in the code sandbox (bubblewrap: no network, only the workspace writable).
import { closeSync, mkdirSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// The SDK is imported when a server is first opened, so that a run (or `import 'sop'`) without
// MCP servers does not load it.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { sandboxArgv, sandboxFilter, SECCOMP_FD } from '../executors/sandbox.js';
import {
  expandCommandLine,
  expandRecord,
  expandVars,
  isHttp,
  serverCwd,
  unexpand,
  varsIn,
  McpConfigError,
  type ExpandedVar,
  type McpServerConfig,
} from './config.js';
import { EngineError } from '../errors.js';

/** One tool a server lists. */
export interface McpTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; title?: string };
}

/** What a tool call gave: its text (content items joined) and whether the tool reported an error. */
export interface McpCallResult {
  isError: boolean;
  text: string;
}

export interface McpHubOptions {
  servers: Record<string, McpServerConfig>;
  /** Folder of the SOP file (a stdio server's cwd is relative to it). */
  baseDir: string;
  /** The run folder: stderr of stdio servers goes to its mcp/ folder. */
  runDir?: string;
  /** Run stdio servers under bubblewrap, with this folder (the workspace) the only writable one. */
  sandbox?: { workspace: string };
  /** The run's workspace (given to stdio servers as SOP_WORKSPACE). */
  workspace?: string;
  /** sop validate --check-tools: the client's name. */
  clientName?: string;
}

export class McpServerError extends EngineError {
  constructor(message: string) {
    super(message, 'MCP_SERVER');
    this.name = 'McpServerError';
  }
}

interface Connection {
  client: Client;
  transport: Transport;
  stderrFd?: number;
}

export class McpHub {
  private readonly connections = new Map<string, Promise<Connection>>();
  private readonly toolLists = new Map<string, Promise<McpTool[]>>();
  private closed = false;
  /** Processes of stdio servers: ended if sop exits without closing them (a second Ctrl-C). */
  private readonly pids = new Set<number>();
  private readonly onExit = () => {
    for (const pid of this.pids) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
  };

  constructor(private readonly o: McpHubOptions) {}

  names(): string[] {
    return Object.keys(this.o.servers);
  }

  has(server: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.o.servers, server);
  }

  private connect(server: string): Promise<Connection> {
    if (this.closed) return Promise.reject(new McpServerError(`MCP server "${server}": the run is over, its servers are closed`));
    let c = this.connections.get(server);
    if (!c) {
      const opening = this.open(server).catch((err: unknown) => {
        throw err instanceof McpConfigError ? new McpServerError(`MCP server "${server}": ${err.message}`) : err;
      });
      c = opening;
      this.connections.set(server, c);
      // a server that dies is started again on its next call
      void opening.then(
        (conn) => {
          conn.client.onclose = () => {
            if (this.connections.get(server) === opening) this.connections.delete(server);
            closeFd(conn);
          };
        },
        () => undefined,
      );
      c.catch(() => undefined);
    }
    return c;
  }

  private async open(server: string): Promise<Connection> {
    const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }] = await Promise.all([
      import('@modelcontextprotocol/sdk/client/index.js'),
      import('@modelcontextprotocol/sdk/client/stdio.js'),
      import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    ]);
    const config = this.o.servers[server];
    if (!config) throw new McpServerError(`no MCP server "${server}" in mcp_servers (servers: ${this.names().join(', ') || 'none'})`);
    const where = `mcp_servers.${server}`;
    let transport: Transport;
    let stderrFd: number | undefined;
    let what: string;
    let vars: ExpandedVar[];
    if (isHttp(config)) {
      const url = new URL(expandVars(config.url, `${where}.url`));
      const headers = expandRecord(config.headers, `${where}.headers`);
      vars = varsIn([config.url, ...Object.values(config.headers ?? {})]);
      what = unexpand(`${url.origin}${url.pathname}`, vars);
      transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
    } else {
      // ${VAR} in command, args and cwd: the values go to the process only; `what` (in messages) keeps ${VAR}
      const line = expandCommandLine(config, where);
      vars = line.vars;
      const cwd = serverCwd(line, this.o.baseDir);
      // the run's workspace, as code gets it (a server may keep its files there)
      const ws = this.o.sandbox?.workspace ?? this.o.workspace;
      if (ws) mkdirSync(ws, { recursive: true });
      const env = {
        ...(this.o.sandbox || this.o.workspace ? { SOP_WORKSPACE: this.o.sandbox?.workspace ?? this.o.workspace! } : {}),
        ...expandRecord(config.env, `${where}.env`),
      };
      if (this.o.runDir) {
        mkdirSync(join(this.o.runDir, 'mcp'), { recursive: true });
        stderrFd = openSync(join(this.o.runDir, 'mcp', `${server}.stderr.log`), 'a');
      }
      let { command, args } = line;
      what = `"${[config.command, ...(config.args ?? [])].join(' ')}"`;
      if (this.o.sandbox) ({ command, args } = this.sandboxed(server, command, args, cwd));
      transport = new StdioClientTransport({ command, args, env, cwd, stderr: stderrFd ?? 'ignore' });
    }
    const client = new Client({ name: this.o.clientName ?? 'sop', version: '1.0.0' });
    try {
      await client.connect(transport);
      if (transport instanceof StdioClientTransport && transport.pid) {
        if (this.pids.size === 0) process.on('exit', this.onExit);
        this.pids.add(transport.pid);
      }
    } catch (err) {
      if (stderrFd !== undefined) closeSync(stderrFd);
      await transport.close().catch(() => undefined);
      const log = stderrFd !== undefined ? ` (its stderr: ${join(this.o.runDir!, 'mcp', `${server}.stderr.log`)})` : '';
      throw new McpServerError(
        `MCP server "${server}" (${what}) ${isHttp(config) ? 'could not be reached' : 'did not start'}: ${oneLine(err, vars)}${log}`,
      );
    }
    return { client, transport, stderrFd };
  }

  /** The bubblewrap command line of a stdio server: the code sandbox, started in the server's cwd. */
  private sandboxed(server: string, command: string, args: string[], cwd: string): { command: string; args: string[] } {
    mkdirSync(this.o.sandbox!.workspace, { recursive: true });
    const argv = sandboxArgv(this.o.sandbox!.workspace, [command, ...args]);
    const at = argv.indexOf('--chdir');
    if (at >= 0) argv[at + 1] = cwd;
    // The seccomp filter is read from fd 3, as for code: a shell opens it from a file, then execs bwrap.
    const filter = sandboxFilter();
    if (!filter || !this.o.runDir) return { command: argv[0]!, args: argv.slice(1) };
    const file = join(this.o.runDir, 'mcp', `${server}.seccomp.bpf`);
    writeFileSync(file, filter);
    return { command: '/bin/sh', args: ['-c', `exec "$@" ${SECCOMP_FD}<${shellQuote(file)}`, 'sh', ...argv] };
  }

  /** The tools a server lists (started on first use; listed once per run). */
  tools(server: string): Promise<McpTool[]> {
    let t = this.toolLists.get(server);
    if (!t) {
      t = (async () => {
        const { client } = await this.connect(server);
        const out: McpTool[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : {});
          for (const tool of page.tools) out.push(tool as McpTool);
          cursor = page.nextCursor;
        } while (cursor);
        return out;
      })();
      this.toolLists.set(server, t);
    }
    return t;
  }

  async tool(server: string, name: string): Promise<McpTool | undefined> {
    return (await this.tools(server)).find((t) => t.name === name);
  }

  /** Call a tool; a protocol error (unknown tool, bad arguments, server gone) is thrown as McpServerError. */
  async call(server: string, tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<McpCallResult> {
    const { client } = await this.connect(server);
    let res: Awaited<ReturnType<Client['callTool']>>;
    try {
      res = await client.callTool({ name: tool, arguments: args }, undefined, signal ? { signal } : {});
    } catch (err) {
      throw new McpServerError(`${server}/${tool}: ${oneLine(err)}`);
    }
    return { isError: res.isError === true, text: resultText(res) };
  }

  /** Close every server started (stdio servers are ended); safe to call twice. */
  async close(): Promise<void> {
    this.closed = true;
    process.off('exit', this.onExit);
    const all = [...this.connections.values()];
    this.connections.clear();
    await Promise.all(
      all.map(async (p) => {
        const c = await p.catch(() => undefined);
        if (!c) return;
        await c.client.close().catch(() => undefined);
        closeFd(c);
      }),
    );
  }
}

/** Close a connection's stderr log once. */
function closeFd(c: Connection): void {
  const fd = c.stderrFd;
  c.stderrFd = undefined;
  if (fd === undefined) return;
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The message of an error on one line, `${VAR}` put back for values read from the environment. */
function oneLine(err: unknown, vars: ExpandedVar[] = []): string {
  return unexpand(err instanceof Error ? err.message : String(err), vars)
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 300);
}

/** The text of a tool result: text items as they are, other items described, structured content as JSON. */
export function resultText(res: Record<string, unknown>): string {
  const parts: string[] = [];
  for (const item of Array.isArray(res.content) ? (res.content as Array<Record<string, unknown>>) : []) {
    if (item.type === 'text' && typeof item.text === 'string') parts.push(item.text);
    else if (item.type === 'image' || item.type === 'audio') parts.push(`[${item.type} ${String(item.mimeType ?? '')}]`);
    else if (item.type === 'resource' && typeof item.resource === 'object' && item.resource) {
      const r = item.resource as Record<string, unknown>;
      parts.push(typeof r.text === 'string' ? r.text : `[resource ${String(r.uri ?? '')}]`);
    } else if (item.type === 'resource_link') parts.push(`[resource ${String(item.uri ?? '')}]`);
  }
  if (parts.length === 0 && res.structuredContent !== undefined) parts.push(JSON.stringify(res.structuredContent));
  if (parts.length === 0 && res.toolResult !== undefined) parts.push(JSON.stringify(res.toolResult));
  return parts.join('\n');
}

export { McpConfigError };
