// Function calling is the default for the openai provider: granted MCP tools and the state's
// commands go to the model as function tools (the real openai client, against the local test
// server), a tool call runs the MCP tool, and a plain JSON reply is still read as a command.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runSop } from '../src/api/run-sop.js';
import { OpenAiProvider } from '../src/core/llm/openai.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { journal, notesServer, serverCalls, tempDir, toolSop, writeSop } from './helpers/mcp-notes.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('MCP tools as function tools', () => {
  it.each([false, true])('offers granted tools and commands to the openai provider by default (stream: %s)', async (stream) => {
    const calls = [
      [{ name: 'notes__add_note', arguments: '{"title": "FC", "text": "From a function call.", "tags": ["fc"]}' }],
      undefined, // a plain reply: the JSON command format is the fallback
      [{ name: 'finish', arguments: '{"result": "noted"}' }],
    ];
    server = await startOpenAiServer({
      toolCalls: (_b, i) => calls[i],
      reply: () => '{"command": "notes__list_notes", "command_args": {}}',
    });
    const dir = tempDir();
    const { file } = writeSop(dir, toolSop({ notes: notesServer(dir) }, ['notes/add_note', 'notes/list_notes']), []);
    const handle = runSop(loadSopFile(file).sop, {
      file,
      llm: new OpenAiProvider({ baseURL: server.url, apiKey: 'test' }),
      out: join(dir, 'runs'),
      yes: true,
      sandbox: false, // the server's call log is outside the workspace
      stream,
    });
    const result = await handle.result;
    expect(result.status, result.error?.message).toBe('finished');
    expect(result.result).toBe('noted');
    expect(serverCalls(dir).map((c) => c.tool)).toEqual(['add_note', 'list_notes']);

    const body = server.requests[0]!.body as {
      tools: Array<{ type: string; function: { name: string; parameters: any; description: string } }>;
    };
    expect(body.tools.map((t) => t.function.name)).toEqual(['notes__add_note', 'notes__list_notes', 'finish']);
    const add = body.tools[0]!.function;
    expect(add.description).toBe('Add a note to the notebook; returns its id. (MCP tool notes/add_note)');
    // the tool's own JSON schema, arrays included
    expect(add.parameters).toMatchObject({
      type: 'object',
      properties: { title: { type: 'string', minLength: 1 }, text: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['title', 'text'],
    });
    expect(add.parameters.$schema).toBeUndefined();
    // the tool's result reaches the model as an observation in the next prompt
    const second = server.requests[1]!.body as { messages: Array<{ content: string }> };
    expect(second.messages.map((m) => m.content).join('\n')).toContain('added note #1 "FC"');
    const ok = journal(handle.dir!).filter((e) => e.type === 'executor_result' && e.executor === 'mcp');
    expect(ok.map((e) => [e.command, e.ok])).toEqual([
      ['notes__add_note', true],
      ['notes__list_notes', true],
    ]);
  });
});
