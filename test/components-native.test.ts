// Every component kind works in a native SOP (not only in imported Agents 1.0 configs): extract
// fills the shared memory that customize reads, code writes output_code/ in the workspace,
// knowledge puts the closest entry into the last prompt, an unbound tool slot is reported once.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Run } from '../src/api/engine/run-with-features.js';
import type { ChatRequest, ChatResponse, LlmProvider } from '../src/core/llm/types.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { validateSop } from '../src/index.js';
import type { Sop } from '../src/format/sop/types.js';

const dir = mkdtempSync(join(tmpdir(), 'sop-components-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

class Scripted implements LlmProvider {
  readonly id = 'scripted';
  readonly requests: ChatRequest[] = [];
  async chat(request: ChatRequest): Promise<ChatResponse> {
    this.requests.push(request);
    const m = request.meta;
    const content =
      m?.purpose === 'tool' && m.extractWord === 'extract'
        ? '<topic>tides</topic>'
        : m?.purpose === 'tool' && m.extractWord === 'code'
          ? '<code>\nprint("tides")\n</code>'
          : `reply of ${m?.agent}`;
    return { content, usage: { promptTokens: 1, completionTokens: 1 } };
  }
}

function sop(file: string): Sop {
  return {
    name: 'components',
    root: 'talk',
    agents: { Ann: { style: 'curious', roles: { talk: 'Asker' } }, Ben: { style: 'precise', roles: { talk: 'Expert' } } },
    states: {
      talk: {
        roles: ['Asker', 'Expert'],
        begin_role: 'Asker',
        begin_query: 'What are tides caused by?',
        components: {
          Asker: { task: 'Ask about the sea.' },
          Expert: {
            extract: { words: ['topic'] },
            customize: { template: 'Explain {topic} simply.' },
            code: { file: 'tides.py' },
            knowledge: { path: file, top_k: 1, threshold: 0 },
            tools: [{ name: 'web_search', needs: 'a search API key' }],
          },
        },
        controller: { type: 'order', max_turns: 2 },
        next_states: { '1': 'done' },
      },
      done: { final: true },
    },
  };
}

describe('component kinds in a native SOP', () => {
  const kb = join(dir, 'kb.json');
  writeFileSync(
    kb,
    JSON.stringify({
      0: { q: 'What are tides caused by?', a: 'The pull of the moon.' },
      1: { q: 'How deep is the ocean?', a: 'About 3.7 km on average.' },
    }),
  );
  const workspace = join(dir, 'ws');

  it('validates without the old "agents_v1 only" warning', () => {
    const v = validateSop(sop(kb), { file: join(dir, 'c.sop.json') });
    expect(v.ok).toBe(true);
    expect(v.warnings).toEqual([]);
  });

  it('runs extract, customize, code, knowledge and tools before the role answers', async () => {
    const llm = new Scripted();
    const events: RunEvent[] = [];
    const result = await new Run({
      sop: sop(kb),
      file: join(dir, 'c.sop.json'),
      llm,
      stream: false,
      listeners: [(e) => events.push(e)],
      actions: { workspace },
    }).run();
    expect(result.status).toBe('finished');
    const agent = llm.requests.find((r) => r.meta?.purpose === 'agent' && r.meta.agent === 'Ben')!;
    const system = agent.messages[0]!.content;
    const last = agent.messages[agent.messages.length - 1]!.content;
    expect(system).toContain('Explain tides simply.'); // customize read what extract stored
    expect(last).toContain('The pull of the moon.'); // knowledge: the closest entry
    expect(last).not.toContain('3.7 km');
    expect(llm.requests.filter((r) => r.meta?.purpose === 'tool').map((r) => r.meta?.extractWord)).toEqual(['extract', 'code']);
    expect(readFileSync(join(workspace, 'output_code', 'tides.py'), 'utf8')).toBe('print("tides")\n');
    expect(events.some((e) => e.type === 'file_written' && e.path === 'workspace/output_code/tides.py')).toBe(true);
    const toolWarnings = events.filter((e) => e.type === 'warning' && /tool slot "web_search"/.test(e.message));
    expect(toolWarnings).toHaveLength(1);
  });

  it('a run without a workspace says so once instead of writing the code file', async () => {
    const events: RunEvent[] = [];
    const result = await new Run({
      sop: sop(kb),
      file: join(dir, 'c.sop.json'),
      llm: new Scripted(),
      stream: false,
      listeners: [(e) => events.push(e)],
    }).run();
    expect(result.status).toBe('finished');
    expect(events.filter((e) => e.type === 'warning' && /no workspace folder/.test(e.message))).toHaveLength(1);
    expect(existsSync(join(dir, 'output_code'))).toBe(false);
  });
});
