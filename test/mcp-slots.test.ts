// Agents 1.0 tool slots bound to MCP tools: in the SOP (`bind: "server/tool"`) or from the command
// line (--bind SLOT=server/tool, which wins); the tool's result enters the role's last prompt.
// An unbound slot says plainly that it is unbound.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Run } from '../src/api/engine/run-with-features.js';
import type { ChatRequest, ChatResponse, LlmProvider } from '../src/core/llm/types.js';
import { parseBindings } from '../src/features/mcp/slots.js';
import { cliAllowEntries } from '../src/features/mcp/allow.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import type { Sop } from '../src/format/sop/types.js';
import { notesServer, serverCalls, tempDir } from './helpers/mcp-notes.js';

class Recording implements LlmProvider {
  readonly id = 'recording';
  readonly requests: ChatRequest[] = [];
  async chat(r: ChatRequest): Promise<ChatResponse> {
    this.requests.push(r);
    return { content: `reply of ${r.meta.agent}`, usage: { promptTokens: 1, completionTokens: 1 } };
  }
}

function sop(dir: string, slot: Record<string, unknown>): Sop {
  return {
    name: 'slots',
    root: 'talk',
    mcp_servers: { notes: notesServer(dir) },
    agents: { Ann: { roles: { talk: 'Asker' } }, Ben: { roles: { talk: 'Expert' } } },
    states: {
      talk: {
        roles: ['Asker', 'Expert'],
        begin_role: 'Asker',
        begin_query: 'tides',
        components: { Expert: { tools: [slot] } },
        controller: { type: 'order', max_turns: 2 },
        next_states: { '1': 'done' },
      },
      done: { final: true },
    },
  } as unknown as Sop;
}

async function run(dir: string, slot: Record<string, unknown>, bind?: Record<string, string>) {
  writeFileSync(join(dir, 'notes.json'), JSON.stringify([{ id: 1, title: 'Tides', text: 'The pull of the moon.' }]));
  const llm = new Recording();
  const events: RunEvent[] = [];
  const result = await new Run({
    sop: sop(dir, slot),
    file: join(dir, 's.sop.json'),
    llm,
    stream: false,
    listeners: [(e) => events.push(e)],
    // the notes server is allowed to start (as --allow-mcp notes)
    mcp: { ...(bind ? { bind } : {}), approval: { allow: cliAllowEntries(['notes']) } },
  }).run();
  const ben = llm.requests.find((r) => r.meta.agent === 'Ben')!;
  return { result, last: ben.messages[ben.messages.length - 1]!.content, events };
}

describe('tool slots bound to MCP tools', () => {
  it('binds a slot in the SOP; the read-only tool runs with what the role observed as its query', async () => {
    const dir = tempDir();
    const { result, last } = await run(dir, { name: 'web_search', bind: 'notes/search_notes' });
    expect(result.status).toBe('finished');
    expect(last).toContain('#1 Tides: The pull of the moon.');
    expect(serverCalls(dir).map(({ tool, args }) => ({ tool, args }))).toEqual([{ tool: 'search_notes', args: { query: 'tides' } }]);
  });

  it('binds a slot from the command line (--bind), over the SOP', async () => {
    const dir = tempDir();
    const { last } = await run(dir, { name: 'web_search', bind: 'notes/nothing_here' }, parseBindings(['web_search=notes/search_notes']));
    expect(last).toContain('#1 Tides: The pull of the moon.');
    expect(() => parseBindings(['web_search'])).toThrow(
      'options.bind "web_search" must look like SLOT=server/tool, e.g. web_search=search/web_search',
    );
  });

  it('an unbound slot says plainly that it is unbound', async () => {
    const dir = tempDir();
    const { result, events } = await run(dir, { name: 'flight_search', needs: 'a flights API key' });
    expect(result.status).toBe('finished');
    const warnings = events.filter((e): e is Extract<RunEvent, { type: 'warning' }> => e.type === 'warning').map((e) => e.message);
    expect(warnings).toEqual([
      'tool slot "flight_search" of Ben (Expert) in state "talk" is unbound: it needs a network service and an API key (a flights API key), ' +
        'and no executor is bound to it, so the role answers without it; bind it to an MCP tool with "bind": "server/tool" in the SOP or --bind flight_search=server/tool',
    ]);
    expect(serverCalls(dir)).toEqual([]); // nothing started: no state needed a tool
  });
});
