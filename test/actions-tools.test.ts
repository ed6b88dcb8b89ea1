// OpenAI tool calls (llm.tool_calls): a state's commands are offered as function tools to a
// real openai client talking to the local test server, and the tool calls it answers with are
// run as commands, streamed or not.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OpenAiProvider } from '../src/core/llm/openai.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import { tempDir } from './helpers/executor-context.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function sop(toolCalls: boolean) {
  return validateSopDocument(
    {
      name: 'tools',
      memory: { notes: '' },
      environment: { summary: { enabled: false } },
      llm: { tool_calls: toolCalls },
      agents: { Ann: { roles: { work: 'Worker' } } },
      root: 'work',
      states: {
        work: {
          roles: ['Worker'],
          commands: {
            note: {
              executor: 'memory',
              description: 'Add a note.',
              settings: { op: 'append', file: 'notes' },
              args: { content: 'The note.' },
            },
            finish: { executor: 'finish' },
          },
          next_states: { 1: 'end' },
        },
        end: { final: true },
      },
    },
    'tools.sop.json',
  ).sop;
}

async function runWith(stream: boolean, calls: Array<Array<{ name: string; arguments: string }>>) {
  server = await startOpenAiServer({ toolCalls: (_b, i) => calls[i] });
  const dir = tempDir('sop-tools-');
  const result = await new Run({
    sop: sop(true),
    file: 'tools.sop.json',
    llm: new OpenAiProvider({ baseURL: server.url, apiKey: 'test' }),
    stream,
    actions: { runDir: dir },
  }).run();
  return { result, dir, bodies: server.requests.map((r) => r.body as Record<string, any>) };
}

describe('llm.tool_calls', () => {
  it.each([false, true])('offers the commands as tools and runs the tool calls (stream: %s)', async (stream) => {
    const { result, dir, bodies } = await runWith(stream, [
      [{ name: 'note', arguments: '{"content": "from a tool call"}' }],
      [{ name: 'finish', arguments: '{"result": "done"}' }],
    ]);
    expect(result.status).toBe('finished');
    expect(result.result).toBe('done');
    expect(readFileSync(join(dir, 'memory', 'notes.md'), 'utf8')).toBe('from a tool call\n');
    expect(bodies[0]!.tool_choice).toBe('auto');
    expect(bodies[0]!.tools[0]).toEqual({
      type: 'function',
      function: {
        name: 'note',
        description: 'Add a note.',
        parameters: {
          type: 'object',
          properties: { content: { type: 'string', description: 'The note.' } },
          required: ['content'],
          additionalProperties: false,
        },
      },
    });
    expect(result.messages[0]!.content).toBe('{"command":"note","command_args":{"content":"from a tool call"}}');
  });

  it('sends bad tool arguments back for a retry', async () => {
    const { result, bodies } = await runWith(false, [
      [{ name: 'note', arguments: '{"content": ' }],
      [{ name: 'finish', arguments: '{"result": "fixed"}' }],
    ]);
    expect(result.status).toBe('finished');
    const retry = bodies[1]!.messages as Array<{ role: string; content: string }>;
    expect(retry[retry.length - 1]!.content).toMatch(/^Your reply was not a valid command: the JSON is malformed/);
  });

  it('offers no tools unless the SOP asks for them', async () => {
    server = await startOpenAiServer({ reply: () => '{"command": "finish", "command_args": {"result": "plain"}}' });
    const result = await new Run({
      sop: sop(false),
      file: 'tools.sop.json',
      llm: new OpenAiProvider({ baseURL: server.url, apiKey: 'test' }),
      actions: { runDir: tempDir() },
    }).run();
    expect(result.result).toBe('plain');
    expect((server.requests[0]!.body as Record<string, unknown>).tools).toBeUndefined();
  });
});
