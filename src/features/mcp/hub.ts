// The MCP servers of one run: each is started (or connected to) the first time a state needs its
// tools, once per run, with the official SDK client, and only with the user's approval
// (approval.ts); all are closed when the run ends (Ctrl-C included). A stdio server's stderr goes
// to the run folder (mcp/NAME.stderr.log), and its last lines are told when it dies at start; with
// a sandbox it runs in the code sandbox (bubblewrap: no network, only the workspace writable).
// An offline hub (sop check) starts nothing: it knows the tools the SOP names, not their schemas.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
// The SDK is imported when a server is first opened, so that a run (or `import 'sop'`) without
// MCP servers does not load it.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { sandboxArgv, sandboxFilter, SECCOMP_FD } from '../../shared/sandbox/sandbox.js';
import { approveStart, McpApprovalError, type McpApproval } from './approval.js';
import { serverReadPaths } from './sandbox-paths.js';
import { StderrLog } from './stderr-log.js';
import { makeRedactor } from '../../shared/util/redact.js';
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
import { EngineError } from '../../shared/errors.js';

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
  /** Who allows a server to start, and which variables it may read (absent: nobody, so nothing starts). */
  approval?: McpApproval;
  /**
   * sop check: start no server; each server "lists" the tools the SOP names of it (grants and
   * bindings: server -> tool names), without their schemas, and a call is not made.
   */
  offline?: Record<string, string[]>;
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
  log?: StderrLog;
}

export class McpHub {
  private readonly connections = new Map<string, Promise<Connection>>();
  private readonly toolLists = new Map<string, Promise<McpTool[]>>();
  /** The approval of each server (asked once per run, even if it dies and starts again): the variables it may read. */
  private readonly approvals = new Map<string, Promise<Set<string>>>();
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

  /** sop check: no server starts (tools are known by the names the SOP gives them). */
  get offline(): boolean {
    return this.o.offline !== undefined;
  }

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
        if (err instanceof McpApprovalError) throw new McpServerError(err.message);
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
    // the approval comes first: nothing of the declaration is expanded, run or sent before it
    let approved = this.approvals.get(server);
    if (!approved) {
      approved = approveStart(
        { server, config, baseDir: this.o.baseDir, sandboxed: !isHttp(config) && this.o.sandbox !== undefined },
        this.o.approval ?? {},
      );
      this.approvals.set(server, approved);
    }
    const allowed = await approved;
    // `${VAR}` reads only the variables allowed this server
    const readable: NodeJS.ProcessEnv = {};
    for (const name of allowed) if (process.env[name] !== undefined) readable[name] = process.env[name];
    let transport: Transport;
    let log: StderrLog | undefined;
    let what: string;
    let vars: ExpandedVar[];
    if (isHttp(config)) {
      const url = new URL(expandVars(config.url, `${where}.url`, readable));
      const headers = expandRecord(config.headers, `${where}.headers`, readable);
      vars = varsIn([config.url, ...Object.values(config.headers ?? {})], readable);
      what = unexpand(`${url.origin}${url.pathname}`, vars);
      transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
    } else {
      // ${VAR} in command, args and cwd: the values go to the process only; `what` (in messages) keeps ${VAR}
      const line = expandCommandLine(config, where, readable);
      vars = [...line.vars, ...varsIn(Object.values(config.env ?? {}), readable)];
      const cwd = serverCwd(line, this.o.baseDir);
      // the run's workspace, as code gets it (a server may keep its files there)
      const ws = this.o.sandbox?.workspace ?? this.o.workspace;
      if (ws) mkdirSync(ws, { recursive: true });
      const env = {
        ...(this.o.sandbox || this.o.workspace ? { SOP_WORKSPACE: this.o.sandbox?.workspace ?? this.o.workspace! } : {}),
        ...expandRecord(config.env, `${where}.env`, readable),
      };
      if (this.o.runDir) {
        mkdirSync(join(this.o.runDir, 'mcp'), { recursive: true });
        const redact = makeRedactor();
        const given = vars;
        log = new StderrLog(join(this.o.runDir, 'mcp', `${server}.stderr.log`), (t) => redact(unexpand(t, given)));
      }
      let { command, args } = line;
      what = `"${[config.command, ...(config.args ?? [])].join(' ')}"`;
      if (this.o.sandbox) ({ command, args } = this.sandboxed(server, command, args, cwd, serverReadPaths(command, args, cwd)));
      const stdio = new StdioClientTransport({ command, args, env, cwd, stderr: log ? 'pipe' : 'ignore' });
      if (log && stdio.stderr) log.attach(stdio.stderr as import('node:stream').Readable);
      transport = stdio;
    }
    const client = new Client({ name: this.o.clientName ?? 'sop', version: '1.0.0' });
    try {
      await client.connect(transport);
      if (transport instanceof StdioClientTransport && transport.pid) {
        if (this.pids.size === 0) process.on('exit', this.onExit);
        this.pids.add(transport.pid);
      }
    } catch (err) {
      await transport.close().catch(() => undefined);
      await log?.settled(); // what a server that died wrote before it did
      log?.close();
      const tail = log?.tail() ?? '';
      const told = log ? `${tail ? `; its stderr ended: ${tail}` : ''} (its stderr: ${log.file})` : '';
      throw new McpServerError(
        `MCP server "${server}" (${what}) ${isHttp(config) ? 'could not be reached' : 'did not start'}: ${oneLine(err, vars)}${told}`,
      );
    }
    return { client, transport, ...(log ? { log } : {}) };
  }

  /** The bubblewrap command line of a stdio server: the code sandbox, started in the server's cwd. */
  private sandboxed(server: string, command: string, args: string[], cwd: string, reads: string[]): { command: string; args: string[] } {
    mkdirSync(this.o.sandbox!.workspace, { recursive: true });
    const argv = sandboxArgv(this.o.sandbox!.workspace, [command, ...args], reads);
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
        if (this.o.offline) return (this.o.offline[server] ?? []).map((name) => ({ name, inputSchema: { type: 'object' } }));
        const { client } = await this.connect(server);
        const out: McpTool[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : {});
          for (const tool of page.tools) out.push(tool);
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
    if (this.o.offline)
      return { isError: true, text: `not called: sop check starts no MCP servers, so ${server}/${tool} was not called in this dry run` };
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

/** Close a connection's stderr log (what is held back is written). */
function closeFd(c: Connection): void {
  c.log?.close();
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
