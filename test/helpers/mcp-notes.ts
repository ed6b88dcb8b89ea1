// The notes MCP server of examples/mcp in tests: SOPs that grant its tools, hand-written
// cassettes of JSON commands, and the calls the server really received (its NOTES_CALL_LOG).
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliAllowEntries } from '../../src/features/mcp/allow.js';

export const NOTES_SERVER = join(process.cwd(), 'examples/mcp/notes-server.mjs');

export function tempDir(prefix = 'sop-mcp-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** A SOP whose one command state grants `tools` of the servers given; the agent Iris works there. */
export function toolSop(servers: Record<string, unknown>, tools: string[], extra: Record<string, unknown> = {}) {
  return {
    name: 'mcp-test',
    environment: { summary: { enabled: false } },
    mcp_servers: servers,
    agents: { Iris: { roles: { work: 'Researcher' } } },
    root: 'work',
    states: {
      work: {
        roles: ['Researcher'],
        tools,
        commands: { finish: { executor: 'finish' } },
        controller: { max_turns: 12 },
        next_states: { 1: 'done' },
        ...extra,
      },
      done: { final: true },
    },
  };
}

/** The notes server over stdio, keeping its notes and call log in `dir`. */
export function notesServer(dir: string, env: Record<string, string> = {}) {
  return {
    command: process.execPath,
    args: [NOTES_SERVER],
    env: { NOTES_FILE: join(dir, 'notes.json'), NOTES_CALL_LOG: join(dir, 'calls.jsonl'), ...env },
  };
}

/** Write a SOP and a hand-written cassette of the agent's replies (commands) into `dir`. */
export function writeSop(dir: string, sop: object, replies: Array<{ command: string; command_args: Record<string, unknown> } | string>) {
  const file = join(dir, 'test.sop.json');
  const cassette = join(dir, 'test.cassette.json');
  writeFileSync(file, JSON.stringify(sop, null, 2));
  writeFileSync(
    cassette,
    JSON.stringify({
      version: 1,
      source: 'hand-written',
      interactions: replies.map((r) => ({
        purpose: 'agent',
        state: 'work',
        agent: 'Iris',
        response: typeof r === 'string' ? r : JSON.stringify(r),
      })),
    }),
  );
  return { file, cassette };
}

/** The tool calls the notes server received, in order. */
export function serverCalls(dir: string): Array<{ tool: string; args: Record<string, unknown>; argv: string[] }> {
  const log = join(dir, 'calls.jsonl');
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { tool: string; args: Record<string, unknown>; argv: string[] });
}

export function journal(runDir: string): Array<Record<string, any>> {
  return readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, any>);
}

export function onlyRun(out: string): string {
  const dirs = readdirSync(out);
  if (dirs.length !== 1) throw new Error(`expected one run folder in ${out}, found ${dirs.length}`);
  return join(out, dirs[0]!);
}

export const cmd = (command: string, command_args: Record<string, unknown> = {}) => ({ command, command_args });

/**
 * Run options letting these servers start, as `--allow-mcp NAME` does, and read these variables
 * (`--allow-mcp-env NAME=VAR`); unsandboxed, for tests that read the files a server writes
 * outside the workspace (test/mcp-sandbox.test.ts covers the sandbox).
 */
export function allowMcp(names: string[], envPairs: string[] = []) {
  return { mcpApproval: { allow: cliAllowEntries(names, envPairs) }, sandbox: false };
}
