// MCP tools granted to a state, against the notes server of examples/mcp (stdio, written with the
// SDK): calls and their results in the transcript and journal, tool errors as failed results,
// approval of tools that are not read-only, truncation of large results, ${VAR} in server env and
// in its command, args and cwd.
import { mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSop } from '../src/api/run.js';
import { loadSopFile } from '../src/loader/load.js';
import { terminal } from './helpers/executor-context.js';
import { cmd, journal, NOTES_SERVER, notesServer, serverCalls, tempDir, toolSop, writeSop } from './helpers/mcp-notes.js';

async function run(dir: string, sop: object, replies: Parameters<typeof writeSop>[2], o: Record<string, unknown> = {}) {
  const { file, cassette } = writeSop(dir, sop, replies);
  const out = join(dir, 'runs');
  const handle = runSop(loadSopFile(file).sop, { file, llm: `replay:${cassette}`, out, ...o });
  const result = await handle.result;
  return { result, runDir: handle.dir!, events: journal(handle.dir!) };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('MCP tools over stdio', () => {
  it('calls granted tools; results enter the transcript and journal; the server is closed at the end', async () => {
    const dir = tempDir();
    const { result, runDir, events } = await run(
      dir,
      toolSop({ notes: notesServer(dir) }, ['notes/*']),
      [
        cmd('notes__search_notes', { query: 'sleep' }),
        cmd('notes__add_note', { title: 'Sleep', text: 'Sleep consolidates memory.', tags: ['sleep'] }),
        cmd('notes__list_notes'),
        cmd('finish', { result: 'one note' }),
      ],
      { yes: true },
    );
    expect(result.status).toBe('finished');
    expect(serverCalls(dir).map((c) => c.tool)).toEqual(['search_notes', 'add_note', 'list_notes']);
    const results = events.filter((e) => e.type === 'executor_result' && e.executor === 'mcp');
    expect(results.map((e) => [e.command, e.ok])).toEqual([
      ['notes__search_notes', true],
      ['notes__add_note', true],
      ['notes__list_notes', true],
    ]);
    expect(events.filter((e) => e.type === 'effect_finished')).toHaveLength(4); // three tools and finish
    const transcript = readFileSync(join(runDir, 'transcript.md'), 'utf8');
    expect(transcript).toContain('added note #1 "Sleep"');
    expect(transcript).toContain('#1 Sleep [sleep]: Sleep consolidates memory.');
    expect(JSON.parse(readFileSync(join(dir, 'notes.json'), 'utf8'))).toHaveLength(1);
    expect(statSync(join(runDir, 'mcp', 'notes.stderr.log')).isFile()).toBe(true);
    // started once for the run, and ended with it
    const pids = new Set(
      readFileSync(join(dir, 'calls.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).pid),
    );
    expect(pids.size).toBe(1);
    expect(alive([...pids][0] as number)).toBe(false);
  });

  it('gives tool errors back as failed results, and the run goes on', async () => {
    const dir = tempDir();
    const { result, events } = await run(
      dir,
      toolSop({ notes: notesServer(dir) }, ['notes/delete_note', 'notes/list_notes']),
      [
        cmd('notes__delete_note', { id: 99 }), // the tool reports an error
        cmd('notes__delete_note', { id: 'one' }), // wrong argument type: sent back for a retry
        cmd('notes__add_note', { title: 'x', text: 'y' }), // not granted in this state
        cmd('notes__list_notes'),
        cmd('finish', { result: 'done' }),
      ],
      { yes: true },
    );
    expect(result.status).toBe('finished');
    const failed = events.find((e) => e.type === 'executor_result' && e.command === 'notes__delete_note')!;
    expect(failed.ok).toBe(false);
    expect(failed.result).toBe('The MCP tool notes/delete_note reported an error:\nthere is no note #99');
    const rejected = events.filter((e) => e.type === 'command_rejected').map((e) => e.error);
    expect(rejected[0]).toMatch(/argument "id" of command "notes__delete_note" must be an integer/);
    expect(rejected[1]).toMatch(/unknown command "notes__add_note"; the commands are: notes__delete_note, notes__list_notes, finish/);
    expect(serverCalls(dir).map((c) => c.tool)).toEqual(['delete_note', 'list_notes']);
  });

  it('runs read-only tools freely; others need approval, which shows the tool and its arguments', async () => {
    // nobody to ask: the read-only search runs, the add stops the run (resumable), uncalled
    let dir = tempDir();
    const sop = (d: string) => toolSop({ notes: notesServer(d) }, ['notes/*']);
    const replies = [cmd('notes__search_notes', { query: 'tea' }), cmd('notes__add_note', { title: 'Tea', text: 'Green tea.' })];
    let r = await run(dir, sop(dir), replies);
    expect(r.result.status).toBe('interrupted');
    expect(r.result.error?.message).toMatch(/needs approval to call the MCP tool notes\/add_note, and there is no terminal to ask/);
    expect(serverCalls(dir).map((c) => c.tool)).toEqual(['search_notes']);

    // a person says no: not called, and the agent is told
    dir = tempDir();
    const no = terminal(['no']);
    r = await run(dir, sop(dir), [...replies, cmd('finish', { result: 'refused' })], { human: no });
    expect(r.result.status).toBe('finished');
    expect(serverCalls(dir).map((c) => c.tool)).toEqual(['search_notes']);
    const shown = no.shown.join('');
    expect(shown).toContain('Iris wants to call the MCP tool notes/add_note with these arguments:');
    expect(shown).toContain('"title": "Tea"');
    const refused = r.events.find((e) => e.type === 'executor_result' && e.command === 'notes__add_note')!;
    expect([refused.ok, refused.result]).toEqual([
      false,
      'The MCP tool notes/add_note was not called: the user did not approve it ("no").',
    ]);

    // a person says yes: called
    dir = tempDir();
    r = await run(dir, sop(dir), [...replies, cmd('finish', { result: 'ok' })], { human: terminal(['yes']) });
    expect(r.result.status).toBe('finished');
    expect(serverCalls(dir).map((c) => c.tool)).toEqual(['search_notes', 'add_note']);
  });

  it('truncates a large result with a note', async () => {
    const dir = tempDir();
    const { events } = await run(
      dir,
      toolSop({ notes: notesServer(dir) }, ['notes/*']),
      [cmd('notes__add_note', { title: 'Long', text: 'z'.repeat(40_000) }), cmd('notes__list_notes'), cmd('finish', { result: 'ok' })],
      { yes: true },
    );
    const list = events.find((e) => e.type === 'executor_result' && e.command === 'notes__list_notes')!;
    expect(list.result.length).toBeLessThan(16_200);
    expect(list.result).toMatch(/\n\[truncated: the tool returned 40009 characters; only the first 16000 are shown\]$/);
  });

  it('reads ${VAR} in server env from the environment, and writes it nowhere in the run folder', async () => {
    const dir = tempDir();
    process.env.SOP_TEST_NOTES_LOG = join(dir, 'calls.jsonl');
    process.env.SOP_TEST_NOTES_TOKEN = 'tok-5b1e9c0d7f'; // not a *_KEY name: only the run folder check keeps it out
    try {
      const server = {
        ...notesServer(dir),
        env: { NOTES_FILE: join(dir, 'notes.json'), NOTES_CALL_LOG: '${SOP_TEST_NOTES_LOG}', NOTES_TOKEN: '${SOP_TEST_NOTES_TOKEN}' },
      };
      const { result, runDir } = await run(dir, toolSop({ notes: server }, ['notes/list_notes']), [
        cmd('notes__list_notes'),
        cmd('finish', { result: 'ok' }),
      ]);
      expect(result.status).toBe('finished');
      expect(serverCalls(dir).map((c) => c.tool)).toEqual(['list_notes']);
      const all = (d: string): string[] =>
        readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? all(join(d, e.name)) : [join(d, e.name)]));
      for (const f of all(runDir)) expect(readFileSync(f, 'utf8'), f).not.toContain('tok-5b1e9c0d7f');

      delete process.env.SOP_TEST_NOTES_TOKEN;
      const missing = await run(tempDir(), toolSop({ notes: server }, ['notes/list_notes']), [cmd('notes__list_notes')]);
      expect(missing.result.status).toBe('failed');
      expect(missing.result.error?.message).toBe(
        'MCP server "notes": mcp_servers.notes.env.NOTES_TOKEN uses ${SOP_TEST_NOTES_TOKEN}, and the environment variable SOP_TEST_NOTES_TOKEN is not set',
      );
    } finally {
      delete process.env.SOP_TEST_NOTES_LOG;
      delete process.env.SOP_TEST_NOTES_TOKEN;
    }
  });

  it('reads ${VAR} in the command, args and cwd of a server, and writes the values nowhere in the run folder', async () => {
    const dir = tempDir();
    const home = join(dir, 'home-7d2e41');
    mkdirSync(home);
    const vars = {
      SOP_TEST_NODE: process.execPath,
      SOP_TEST_NOTES_SERVER: NOTES_SERVER,
      SOP_TEST_NOTES_PATH: join(home, 'notes-a19f3c.json'),
      SOP_TEST_ARG_TOKEN: 'argtok-6c02e8b1f4', // not a *_TOKEN name: only the run folder check keeps it out
      SOP_TEST_HOME: home,
    };
    Object.assign(process.env, vars);
    const all = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? all(join(d, e.name)) : [join(d, e.name)]));
    const leaks = (runDir: string) =>
      all(runDir).flatMap((f) =>
        [f, readFileSync(f, 'utf8')].flatMap((text) =>
          ['argtok-6c02e8b1f4', 'home-7d2e41', 'notes-a19f3c'].filter((v) => text.includes(v)).map((v) => `${v} in ${f}`),
        ),
      );
    try {
      const server = {
        command: '${SOP_TEST_NODE}',
        args: ['${SOP_TEST_NOTES_SERVER}', '--notes', '${SOP_TEST_NOTES_PATH}', '--token', '${SOP_TEST_ARG_TOKEN}'],
        cwd: '${SOP_TEST_HOME}',
        env: { NOTES_CALL_LOG: 'calls.jsonl' }, // relative: written in the server's cwd
      };
      const { result, runDir, events } = await run(
        dir,
        toolSop({ notes: server }, ['notes/*']),
        [cmd('notes__add_note', { title: 'Args', text: 'From ${VAR} in args.' }), cmd('finish', { result: 'ok' })],
        { yes: true },
      );
      expect(result.status).toBe('finished');
      expect(events.find((e) => e.type === 'executor_result' && e.command === 'notes__add_note')?.result).toBe('added note #1 "Args"');
      // the server ran in the expanded cwd, with the expanded arguments
      expect(serverCalls(home)).toEqual([
        expect.objectContaining({ tool: 'add_note', argv: ['--notes', vars.SOP_TEST_NOTES_PATH, '--token', 'argtok-6c02e8b1f4'] }),
      ]);
      expect(JSON.parse(readFileSync(vars.SOP_TEST_NOTES_PATH, 'utf8'))).toEqual([expect.objectContaining({ title: 'Args' })]);
      // the run folder keeps the command line as written (the journal holds the SOP), and no value
      expect(readFileSync(join(runDir, 'journal.jsonl'), 'utf8')).toContain('${SOP_TEST_ARG_TOKEN}');
      expect(leaks(runDir)).toEqual([]);
      console.log(`mcp-notes: ${all(runDir).length} files of the run folder checked for the values of \${VAR} in command, args and cwd`);

      // an unset variable: one clear line naming it, and the server is not started
      delete process.env.SOP_TEST_ARG_TOKEN;
      const missing = await run(tempDir(), toolSop({ notes: server }, ['notes/list_notes']), [cmd('notes__list_notes')]);
      expect(missing.result.status).toBe('failed');
      expect(missing.result.error?.message).toBe(
        'MCP server "notes": mcp_servers.notes.args[4] uses ${SOP_TEST_ARG_TOKEN}, and the environment variable SOP_TEST_ARG_TOKEN is not set',
      );
      process.env.SOP_TEST_ARG_TOKEN = vars.SOP_TEST_ARG_TOKEN;

      // a program that does not start: the message shows the command line as written, ${VAR} and all
      process.env.SOP_TEST_NODE = join(home, 'no-such-node');
      const broken = await run(tempDir(), toolSop({ notes: server }, ['notes/list_notes']), [cmd('notes__list_notes')]);
      expect(broken.result.status).toBe('failed');
      expect(broken.result.error?.message).toMatch(
        /^MCP server "notes" \("\$\{SOP_TEST_NODE\} \$\{SOP_TEST_NOTES_SERVER\} --notes \$\{SOP_TEST_NOTES_PATH\} --token \$\{SOP_TEST_ARG_TOKEN\}"\) did not start: /,
      );
      expect(broken.result.error?.message).not.toMatch(/argtok-6c02e8b1f4|home-7d2e41|notes-a19f3c/);
      expect(leaks(broken.runDir)).toEqual([]);
    } finally {
      for (const k of Object.keys(vars)) delete process.env[k];
    }
  });
});
