// MCP tools granted to a state, against the notes server of examples/mcp (stdio, written with the
// SDK): calls and their results in the transcript and journal, tool errors as failed results,
// approval of tools that are not read-only, truncation of large results, ${VAR} in server env and
// cwd (for the variables allowed), never in its command or args. Servers run unsandboxed here, to
// read the files they write outside the workspace (test/mcp-sandbox.test.ts covers the sandbox).
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runSop } from '../src/api/run-sop.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { terminal } from './helpers/executor-context.js';
import { allowMcp, cmd, journal, NOTES_SERVER, notesServer, serverCalls, tempDir, toolSop, writeSop } from './helpers/mcp-notes.js';
import { SopError } from '../src/format/sop/diagnostics.js';

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
      { yes: true, sandbox: false },
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
      { yes: true, sandbox: false },
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
    let r = await run(dir, sop(dir), replies, allowMcp(['notes']));
    expect(r.result.status).toBe('interrupted');
    expect(r.result.error?.message).toMatch(/needs approval to call the MCP tool notes\/add_note, and there is no terminal to ask/);
    expect(serverCalls(dir).map((c) => c.tool)).toEqual(['search_notes']);

    // a person says no: not called, and the agent is told
    dir = tempDir();
    const no = terminal(['no']);
    r = await run(dir, sop(dir), [...replies, cmd('finish', { result: 'refused' })], { human: no, ...allowMcp(['notes']) });
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
    r = await run(dir, sop(dir), [...replies, cmd('finish', { result: 'ok' })], { human: terminal(['yes']), ...allowMcp(['notes']) });
    expect(r.result.status).toBe('finished');
    expect(serverCalls(dir).map((c) => c.tool)).toEqual(['search_notes', 'add_note']);
  });

  it('a person at the terminal is shown the exact command, where it runs and each variable, before the server starts', async () => {
    process.env.SOP_TEST_NOTES_SECRET = 'sec-41d9a0';
    try {
      const sop = (d: string) =>
        toolSop({ notes: { ...notesServer(d), env: { ...notesServer(d).env, NOTES_TOKEN: '${SOP_TEST_NOTES_SECRET}' } } }, ['notes/*']);
      const replies = [cmd('notes__search_notes', { query: 'tea' }), cmd('finish', { result: 'ok' })];
      // "no": nothing starts, and the run says so in one line
      let dir = tempDir();
      const no = terminal(['no']);
      let r = await run(dir, sop(dir), replies, { human: no, sandbox: false });
      expect(r.result.status).toBe('failed');
      expect(r.result.error?.message).toBe('MCP server "notes" was not started: you did not approve it');
      const question = no.shown.join('');
      expect(question).toContain('The SOP wants to start the MCP server "notes":');
      expect(question).toContain(`command ${JSON.stringify([process.execPath, NOTES_SERVER])} in ${JSON.stringify(dir)}`);
      expect(question).toContain('runs on / sends to: this machine, unsandboxed (as you: your files, your network)');
      expect(question).toContain('it would receive these environment variables: SOP_TEST_NOTES_SECRET');
      expect(question).not.toContain('sec-41d9a0');
      expect(serverCalls(dir)).toEqual([]);
      // "yes": it starts, with the variables it was shown
      dir = tempDir();
      r = await run(dir, sop(dir), replies, { human: terminal(['yes']), sandbox: false });
      expect(r.result.status, r.result.error?.message).toBe('finished');
      expect(serverCalls(dir).map((c) => c.tool)).toEqual(['search_notes']);
    } finally {
      delete process.env.SOP_TEST_NOTES_SECRET;
    }
  });

  it('truncates a large result with a note', async () => {
    const dir = tempDir();
    const { events } = await run(
      dir,
      toolSop({ notes: notesServer(dir) }, ['notes/*']),
      [cmd('notes__add_note', { title: 'Long', text: 'z'.repeat(40_000) }), cmd('notes__list_notes'), cmd('finish', { result: 'ok' })],
      { yes: true, sandbox: false },
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
      const allowed = allowMcp(['notes'], ['notes=SOP_TEST_NOTES_LOG', 'notes=SOP_TEST_NOTES_TOKEN']);
      // a variable the user did not allow this server: not started (the run is refused before it starts, with
      // nobody to ask), one line naming the variable (never its value)
      const refusedDir = tempDir();
      const refused = await run(refusedDir, toolSop({ notes: server }, ['notes/list_notes']), [cmd('notes__list_notes')], {
        ...allowMcp(['notes'], ['notes=SOP_TEST_NOTES_LOG']),
        yes: true,
      }).then(
        () => undefined,
        (err: Error) => err.message,
      );
      expect(refused).toMatch(
        /^MCP server "notes" was not started: it reads \$\{SOP_TEST_NOTES_TOKEN\}, which you did not allow it \(it would go to this machine, unsandboxed .*\); allow it with --allow-mcp-env notes=SOP_TEST_NOTES_TOKEN, or add [^\n]+$/,
      );
      expect(refused).not.toContain('tok-5b1e9c0d7f');
      expect(existsSync(join(refusedDir, 'runs')) ? readdirSync(join(refusedDir, 'runs')) : []).toEqual([]);
      expect(serverCalls(dir)).toEqual([]);

      const { result, runDir } = await run(
        dir,
        toolSop({ notes: server }, ['notes/list_notes']),
        [cmd('notes__list_notes'), cmd('finish', { result: 'ok' })],
        allowed,
      );
      expect(result.status).toBe('finished');
      expect(serverCalls(dir).map((c) => c.tool)).toEqual(['list_notes']);
      const all = (d: string): string[] =>
        readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? all(join(d, e.name)) : [join(d, e.name)]));
      for (const f of all(runDir)) expect(readFileSync(f, 'utf8'), f).not.toContain('tok-5b1e9c0d7f');

      delete process.env.SOP_TEST_NOTES_TOKEN;
      const missing = await run(tempDir(), toolSop({ notes: server }, ['notes/list_notes']), [cmd('notes__list_notes')], allowed);
      expect(missing.result.status).toBe('failed');
      expect(missing.result.error?.message).toBe(
        'MCP server "notes": mcp_servers.notes.env.NOTES_TOKEN uses ${SOP_TEST_NOTES_TOKEN}, and the environment variable SOP_TEST_NOTES_TOKEN is not set',
      );
    } finally {
      delete process.env.SOP_TEST_NOTES_LOG;
      delete process.env.SOP_TEST_NOTES_TOKEN;
    }
  });

  it('refuses ${VAR} in the command and args of a server (ps shows them), with the JSON pointer', () => {
    const dir = tempDir();
    const server = { command: '${SOP_TEST_NODE}', args: [NOTES_SERVER, '--token', '${OPENAI_API_KEY}'] };
    const { file } = writeSop(dir, toolSop({ notes: server }, ['notes/*']), []);
    let error: unknown;
    try {
      loadSopFile(file);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SopError);
    const found = (error as SopError).diagnostics.map((d) => [d.pointer, d.message.split(':')[0]]);
    expect(found).toEqual([
      [
        '/mcp_servers/notes/command',
        '${SOP_TEST_NODE} in the command line of a stdio MCP server, where ps shows it to every user of the machine',
      ],
      [
        '/mcp_servers/notes/args/2',
        '${OPENAI_API_KEY} in the command line of a stdio MCP server, where ps shows it to every user of the machine',
      ],
    ]);
    expect((error as SopError).diagnostics[1]!.message).toContain('pass it in "env" ("env": {"OPENAI_API_KEY": "${OPENAI_API_KEY}"})');
  });

  it('reads ${VAR} in the env and cwd of a server, and writes the values nowhere in the run folder', async () => {
    const dir = tempDir();
    const home = join(dir, 'home-7d2e41');
    mkdirSync(home);
    const vars = {
      SOP_TEST_NOTES_PATH: join(home, 'notes-a19f3c.json'),
      SOP_TEST_ENV_TOKEN: 'envtok-6c02e8b1f4', // not a *_TOKEN name: only the run folder check keeps it out
      SOP_TEST_HOME: home,
    };
    Object.assign(process.env, vars);
    const allowed = allowMcp(['notes'], ['notes=SOP_TEST_NOTES_PATH', 'notes=SOP_TEST_ENV_TOKEN', 'notes=SOP_TEST_HOME']);
    const all = (d: string): string[] =>
      readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? all(join(d, e.name)) : [join(d, e.name)]));
    const leaks = (runDir: string) =>
      all(runDir).flatMap((f) =>
        [f, readFileSync(f, 'utf8')].flatMap((text) =>
          ['envtok-6c02e8b1f4', 'home-7d2e41', 'notes-a19f3c'].filter((v) => text.includes(v)).map((v) => `${v} in ${f}`),
        ),
      );
    try {
      const server = {
        command: process.execPath,
        args: [NOTES_SERVER],
        cwd: '${SOP_TEST_HOME}',
        env: { NOTES_FILE: '${SOP_TEST_NOTES_PATH}', NOTES_TOKEN: '${SOP_TEST_ENV_TOKEN}', NOTES_CALL_LOG: 'calls.jsonl' }, // relative: in the server's cwd
      };
      const { result, runDir, events } = await run(
        dir,
        toolSop({ notes: server }, ['notes/*']),
        [cmd('notes__add_note', { title: 'Env', text: 'From ${VAR} in env.' }), cmd('finish', { result: 'ok' })],
        { yes: true, ...allowed },
      );
      expect(result.status).toBe('finished');
      expect(events.find((e) => e.type === 'executor_result' && e.command === 'notes__add_note')?.result).toBe('added note #1 "Env"');
      // the server ran in the expanded cwd, with no arguments but its script
      expect(serverCalls(home)).toEqual([expect.objectContaining({ tool: 'add_note', argv: [] })]);
      expect(JSON.parse(readFileSync(vars.SOP_TEST_NOTES_PATH, 'utf8'))).toEqual([expect.objectContaining({ title: 'Env' })]);
      // the run folder keeps the declaration as written (the journal holds the SOP), and no value
      expect(readFileSync(join(runDir, 'journal.jsonl'), 'utf8')).toContain('${SOP_TEST_ENV_TOKEN}');
      expect(leaks(runDir)).toEqual([]);
      console.log(`mcp-notes: ${all(runDir).length} files of the run folder checked for the values of \${VAR} in env and cwd`);

      // an unset variable: one clear line naming it, and the server is not started
      delete process.env.SOP_TEST_ENV_TOKEN;
      const missing = await run(tempDir(), toolSop({ notes: server }, ['notes/list_notes']), [cmd('notes__list_notes')], allowed);
      expect(missing.result.status).toBe('failed');
      expect(missing.result.error?.message).toBe(
        'MCP server "notes": mcp_servers.notes.env.NOTES_TOKEN uses ${SOP_TEST_ENV_TOKEN}, and the environment variable SOP_TEST_ENV_TOKEN is not set',
      );
      process.env.SOP_TEST_ENV_TOKEN = vars.SOP_TEST_ENV_TOKEN;

      // a server that dies at start: the message shows the command line and the last lines of its stderr, no value
      const dying = { ...server, args: ['-e', 'console.error("no notebook here: " + process.env.NOTES_TOKEN); process.exit(3)'] };
      const broken = await run(tempDir(), toolSop({ notes: dying }, ['notes/list_notes']), [cmd('notes__list_notes')], allowed);
      expect(broken.result.status).toBe('failed');
      expect(broken.result.error?.message).toMatch(
        /^MCP server "notes" \(".* -e console\.error.*"\) did not start: .*; its stderr ended: no notebook here: \$\{SOP_TEST_ENV_TOKEN\} \(its stderr: .*notes\.stderr\.log\)$/,
      );
      expect(broken.result.error?.message).not.toMatch(/envtok-6c02e8b1f4|home-7d2e41|notes-a19f3c/);
      expect(leaks(broken.runDir)).toEqual([]);
    } finally {
      for (const k of Object.keys(vars)) delete process.env[k];
    }
  });
});
