// Anthropic-style prompt-cache breakpoints (src/core/llm/cache-breakpoints.ts): sent only to a server
// whose llm block declares `cache_breakpoints`, at the ends of the prompt's stable parts (the
// system message, the summary, the window), at most 4; the real `openai` client against the local
// test server, through a whole run.
import { afterEach, describe, expect, it } from 'vitest';
import { runSop, type Sop } from '../src/index.js';
import { withBreakpoints } from '../src/core/llm/cache-breakpoints.js';
import { OpenAiProvider } from '../src/core/llm/openai.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

type Part = { type: string; text: string; cache_control?: { type: string } };
type Body = { messages: Array<{ role: string; content: string | Part[] | null }>; prompt_cache_key?: string };

function sop(breakpoints: boolean): Sop {
  return {
    name: 'breakpoints',
    llm: { model: 'claude-sonnet-4-5', ...(breakpoints ? { cache_breakpoints: true } : {}) },
    environment: { max_chat_history: 2, summary: { every: 2 } },
    agents: { Ann: { roles: { talk: 'A' } }, Ben: { roles: { talk: 'B' } } },
    root: 'talk',
    states: { talk: { environment_prompt: 'A long talk.', roles: ['A', 'B'], next_states: { '0': 'talk' } } },
  };
}

async function bodies(breakpoints: boolean): Promise<Body[]> {
  server = await startOpenAiServer({ reply: () => 'Fine.' });
  const llm = new OpenAiProvider({ apiKey: 'test-key', baseURL: server.url, timeoutMs: 5_000 });
  const run = runSop(sop(breakpoints), { llm, maxTurns: 6, stream: false });
  expect((await run.result).status).toBe('max_turns');
  return server.requests.filter((r) => r.path.endsWith('/chat/completions')).map((r) => r.body as Body);
}

const marked = (b: Body) =>
  b.messages.flatMap((m, i) => (Array.isArray(m.content) && m.content.some((p) => p.cache_control?.type === 'ephemeral') ? [i] : []));

describe('cache breakpoints', () => {
  it('marks the message indexes asked for (at most the last 4), else the system message', () => {
    const ms = Array.from({ length: 7 }, (_, i) => ({ role: i === 0 ? 'system' : 'user', content: `m${i}` }));
    expect(marked({ messages: withBreakpoints(ms, {}) })).toEqual([0]);
    const five = withBreakpoints(ms, { cacheBreaks: [0, 1, 2, 3, 5, 9] });
    expect(marked({ messages: five })).toEqual([1, 2, 3, 5]);
    expect(five[5]!.content).toEqual([{ type: 'text', text: 'm5', cache_control: { type: 'ephemeral' } }]);
    expect(five[4]!.content).toBe('m4');
    expect(withBreakpoints([{ role: 'user', content: 'x' }], {})).toEqual([{ role: 'user', content: 'x' }]);
  });

  it('a server declared to take them gets them after the system message, the summary and the window; others get plain text', async () => {
    const withMarks = await bodies(true);
    const agents = withMarks.filter(
      (b) => b.messages.at(-1)!.content !== null && JSON.stringify(b.messages.at(-1)).includes('Now continue'),
    );
    expect(agents.length).toBeGreaterThan(3);
    for (const b of agents) {
      const at = marked(b);
      expect(at[0]).toBe(0);
      expect(at.length).toBeLessThanOrEqual(3);
      expect(at.at(-1)).toBe(b.messages.length - 2); // the end of the window, before the last prompt
      const summary = b.messages.findIndex((m) => JSON.stringify(m.content).includes('Summary of the conversation so far'));
      if (summary > 0) expect(at).toContain(summary);
    }
    // every call carries its prompt_cache_key too
    for (const body of withMarks) expect(body.prompt_cache_key).toMatch(/^sop-/);
    await server!.close();
    server = undefined;
    const plain = await bodies(false);
    for (const body of plain) expect(body.messages.every((m) => typeof m.content === 'string')).toBe(true);
  });
});
