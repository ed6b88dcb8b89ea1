// sop validate --check-tools starts the servers and checks every grant against the tools they list;
// plain validate checks grants name declared servers without starting anything.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOTES_SERVER, notesServer, tempDir, toolSop, writeSop } from './helpers/mcp-notes.js';
import { spawnCliSync } from './helpers/cli.js';

const sop = (cli: string[], env: Record<string, string> = {}) =>
  spawnCliSync([...cli], { encoding: 'utf8', env: { ...process.env, ...env } });

describe('sop validate and MCP tools', () => {
  it('--check-tools accepts grants the server lists, and names the ones it does not', () => {
    const dir = tempDir();
    const good = writeSop(dir, toolSop({ notes: notesServer(dir) }, ['notes/*', 'notes/add_note']), []).file;
    let r = sop(['validate', '--check-tools', good]);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${good}: tools ok (notes: 4 tools)`);

    const bad = writeSop(tempDir(), toolSop({ notes: notesServer(dir) }, ['notes/add_note', 'notes/remove_note']), []).file;
    r = sop(['validate', '--check-tools', bad]);
    expect(r.status).toBe(1);
    expect(r.stderr.trim()).toBe(
      `${bad}: state "work" grants "notes/remove_note", and server "notes" has no tool "remove_note" (its tools: add_note, list_notes, search_notes, delete_note)`,
    );
    expect(sop(['validate', bad]).status).toBe(0); // without --check-tools no server is started
  });

  it('--check-tools reports a server that does not start, in one line', () => {
    const dir = tempDir();
    const file = writeSop(dir, toolSop({ broken: { command: join(dir, 'no-such-server') } }, ['broken/*']), []).file;
    const r = sop(['validate', '--check-tools', file]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: MCP server "broken" \\(".*no-such-server"\\) did not start: .*\\n$`),
    );
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("--check-tools expands ${VAR} in a server's command and args, and never prints the values", () => {
    const dir = tempDir();
    const server = { ...notesServer(dir), command: '${SOP_TEST_NODE}', args: ['${SOP_TEST_SERVER}', '--token', '${SOP_TEST_ARG}'] };
    const file = writeSop(dir, toolSop({ notes: server }, ['notes/*']), []).file;
    const env = { SOP_TEST_NODE: process.execPath, SOP_TEST_SERVER: NOTES_SERVER, SOP_TEST_ARG: 'vtok-0e5d7a93' };
    let r = sop(['validate', '--check-tools', file], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${file}: tools ok (notes: 4 tools)\n`);

    r = sop(['validate', '--check-tools', file], { ...env, SOP_TEST_NODE: join(dir, 'gone-4b1c', 'node') });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      `${file}: MCP server "notes" ("\${SOP_TEST_NODE} \${SOP_TEST_SERVER} --token \${SOP_TEST_ARG}") did not start: `,
    );
    expect(r.stdout + r.stderr).not.toMatch(/vtok-0e5d7a93|gone-4b1c/);

    const unset = { SOP_TEST_NODE: process.execPath, SOP_TEST_SERVER: NOTES_SERVER };
    r = spawnCliSync(['validate', '--check-tools', file], {
      encoding: 'utf8',
      env: Object.fromEntries(Object.entries({ ...process.env, ...unset }).filter(([k]) => k !== 'SOP_TEST_ARG')),
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toBe(
      `${file}: MCP server "notes": mcp_servers.notes.args[2] uses \${SOP_TEST_ARG}, and the environment variable SOP_TEST_ARG is not set\n`,
    );
  });

  it('plain validate: a grant must name a declared server, and a state with tools needs next_states["1"]', () => {
    const dir = tempDir();
    const s = toolSop({ notes: notesServer(dir) }, ['search/web_search']) as any;
    delete s.states.work.next_states;
    s.states.work.commands = {};
    const file = writeSop(dir, s, []).file;
    const r = sop(['validate', file]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('"search/web_search" names no server of mcp_servers (servers: notes)');
    expect(r.stderr).toContain('a state with tools needs next_states["1"]');
  });
});
