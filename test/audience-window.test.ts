// The window rule per viewer under audiences (docs/memory.md, "Prompt layout and the window rule"
// and "Audiences"): an agent's recent window only grows between the refreshes of the summary it
// is shown, and the summary and the window together always hold every message it may see. A SOP
// with a private channel of three agents, where Cy and Di see only the public messages (about two
// in five), runs with the mock replies below; every agent and judge prompt is taken from the
// run's `prompt` events and checked against the transcript and the `summary` events. A SOP that
// declares audiences but keeps every message public gets the prompts it gets without them.
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { runSop, type ChatRequest, type LlmProvider, type RunEvent, type Sop } from '../src/index.js';
import { type ChatMessage } from '../src/extend.js';
import { viewerAlignedWindow } from '../src/core/memory/window.js';

const TOKEN = /tok\d+/g;
const counts = { prompts: 0, prefixChecks: 0, refreshes: 0, moved: 0, judgePrompts: 0, covered: 0 };

afterAll(() => {
  console.log(
    `audience window: ${counts.prompts} agent prompts, ${counts.judgePrompts} judge prompts, ${counts.prefixChecks} byte-prefix checks between refreshes, ${counts.refreshes} refreshes seen, ${counts.moved} window moves at a refresh, ${counts.covered} visible messages found in summary or window, 0 lost`,
  );
});

/** Agents say a fresh token; the summariser echoes every token it is shown; the judge stays. */
function provider(): LlmProvider {
  let next = 0;
  return {
    id: 'tokens',
    async chat(request: ChatRequest) {
      const text = request.messages.map((m) => (typeof m.content === 'string' ? m.content : '')).join('\n');
      const purpose = request.meta.purpose;
      const content =
        purpose === 'summary'
          ? `summary of ${[...new Set(text.match(TOKEN) ?? [])].sort().join(' ')}`
          : purpose === 'agent'
            ? `tok${next++}`
            : '<end>0</end>';
      return { content, usage: { promptTokens: 1, completionTokens: 1 } };
    },
  };
}

function privateChannel(window: number, every: number): Sop {
  return {
    name: 'private-channel',
    environment: { type: 'cooperative', max_chat_history: window, top_k: 0, summary: { every } },
    groups: { pair: ['Ann', 'Bo', 'Eve'] },
    agents: {
      Ann: { roles: { talk: 'A' } },
      Bo: { roles: { talk: 'B' } },
      Eve: { roles: { talk: 'E' } },
      Cy: { roles: { talk: 'C' } },
      Di: { roles: { talk: 'D' } },
    },
    root: 'talk',
    states: {
      talk: {
        environment_prompt: 'Talk.',
        roles: ['A', 'B', 'E', 'C', 'D'],
        audience: { A: { to: 'pair' }, B: { to: 'pair' }, E: { to: 'pair' } },
        controller: { type: 'random', max_turns: 1000, sees: 'Cy' },
        next_states: { '1': 'end' },
      },
      end: { final: true },
    },
  } as unknown as Sop;
}

interface Seen {
  id: number;
  token: string;
  audience?: string[];
}
type Logged =
  | { kind: 'message'; m: Seen }
  | { kind: 'summary'; audience?: string[] }
  | { kind: 'prompt'; purpose: string; agent?: string; count: number; messages: ChatMessage[] };

async function record(window: number, every: number, seed: number): Promise<Logged[]> {
  const log: Logged[] = [];
  let count = 0;
  const listener = (e: RunEvent) => {
    if (e.type === 'message') {
      count++;
      log.push({ kind: 'message', m: { id: e.message.id, token: e.message.content, audience: e.message.audience } });
    } else if (e.type === 'summary') log.push({ kind: 'summary', audience: e.audience });
    else if (e.type === 'prompt') log.push({ kind: 'prompt', purpose: e.purpose, agent: e.agent, count, messages: e.messages });
  };
  const run = runSop(privateChannel(window, every), {
    llm: provider(),
    maxTurns: 70,
    seed,
    stream: false,
    prompts: true,
    listeners: [listener],
  });
  const result = await run.result;
  expect(result.status).not.toBe('failed');
  return log;
}

const text = (m: ChatMessage) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
const tokens = (s: string) => s.match(TOKEN) ?? [];

/** A prompt cut into its parts: the summary's tokens, the window's tokens (oldest first) and its stable prefix (system + summary + window). */
interface Parsed {
  summary: string[];
  window: string[];
  prefix: ChatMessage[];
}

/** Agent prompts: system, the summary's message, one message per window message, the last prompt (no retrieval here). */
function parseAgent(messages: ChatMessage[]): Parsed {
  expect(messages[0]!.role).toBe('system');
  const body = messages.slice(1, -1);
  const hasSummary = body.length > 0 && text(body[0]!).includes('Summary of the conversation so far');
  const win = hasSummary ? body.slice(1) : body;
  // one assertion over the prompt (an expect() per message made this file CPU-bound)
  expect(win.map(text).filter((t) => tokens(t).length !== 1)).toEqual([]);
  expect(tokens(text(messages.at(-1)!))).toEqual([]);
  return { summary: hasSummary ? tokens(text(body[0]!)) : [], window: win.map((m) => tokens(text(m))[0]!), prefix: messages.slice(0, -1) };
}

/** Judge prompts: system, then one user message: the summary line, the history lines, the latest message, the instruction. */
function parseJudge(messages: ChatMessage[]): Parsed {
  const user = text(messages.at(-1)!);
  const start = user.indexOf('Conversation in this stage:');
  expect(start).toBeGreaterThan(0);
  const latest = user.indexOf('\n\nThe latest message', start);
  const end = latest < 0 ? user.length : latest;
  const head = user.slice(0, start);
  const history = user.slice(start, end);
  return {
    summary: tokens(head),
    window: tokens(history),
    prefix: [...messages.slice(0, -1), { role: 'user', content: user.slice(0, end) }],
  };
}

const bytes = (ms: ChatMessage[]) => ms.map((m) => `${m.role}\u0000${text(m)}`).join('\u0001');

/**
 * Check one viewer's prompts in order: the window is the newest messages it may see (never any
 * other), between W (or all it may see) and W + every - 1 of them; summary and window together
 * hold every message it may see; between two refreshes of its summary a prompt starts, byte for
 * byte, with the previous one's system, summary and window; and at a refresh the window is cut
 * back to W.
 */
function checkViewer(log: Logged[], viewer: string, purpose: 'agent' | 'judge', W: number, every: number): void {
  const visible: Seen[] = [];
  let previous: Parsed | undefined;
  let refreshed = false;
  for (const e of log) {
    if (e.kind === 'message') {
      if (e.m.audience === undefined || e.m.audience.includes(viewer)) visible.push(e.m);
      continue;
    }
    if (e.kind === 'summary') {
      if (e.audience === undefined || e.audience.includes(viewer)) refreshed = true;
      continue;
    }
    if (e.purpose !== purpose || (purpose === 'agent' && e.agent !== viewer)) continue;
    const p = purpose === 'agent' ? parseAgent(e.messages) : parseJudge(e.messages);
    if (purpose === 'agent') counts.prompts++;
    else counts.judgePrompts++;
    const seenTokens = visible.map((m) => m.token);
    // the window: the last messages the viewer may see, as many as the rule says
    expect(p.window).toEqual(seenTokens.slice(seenTokens.length - p.window.length));
    // the summary is kept as chunks: the window moves only when the viewer's summary is refreshed
    expect(p.window.length).toBe(Math.min(visible.length, viewerAlignedWindow(W, visible, e.count, every, true)));
    expect(p.window.length).toBeLessThanOrEqual(W + every - 1);
    expect(p.window.length).toBeGreaterThanOrEqual(Math.min(W, visible.length));
    // nothing lost, nothing leaked: summary ∪ window = every message the viewer may see
    const shown = new Set([...p.summary, ...p.window]);
    const seenSet = new Set(seenTokens);
    expect(
      seenTokens.filter((t) => !shown.has(t)),
      `${viewer} lost these`,
    ).toEqual([]);
    counts.covered += seenTokens.length;
    expect(
      [...shown].filter((t) => !seenSet.has(t)),
      `${viewer} was shown these`,
    ).toEqual([]);
    if (previous) {
      if (refreshed) {
        counts.refreshes++;
        if (p.window[0] !== previous.window[0]) counts.moved++;
      } else {
        // the summary is the same; the window's first message stays, and the prompt only grows
        expect(p.summary).toEqual(previous.summary);
        if (previous.window.length > 0) expect(p.window[0]).toBe(previous.window[0]);
        counts.prefixChecks++;
        expect(bytes(p.prefix).startsWith(bytes(previous.prefix))).toBe(true);
        expect(p.prefix.slice(0, previous.prefix.length - 1)).toEqual(previous.prefix.slice(0, -1));
      }
    }
    previous = p;
    refreshed = false;
  }
}

describe('the window rule per viewer under audiences', () => {
  const agents = ['Ann', 'Bo', 'Eve', 'Cy', 'Di'];
  for (const [W, every, seed] of [
    [3, 3, 7],
    [6, 6, 11],
    [5, 2, 3],
    [3, 5, 5],
  ] as const) {
    it(`W = ${W}, every = ${every}: windows grow between refreshes of the viewer's summary and lose nothing`, async () => {
      const log = await record(W, every, seed);
      const messages = log.filter((e) => e.kind === 'message');
      const cySees = messages.filter((e) => e.m.audience === undefined || e.m.audience.includes('Cy')).length;
      expect(messages.length).toBe(70);
      expect(cySees).toBeGreaterThan(10);
      expect(cySees).toBeLessThan(messages.length / 2); // Cy sees few of the messages
      for (const a of agents) checkViewer(log, a, 'agent', W, every);
      checkViewer(log, 'Cy', 'judge', W, every); // controller.sees: Cy
    });
  }

  it('the same holds for random windows, refresh intervals up to 2W and speaker orders', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 2 ** 30 }),
        async (W, e, seed) => {
          const every = Math.min(e, 2 * W);
          const log = await record(W, every, seed);
          for (const a of agents) checkViewer(log, a, 'agent', W, every);
          checkViewer(log, 'Cy', 'judge', W, every);
        },
      ),
      { numRuns: 25, seed: 4 },
    );
  }, 120_000);

  it('a SOP that declares audiences but keeps every message public gets the prompts it gets without them', async () => {
    const prompts = async (sop: Sop) => {
      const out: string[] = [];
      const listener = (e: RunEvent) => {
        if (e.type === 'prompt') out.push(`${e.purpose} ${e.agent ?? ''}\n${bytes(e.messages)}`);
      };
      const run = runSop(sop, { llm: provider(), maxTurns: 40, seed: 9, stream: false, prompts: true, listeners: [listener] });
      expect((await run.result).status).not.toBe('failed');
      return out;
    };
    const plain = privateChannel(3, 4) as unknown as {
      groups?: unknown;
      states: Record<string, { audience?: unknown; controller?: { sees?: string } }>;
    };
    delete plain.groups;
    delete plain.states.talk!.audience;
    delete plain.states.talk!.controller!.sees;
    const declared = structuredClone(plain);
    declared.states.talk!.controller!.sees = 'all'; // audiences active, no message private
    const [a, b] = [await prompts(plain as unknown as Sop), await prompts(declared as unknown as Sop)];
    expect(a.filter((p) => p.startsWith('judge')).length).toBeGreaterThan(30);
    expect(a.filter((p) => p.startsWith('summary')).length).toBeGreaterThan(5);
    expect(b).toEqual(a);
  });

  it('the rule counts only what the viewer may see since the last refresh point', () => {
    const seen = [{ id: 0 }, { id: 4 }, { id: 7 }, { id: 9 }, { id: 10 }];
    expect(viewerAlignedWindow(3, seen, 11, 6)).toBe(3 + 3 - 3); // 7, 9, 10 since 6: a full W more moves it
    expect(viewerAlignedWindow(3, seen, 11, 9)).toBe(3 + 2); // 9, 10 since 9
    expect(viewerAlignedWindow(3, seen, 12, 12)).toBe(3); // just refreshed
    expect(viewerAlignedWindow(3, seen.slice(0, 3), 11, 9)).toBe(3); // nothing since 9: as right after the refresh
    expect(viewerAlignedWindow(3, [], 0, 3)).toBe(3);
    // with the summary kept as chunks the window moves only at a refresh
    expect(viewerAlignedWindow(3, seen, 11, 6, true)).toBe(3 + 3);
  });
});
