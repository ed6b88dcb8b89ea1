// sop validate --check-tools: start each SOP's MCP servers, with the user's approval as a run asks
// it (--allow-mcp, the allow file, --yes, or a terminal), and check every grant (server/tool,
// server/*) and tool slot binding against the tools the servers list. One line per problem. Stdio
// servers run in the sandbox a run gives them; their stderr goes to a scratch folder, kept (and
// named) when a server did not start.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline/promises';
import { loadSopFile } from '../../api/loader/checked-load.js';
import { resolveSandbox } from '../../features/actions/executors/sandbox-mode.js';
import { cliAllowEntries, fileAllowEntries } from '../../features/mcp/allow.js';
import { mcpServers, splitRef } from '../../features/mcp/config.js';
import { McpHub } from '../../features/mcp/hub.js';
import { slotBindings } from '../../features/mcp/slots.js';
import { checkGrants } from '../../features/mcp/tool-command.js';
import { cliLlmAllowEntries, consentWarnings, fileLlmAllowEntries } from '../../core/llm/consent.js';

export interface CheckToolsOptions {
  quiet: boolean;
  /** --yes: start the servers without asking. */
  yes?: boolean;
  allowMcp?: string[];
  allowMcpEnv?: string[];
  /** LLM servers the SOP names that a run may call (src/core/llm/consent.ts); the others are told, one line each. */
  allowBaseUrl?: string[];
  allowBaseUrlEnv?: string[];
  /** --sandbox / --no-sandbox (default: when bubblewrap works here). */
  sandbox?: boolean;
}

async function askYesNo(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(`${question} [y/N] `)).trim());
  } finally {
    rl.close();
  }
}

export async function checkToolsCommand(files: string[], opts: CheckToolsOptions): Promise<number> {
  let failed = 0;
  const cli = cliAllowEntries(opts.allowMcp, opts.allowMcpEnv);
  const sandbox = resolveSandbox(opts.sandbox, false).sandbox;
  const llmAllow = cliLlmAllowEntries(opts.allowBaseUrl, opts.allowBaseUrlEnv);
  for (const file of files) {
    const { sop } = loadSopFile(file);
    // no LLM is called here: the servers a run would need consent for are told
    for (const w of consentWarnings(sop, () => [...llmAllow, ...fileLlmAllowEntries()])) process.stderr.write(`${file}: warning: ${w}\n`);
    const servers = mcpServers(sop);
    if (Object.keys(servers).length === 0) {
      if (!opts.quiet) process.stdout.write(`${file}: ok (no mcp_servers to check)\n`);
      continue;
    }
    const scratch = mkdtempSync(join(tmpdir(), 'sop-check-tools-'));
    const workspace = join(scratch, 'workspace');
    const hub = new McpHub({
      servers,
      baseDir: dirname(resolve(file)),
      clientName: 'sop-validate',
      runDir: scratch,
      workspace,
      ...(sandbox ? { sandbox: { workspace } } : {}),
      approval: {
        unattended: opts.yes === true,
        allow: () => [...cli, ...fileAllowEntries()],
        ...(process.stdin.isTTY ? { ask: askYesNo } : {}),
        command: 'sop validate --check-tools',
      },
    });
    const problems: string[] = [];
    const counts: string[] = [];
    let started = true;
    try {
      for (const name of hub.names()) {
        try {
          counts.push(`${name}: ${(await hub.tools(name)).length} tools`);
        } catch (err) {
          started = false;
          problems.push((err as Error).message);
        }
      }
      if (problems.length === 0) problems.push(...(await checkGrants(hub, sop.states)));
      for (const [slot, ref] of Object.entries(slotBindings(sop))) {
        const r = splitRef(ref);
        if (!r || !hub.has(r.server)) problems.push(`tool slot "${slot}" is bound to "${ref}", which names no server of mcp_servers`);
        else if (problems.length === 0 && !(await hub.tool(r.server, r.tool)))
          problems.push(`tool slot "${slot}" is bound to "${ref}", and server "${r.server}" has no tool "${r.tool}"`);
      }
    } finally {
      await hub.close();
      // a server that did not start: its stderr log, named in the message, is kept
      if (started || !existsSync(join(scratch, 'mcp'))) rmSync(scratch, { recursive: true, force: true });
    }
    if (problems.length > 0) {
      failed++;
      for (const p of problems) process.stderr.write(`${file}: ${p}\n`);
    } else if (!opts.quiet) process.stdout.write(`${file}: ok, tools ok (${counts.join(', ')})\n`);
  }
  return failed > 0 ? 1 : 0;
}
