// Acceptance of examples/mcp: `sop run examples/mcp/notes.sop.json --llm replay:... --yes` exits 0,
// its journal records the MCP tool calls, none failed, and their results are in the transcript.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { journal, onlyRun, tempDir } from './helpers/mcp-notes.js';
import { runCli, spawnCliAsync } from './helpers/cli.js';
import { startOpenAiServer } from './helpers/openai-server.js';

describe('examples/mcp', () => {
  it('runs offline from its hand-written cassette, calling the notes server', async () => {
    const out = tempDir();
    const r = await spawnCliAsync(
      ['run', 'examples/mcp/notes.sop.json', '--llm', 'replay:examples/mcp/notes.cassette.json', '--yes', '--out', out, '--quiet'],
      { encoding: 'utf8' },
    );
    expect(r.status, r.stderr).toBe(0);
    const runDir = onlyRun(out);
    const calls = journal(runDir).filter((e) => e.type === 'executor_result' && e.executor === 'mcp');
    expect(calls.map((e) => e.command)).toEqual([
      'notes__search_notes',
      'notes__add_note',
      'notes__add_note',
      'notes__add_note',
      'notes__list_notes',
    ]);
    expect(calls.every((e) => e.ok)).toBe(true);
    const transcript = readFileSync(join(runDir, 'transcript.md'), 'utf8');
    for (const e of calls) expect(transcript).toContain(e.result.split('\n')[0]);
    expect(transcript).toContain('#3 Naps help too [sleep, naps]');
    expect(JSON.parse(readFileSync(join(runDir, 'workspace', 'notes.json'), 'utf8'))).toHaveLength(3);
  });

  it('against an OpenAI-compatible server: tool history goes back as tool_calls and tool messages, with no text list of the tools', async () => {
    const calls = [
      [{ name: 'notes__search_notes', arguments: '{"query": "sleep"}' }],
      [{ name: 'notes__add_note', arguments: '{"title": "Sleep consolidates memory", "text": "Source: Walker.", "tags": ["sleep"]}' }],
      [{ name: 'finish', arguments: '{"result": "one note"}' }],
    ];
    const server = await startOpenAiServer({ toolCalls: (_b, i) => calls[i], reply: () => '<end>0</end>' });
    try {
      const out = tempDir();
      const rec = join(out, 'notes.rec.json');
      const r = await runCli(
        [
          'run',
          'examples/mcp/notes.sop.json',
          '--llm',
          'openai',
          '--base-url',
          server.url,
          '--record',
          rec,
          '--yes',
          '--out',
          out,
          '--quiet',
        ],
        { OPENAI_API_KEY: 'test-key' },
      );
      expect(r.status, r.stderr).toBe(0);
      type Wire = {
        role: string;
        content: string | null;
        tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
        tool_call_id?: string;
      };
      const second = (server.requests[1]!.body as { messages: Wire[]; tools: unknown[] }).messages;
      const assistant = second.find((m) => m.role === 'assistant')!;
      expect(assistant.content).toBeNull();
      expect(assistant.tool_calls).toEqual([
        { id: 'call_0', type: 'function', function: { name: 'notes__search_notes', arguments: '{"query":"sleep"}' } },
      ]);
      const tool = second[second.indexOf(assistant) + 1]!;
      expect(tool).toEqual({ role: 'tool', tool_call_id: 'call_0', content: 'no note matches "sleep"' });
      // the tools go in `tools` only: the system prompt lists none, the last prompt asks for a tool call
      const system = second[0]!.content!;
      expect(system).toContain('Make sure the notebook holds the three key findings');
      expect(system).not.toContain('The commands you can use');
      expect(system).not.toContain('notes__search_notes');
      expect(second.at(-1)!.content).toContain('call exactly one of your tools');
      expect(JSON.stringify(second)).not.toContain('"command_args"');
      // the third request carries both earlier calls, each answered by its result
      const third = (server.requests[2]!.body as { messages: Wire[] }).messages;
      expect(third.filter((m) => m.role === 'assistant').map((m) => m.tool_calls![0]!.function.name)).toEqual([
        'notes__search_notes',
        'notes__add_note',
      ]);
      expect(third.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
        'no note matches "sleep"',
        'added note #1 "Sleep consolidates memory"',
      ]);
      // the cassette records the requests as they were sent
      const cassette = JSON.parse(readFileSync(rec, 'utf8')) as { interactions: Array<{ request: Wire[] }> };
      expect(cassette.interactions[1]!.request).toEqual(second);
    } finally {
      await server.close();
    }
  });
});
