// Starting an MCP server is an effect that needs the user's approval, as running code does: a
// stdio server is a command run on this machine, an HTTP server is a destination the SOP sends
// requests (and perhaps secrets) to. A server starts when the user allowed it outside the SOP
// (--allow-mcp NAME, the allow file), gave --yes or --auto-run, or, at a terminal, was shown the
// exact command (or url), where it runs, and the variables it would receive, and said yes.
// `${VAR}` in a declaration is expanded only for the variables the user allowed for that server:
// in the allow-list (--allow-mcp-env NAME=VAR, "env" in the allow file) or at the terminal.
// --yes alone allows the start, never a variable: a secret goes only where the user named it.
import { EngineError } from '../../shared/errors.js';
import { allowFile, matchingEntries, suggestedEntry, urlHost, type McpAllowEntry } from './allow.js';
import { isHttp, serverCwd, varNames, type McpServerConfig } from './config.js';

export interface McpApproval {
  /** --yes or --auto-run: servers start without asking (their variables still need allowing). */
  unattended?: boolean;
  /** --allow-mcp / --allow-mcp-env entries and the user's allow file (a function: read when a server first starts). */
  allow?: McpAllowEntry[] | (() => McpAllowEntry[]);
  /** A person at a terminal: shown `text`, says yes or no. */
  ask?: (text: string) => Promise<boolean>;
  /**
   * The command being run, for the refusal's advice: "sop sweep" and "sop worker" have no
   * --allow-mcp flags, so theirs names the allow file (and --yes); any other, the flags.
   */
  command?: string;
}

export class McpApprovalError extends EngineError {
  constructor(message: string) {
    super(message, 'MCP_APPROVAL');
    this.name = 'McpApprovalError';
  }
}

/** What is about to start, as the user is shown it. */
export interface StartRequest {
  server: string;
  config: McpServerConfig;
  /** Folder of the SOP file (a stdio server's cwd is relative to it). */
  baseDir: string;
  /** A stdio server runs under bubblewrap. */
  sandboxed: boolean;
}

/** The variables `${VAR}` a declaration reads, in order (command and args hold none: checks.ts refuses them). */
export function declaredVars(config: McpServerConfig): string[] {
  return isHttp(config)
    ? varNames([config.url, ...Object.values(config.headers ?? {})])
    : varNames([config.command, ...(config.args ?? []), config.cwd ?? '', ...Object.values(config.env ?? {})]);
}

/** Where the server runs or what it is sent to, in words. */
export function destination(r: StartRequest): string {
  if (isHttp(r.config)) return `the host ${urlHost(r.config.url) ?? '(not a valid url)'}`;
  return r.sandboxed
    ? 'this machine, in the sandbox (no network; files read-only except the run workspace)'
    : 'this machine, unsandboxed (as you: your files, your network)';
}

/** The exact thing that starts: the command line (as a JSON list) and its folder, or the url. */
export function shownStart(r: StartRequest): string {
  if (isHttp(r.config)) return `url ${JSON.stringify(r.config.url)}`;
  return `command ${JSON.stringify([r.config.command, ...(r.config.args ?? [])])} in ${JSON.stringify(serverCwd(r.config, r.baseDir))}`;
}

/** The question asked at a terminal. */
export function approvalQuestion(r: StartRequest, vars: string[]): string {
  const lines = [
    `The SOP wants to start the MCP server "${r.server}":`,
    `  ${shownStart(r)}`,
    `  runs on / sends to: ${destination(r)}`,
    vars.length > 0
      ? `  it would receive these environment variables: ${vars.join(', ')}${isHttp(r.config) ? ` (sent to ${urlHost(r.config.url)})` : ''}`
      : '  it would receive no environment variables',
    'Start it?',
  ];
  return lines.join('\n');
}

/**
 * Approve starting a server: the names of the variables it may read, or McpApprovalError (one
 * line: what was refused, why, and how to allow it).
 */
export async function approveStart(r: StartRequest, o: McpApproval): Promise<Set<string>> {
  const vars = declaredVars(r.config);
  let all: McpAllowEntry[];
  try {
    all = typeof o.allow === 'function' ? o.allow() : (o.allow ?? []);
  } catch (err) {
    throw new McpApprovalError(`MCP server "${r.server}" was not started: ${(err as Error).message}`);
  }
  const entries = matchingEntries(all, r.server, r.config, r.baseDir);
  const allowedVars = new Set(entries.flatMap((e) => e.env ?? []));
  const missing = () => vars.filter((v) => !allowedVars.has(v));
  // sop sweep and sop worker have no --allow-mcp flags: the allow file (and --yes) only
  const queued = o.command === 'sop worker';
  const flags = o.command !== 'sop sweep' && !queued;
  const entry = `add ${suggestedEntry(r.server, r.config, r.baseDir, vars)} to "mcp" in ${allowFile()}${queued ? " on the worker's machine" : ''} (docs/tools.md)`;
  const how = (what: string | undefined) => (what ? `${what}, or ${entry}` : entry);
  if (entries.length > 0 || o.unattended) {
    if (missing().length === 0) return allowedVars;
    if (!o.ask) {
      const m = missing();
      const named = m.map((v) => `\${${v}}`).join(', ');
      throw new McpApprovalError(
        `MCP server "${r.server}" was not started: it reads ${named}, which you did not allow it (it would go to ${destination(r)}); ` +
          how(
            flags ? `allow ${m.length > 1 ? 'them' : 'it'} with ${m.map((v) => `--allow-mcp-env ${r.server}=${v}`).join(' ')}` : undefined,
          ),
      );
    }
  }
  if (o.ask) {
    if (await o.ask(approvalQuestion(r, vars))) return new Set(vars);
    throw new McpApprovalError(`MCP server "${r.server}" was not started: you did not approve it`);
  }
  const yes = queued ? 'queue the sweep with --yes and start the worker with --yes' : 'give --yes';
  const advice = flags
    ? `allow it with --allow-mcp ${r.server}${vars.length ? vars.map((v) => ` --allow-mcp-env ${r.server}=${v}`).join('') : ' (or --yes)'}`
    : vars.length === 0
      ? yes // --yes allows a start, never a variable
      : undefined;
  throw new McpApprovalError(
    `MCP server "${r.server}" was not started: starting it needs your approval (its ${shownStart(r)}, on ${destination(r)}), ` +
      `and there is no terminal to ask; ${how(advice)}`,
  );
}
