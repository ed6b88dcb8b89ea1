// MCP servers nobody here wrote, and the other transport: @modelcontextprotocol/server-filesystem
// listing and reading files of a temp dir through a SOP (read-only tools: no approval needed),
// and the notes server over Streamable HTTP on 127.0.0.1, with a bearer token (and url) from ${VAR}.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runSop } from '../src/api/run-sop.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { allowMcp, cmd, journal, NOTES_SERVER, serverCalls, tempDir, toolSop, writeSop } from './helpers/mcp-notes.js';
import { cliAllowEntries } from '../src/features/mcp/allow.js';

const FS_SERVER = join(process.cwd(), 'node_modules/.bin/mcp-server-filesystem');

async function run(dir: string, sop: object, replies: Parameters<typeof writeSop>[2], o: Record<string, unknown> = {}) {
  const { file, cassette } = writeSop(dir, sop, replies);
  const handle = runSop(loadSopFile(file).sop, { file, llm: `replay:${cassette}`, out: join(dir, 'runs'), ...o });
  const result = await handle.result;
  return { result, events: journal(handle.dir!) };
}

const results = (events: Array<Record<string, any>>) =>
  events
    .filter((e) => e.type === 'executor_result' && e.executor === 'mcp')
    .map((e) => ({ command: e.command, ok: e.ok, result: e.result }));

describe('@modelcontextprotocol/server-filesystem', () => {
  it('lists and reads files of a temp dir through a SOP', async () => {
    const dir = tempDir();
    const docs = join(dir, 'docs');
    mkdirSync(join(docs, 'sub'), { recursive: true });
    writeFileSync(join(docs, 'plan.md'), '# Plan\nShip the MCP support on Monday.\n');
    writeFileSync(join(docs, 'sub', 'notes.txt'), 'remember the milk\n');
    const { result, events } = await run(
      dir,
      toolSop({ files: { command: FS_SERVER, args: [docs] } }, [
        'files/list_directory',
        'files/read_text_file',
        'files/read_multiple_files',
      ]),
      [
        cmd('files__list_directory', { path: docs }),
        cmd('files__read_text_file', { path: join(docs, 'plan.md') }),
        cmd('files__read_multiple_files', { paths: [join(docs, 'plan.md'), join(docs, 'sub', 'notes.txt')] }),
        cmd('files__read_text_file', { path: join(dir, 'outside.txt') }), // outside the allowed folder: the server refuses
        cmd('finish', { result: 'read the plan' }),
      ],
      // allowed to start (--allow-mcp files), in the default sandbox (the folder it is given is bound read-only);
      // no --yes and nobody to ask: these tools are read-only (readOnlyHint), so they need no approval
      { mcpApproval: { allow: cliAllowEntries(['files']) } },
    );
    expect(result.status).toBe('finished');
    const r = results(events);
    expect(r.map((x) => [x.command, x.ok])).toEqual([
      ['files__list_directory', true],
      ['files__read_text_file', true],
      ['files__read_multiple_files', true],
      ['files__read_text_file', false],
    ]);
    expect(r[0]!.result).toBe('[FILE] plan.md\n[DIR] sub');
    expect(r[1]!.result).toBe('# Plan\nShip the MCP support on Monday.\n');
    expect(r[2]!.result).toContain('remember the milk');
    expect(r[3]!.result).toMatch(/^The MCP tool files\/read_text_file reported an error:\n.*(denied|outside)/s);
  });
});

describe('Streamable HTTP', () => {
  let server: ChildProcess | undefined;
  afterEach(() => {
    server?.kill();
    server = undefined;
  });

  /** The notes server over HTTP on 127.0.0.1; resolves with its URL once it says it listens. */
  function startHttp(dir: string, token: string): Promise<string> {
    return new Promise((resolve, reject) => {
      server = spawn(process.execPath, [NOTES_SERVER, '--http', '0'], {
        env: { ...process.env, NOTES_FILE: join(dir, 'notes.json'), NOTES_CALL_LOG: join(dir, 'calls.jsonl'), NOTES_HTTP_TOKEN: token },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let out = '';
      server.stdout!.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /listening on (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(out);
        if (m) resolve(m[1]!);
      });
      server.on('exit', (code) => reject(new Error(`the HTTP server exited (${code})`)));
    });
  }

  it('calls the tools of a server on 127.0.0.1, with a bearer token from ${VAR}', async () => {
    const dir = tempDir();
    const url = await startHttp(dir, 'http-tok-31c8');
    process.env.SOP_TEST_HTTP_TOKEN = 'http-tok-31c8';
    try {
      const sop = toolSop({ notes: { url, headers: { Authorization: 'Bearer ${SOP_TEST_HTTP_TOKEN}' } } }, ['notes/*']);
      const allowed = allowMcp(['notes'], ['notes=SOP_TEST_HTTP_TOKEN', 'notes=SOP_TEST_HTTP_PATH']);
      const { result, events } = await run(
        dir,
        sop,
        [
          cmd('notes__add_note', { title: 'HTTP', text: 'Over Streamable HTTP.' }),
          cmd('notes__search_notes', { query: 'streamable' }),
          cmd('finish', { result: 'ok' }),
        ],
        { yes: true, ...allowed },
      );
      expect(result.status).toBe('finished');
      expect(results(events).map((x) => [x.command, x.ok, x.result])).toEqual([
        ['notes__add_note', true, 'added note #1 "HTTP"'],
        ['notes__search_notes', true, '#1 HTTP: Over Streamable HTTP.'],
      ]);
      expect(serverCalls(dir).map((c) => c.tool)).toEqual(['add_note', 'search_notes']);

      // a wrong token: the server refuses, and the run fails with one clear line
      process.env.SOP_TEST_HTTP_TOKEN = 'wrong';
      const refused = await run(tempDir(), sop, [cmd('notes__list_notes')], allowed);
      expect(refused.result.status).toBe('failed');
      expect(refused.result.error?.message).toMatch(
        /^MCP server "notes" \(http:\/\/127\.0\.0\.1:\d+\/mcp\) could not be reached: .*unauthorized/,
      );

      // a url path from ${VAR} (its host is written out): the message shows it as written
      process.env.SOP_TEST_HTTP_PATH = 'mcp';
      const byVar = toolSop(
        {
          notes: { url: `http://${new URL(url).host}/\${SOP_TEST_HTTP_PATH}`, headers: { Authorization: 'Bearer ${SOP_TEST_HTTP_TOKEN}' } },
        },
        ['notes/*'],
      );
      const refusedByVar = await run(tempDir(), byVar, [cmd('notes__list_notes')], allowed);
      expect(refusedByVar.result.error?.message).toMatch(
        /^MCP server "notes" \(http:\/\/127\.0\.0\.1:\d+\/\$\{SOP_TEST_HTTP_PATH\}\) could not be reached: .*unauthorized/,
      );
    } finally {
      delete process.env.SOP_TEST_HTTP_TOKEN;
      delete process.env.SOP_TEST_HTTP_PATH;
    }
  });
});
