// sop validate --check-tools starts the servers (with approval, as a run asks it) and checks every
// grant against the tools they list; plain validate checks grants name declared servers, and that
// no stdio command line reads a ${VAR}, without starting anything.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NOTES_SERVER, notesServer, tempDir, toolSop, writeSop } from './helpers/mcp-notes.js';
import { spawnCliAsync } from './helpers/cli.js';

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const sop = (cli: string[], env: Record<string, string> = {}) =>
  spawnCliAsync([...cli], { encoding: 'utf8', env: { ...process.env, ...env } });

describe('sop validate and MCP tools', () => {
  it('--check-tools accepts grants the server lists, and names the ones it does not', async () => {
    const dir = tempDir();
    const good = writeSop(dir, toolSop({ notes: notesServer(dir) }, ['notes/*', 'notes/add_note']), []).file;
    let r = await sop(['validate', '--check-tools', good, '--allow-mcp', 'notes']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe(`${good}: ok, tools ok (notes: 4 tools)\n`);

    const bad = writeSop(tempDir(), toolSop({ notes: notesServer(dir) }, ['notes/add_note', 'notes/remove_note']), []).file;
    r = await sop(['validate', '--check-tools', bad, '--yes']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe(''); // never "ok" before the error
    expect(r.stderr.trim()).toBe(
      `${bad}: state "work" grants "notes/remove_note", and server "notes" has no tool "remove_note" (its tools: add_note, list_notes, search_notes, delete_note)`,
    );
    expect((await sop(['validate', bad])).status).toBe(0); // without --check-tools no server is started
  });

  it('--check-tools reports a server that does not start, in one line', async () => {
    const dir = tempDir();
    const file = writeSop(dir, toolSop({ broken: { command: join(dir, 'no-such-server') } }, ['broken/*']), []).file;
    const r = await sop(['validate', '--check-tools', file, '--allow-mcp', 'broken']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: MCP server "broken" \\(".*no-such-server"\\) did not start: .*\\n$`),
    );
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('refuses ${VAR} in a stdio command line; --check-tools expands ${VAR} in env only for the variables allowed, and never prints the values', async () => {
    const dir = tempDir();
    const inArgs = writeSop(
      dir,
      toolSop({ notes: { ...notesServer(dir), args: [NOTES_SERVER, '--token', '${SOP_TEST_ARG}'] } }, ['notes/*']),
      [],
    ).file;
    let r = await sop(['validate', inArgs]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /^.*test\.sop\.json:\d+:\d+: \/mcp_servers\/notes\/args\/2: \$\{SOP_TEST_ARG\} in the command line of a stdio MCP server, [^\n]*pass it in "env"[^\n]*\n$/,
    );
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);

    const server = { ...notesServer(dir), env: { NOTES_FILE: join(dir, 'notes.json'), NOTES_TOKEN: '${SOP_TEST_ARG}' } };
    const file = writeSop(tempDir(), toolSop({ notes: server }, ['notes/*']), []).file;
    const env = { SOP_TEST_ARG: 'vtok-0e5d7a93' };
    // allowed to start, not to read the variable: refused, naming it
    r = await sop(['validate', '--check-tools', file, '--yes'], env);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      new RegExp(
        `^${esc(file)}: MCP server "notes" was not started: it reads \\$\\{SOP_TEST_ARG\\}, which you did not allow it .*--allow-mcp-env notes=SOP_TEST_ARG.*\\n$`,
      ),
    );
    r = await sop(['validate', '--check-tools', file, '--allow-mcp-env', 'notes=SOP_TEST_ARG'], env);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain(`${file}: ok, tools ok (notes: 4 tools)\n`);
    expect(r.stdout + r.stderr).not.toContain('vtok-0e5d7a93');

    const unset = await spawnCliAsync(['validate', '--check-tools', file, '--allow-mcp-env', 'notes=SOP_TEST_ARG'], {
      encoding: 'utf8',
      env: Object.fromEntries(Object.entries(process.env).filter(([k]) => k !== 'SOP_TEST_ARG')),
    });
    expect(unset.status).toBe(1);
    expect(unset.stderr).toBe(
      `${file}: MCP server "notes": mcp_servers.notes.env.NOTES_TOKEN uses \${SOP_TEST_ARG}, and the environment variable SOP_TEST_ARG is not set\n`,
    );
  });

  it('plain validate: a grant must name a declared server, and a state with tools needs next_states["1"]', async () => {
    const dir = tempDir();
    const s = toolSop({ notes: notesServer(dir) }, ['search/web_search']) as any;
    delete s.states.work.next_states;
    s.states.work.commands = {};
    const file = writeSop(dir, s, []).file;
    const r = await sop(['validate', file]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('"search/web_search" names no server of mcp_servers (servers: notes)');
    expect(r.stderr).toContain('a state with tools needs next_states["1"]');
  });
});
