// The prompt layout for provider prefix caches (docs/memory.md, "Prompt layout"): stable parts,
// the summary, a recent window that only grows between summary refreshes, then the retrieved
// messages and the last prompt. A run in one state is recorded call by call and checked.
import { describe, expect, it } from 'vitest';
import { Run } from '../src/api/engine/run-with-features.js';
import { alignedWindow } from '../src/core/memory/window.js';
import type { ChatMessage, ChatOptions, ChatRequest, ChatResponse, LlmProvider } from '../src/core/llm/types.js';
import { estimateUsage } from '../src/core/llm/types.js';
import type { Sop } from '../src/format/sop/types.js';

const W = 10;
const TOPICS = ['database indexes', 'cache eviction', 'query plans', 'connection pools', 'batch writes', 'read replicas'];

/** Replies that name their turn (`msg N`) and talk about one of a few topics, so retrieval finds something. */
class Recorder implements LlmProvider {
  readonly id = 'recorder';
  readonly calls: ChatRequest[] = [];
  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    this.calls.push(request);
    const turn = request.meta.turn ?? 0;
    const roles = ['Host', 'Engineer', 'Analyst'];
    const content =
      request.meta.purpose === 'summary'
        ? `Summary after turn ${turn}: the team weighed ${TOPICS[turn % TOPICS.length]}.`
        : request.meta.purpose === 'judge'
          ? '<end>0</end>'
          : request.meta.purpose === 'speaker'
            ? `<end>${roles[turn % 3]}</end>`
            : `msg ${turn}: about ${TOPICS[(turn * 7) % TOPICS.length]}, ` + 'with the figures we measured last week '.repeat(3);
    if (request.stream) options.onDelta?.(content);
    return { content, usage: estimateUsage(request.messages, content) };
  }
}

function sop(controller: 'order' | 'rule'): Sop {
  return {
    name: 'layout',
    environment: { type: 'cooperative', max_chat_history: W, top_k: 2, embedder: 'local', summary: { every: W } },
    agents: {
      Ann: { roles: { talk: 'Host' } },
      Ben: { roles: { talk: 'Engineer' } },
      Cat: { roles: { talk: 'Analyst' } },
    },
    root: 'talk',
    states: {
      talk: {
        environment_prompt: 'A team discusses how to make a slow web service faster. '.repeat(4),
        roles: ['Host', 'Engineer', 'Analyst'],
        begin_role: 'Host',
        components: { Host: { task: 'Keep the discussion on track.' }, Engineer: { task: 'Propose changes.' } },
        controller: { type: controller },
        next_states: { '0': 'talk', '1': 'end' },
      },
      end: { final: true },
    },
  };
}

const bytes = (messages: ChatMessage[]) => Buffer.from(messages.map((m) => `<|${m.role}|>\n${m.content}\n`).join(''), 'utf8');
function commonPrefix(a: Buffer, b: Buffer): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}
const turnOf = (m: ChatMessage) => Number(/msg (\d+):/.exec(m.content)?.[1]);

/** An agent prompt taken apart: where the window ends, and the turns it and the retrieved block hold. */
function parts(r: ChatRequest) {
  const ms = r.messages;
  const summary = ms[1]!.content.startsWith('Summary of the conversation so far') ? 1 : 0;
  const relevant = ms[ms.length - 2]!.content.startsWith('Earlier messages relevant') ? 1 : 0;
  const windowEnd = ms.length - 1 - relevant;
  const window = ms.slice(1 + summary, windowEnd).map(turnOf);
  const retrieved = relevant ? [...ms[ms.length - 2]!.content.matchAll(/msg (\d+):/g)].map((m) => Number(m[1])) : [];
  return { summary, relevant, windowEnd, window, retrieved };
}

async function record(controller: 'order' | 'rule', turns: number) {
  const llm = new Recorder();
  const result = await new Run({ sop: sop(controller), file: 'layout', llm, maxTurns: turns, runId: 'layout-run' }).run();
  expect(result.turns).toBe(turns);
  return llm.calls;
}

describe('prompt layout for prefix caches', () => {
  it('orders each agent prompt: system, summary, window, retrieved messages, last prompt', async () => {
    const calls = await record('order', 40);
    const agents = calls.filter((c) => c.meta.purpose === 'agent');
    let withBoth = 0;
    for (const c of agents) {
      const p = parts(c);
      expect(c.messages[0]!.role).toBe('system');
      expect(c.messages[c.messages.length - 1]!.content).toMatch(/^Now continue the conversation on behalf of/);
      expect(p.window.every((t) => Number.isInteger(t))).toBe(true);
      // nothing appears twice: retrieval draws only on messages before the window
      for (const t of p.retrieved) expect(t).toBeLessThan(p.window[0]!);
      if (p.summary && p.relevant) withBoth++;
    }
    expect(withBoth).toBeGreaterThan(10);
  });

  it('moves the window only when the summary is refreshed, and only appends to it in between', async () => {
    const calls = await record('order', 90);
    let refreshes = 0;
    let previous: { window: number[]; refreshes: number } | undefined;
    let moves = 0;
    let appends = 0;
    for (const c of calls) {
      if (c.meta.purpose === 'summary') refreshes++;
      if (c.meta.purpose !== 'agent') continue;
      const { window } = parts(c);
      const count = (c.meta.turn ?? 0) - 1; // messages recorded before this turn (turn N says msg N)
      // consecutive turns ending with the latest message; W to 2W-1 of them (what there is early on)
      expect(window).toEqual([...Array(window.length).keys()].map((k) => count - window.length + 1 + k));
      expect(window.length).toBe(Math.min(count, alignedWindow(W, count, W)));
      expect(window.length).toBeLessThanOrEqual(2 * W - 1);
      if (previous && count > W) {
        if (previous.refreshes === refreshes) {
          expect(window.slice(0, previous.window.length)).toEqual(previous.window); // append-only
          appends++;
        } else {
          expect(window[0]).toBeGreaterThan(previous.window[0]!); // moved, at a refresh
          moves++;
        }
      }
      previous = { window, refreshes };
    }
    expect(moves).toBeGreaterThan(5);
    expect(appends).toBeGreaterThan(20);
  });

  it('shares the previous prompt of the same agent up to the end of its window, byte for byte, between refreshes', async () => {
    const calls = await record('order', 90);
    let refreshes = 0;
    const last = new Map<string, { request: ChatRequest; refreshes: number }>();
    let shared = 0;
    let total = 0;
    let pairs = 0;
    for (const c of calls) {
      if (c.meta.purpose === 'summary') refreshes++;
      if (c.meta.purpose !== 'agent') continue;
      const prev = last.get(c.meta.agent!);
      if (prev && prev.refreshes === refreshes) {
        const before = prev.request;
        const prefix = commonPrefix(bytes(before.messages), bytes(c.messages));
        // everything up to the end of the previous window is a cacheable prefix
        expect(prefix).toBeGreaterThanOrEqual(bytes(before.messages.slice(0, parts(before).windowEnd)).length);
        shared += prefix;
        total += bytes(c.messages).length;
        pairs++;
      }
      last.set(c.meta.agent!, { request: c, refreshes });
    }
    expect(pairs).toBeGreaterThan(15);
    const share = shared / total;
    console.log(`prompt layout: ${pairs} same-agent pairs between refreshes share ${(share * 100).toFixed(1)}% of their bytes`);
    expect(share).toBeGreaterThan(0.65);
  });

  it('gives the judge and the speaker choice the same discipline: their history only grows between refreshes', async () => {
    const calls = await record('rule', 60);
    for (const purpose of ['judge', 'speaker'] as const) {
      let refreshes = 0;
      let previous: { history: string; text: string; refreshes: number } | undefined;
      let appends = 0;
      for (const c of calls) {
        if (c.meta.purpose === 'summary') refreshes++;
        if (c.meta.purpose !== purpose) continue;
        const text = c.messages.map((m) => m.content).join('\n');
        const history = /Conversation in this stage:\n([\s\S]*?)(\n\n|$)/.exec(text)![1]!;
        const turns = [...history.matchAll(/msg (\d+):/g)].map((m) => Number(m[1]));
        expect(turns.length).toBeLessThanOrEqual(2 * W - 1);
        if (previous && previous.refreshes === refreshes && turns.length > 1) {
          expect(history.startsWith(previous.history)).toBe(true);
          // and the prompt up to the end of the previous history is byte-identical
          const upTo = previous.text.indexOf(previous.history) + previous.history.length;
          expect(text.slice(0, upTo)).toBe(previous.text.slice(0, upTo));
          appends++;
        }
        previous = { history, text, refreshes };
      }
      expect(appends, purpose).toBeGreaterThan(10);
    }
  });

  it('across a summary refresh, keeps the previous prompt of the same agent up to the end of its summary: chunks are only appended', async () => {
    const calls = await record('order', 90);
    let refreshes = 0;
    const last = new Map<string, { request: ChatRequest; refreshes: number }>();
    let pairs = 0;
    for (const c of calls) {
      if (c.meta.purpose === 'summary') refreshes++;
      if (c.meta.purpose !== 'agent') continue;
      const prev = last.get(c.meta.agent!);
      if (prev && prev.refreshes < refreshes && parts(prev.request).summary) {
        const before = prev.request.messages;
        // the system message, and the summary message less its closing line break, are a prefix of the new prompt
        const kept = bytes(before.slice(0, 2)).length - 1;
        expect(commonPrefix(bytes(before), bytes(c.messages))).toBeGreaterThanOrEqual(kept);
        pairs++;
      }
      last.set(c.meta.agent!, { request: c, refreshes });
    }
    expect(pairs).toBeGreaterThan(10);
  });

  it('sends one prompt_cache_key per run, state and role (or purpose)', async () => {
    const calls = await record('rule', 30);
    const keys = new Map<string, Set<string>>();
    for (const c of calls) {
      const who = c.meta.purpose === 'agent' ? c.meta.role! : c.meta.purpose;
      expect(c.promptCacheKey).toMatch(/^sop-[0-9a-z]+-[0-9a-z]+$/);
      (keys.get(who) ?? keys.set(who, new Set()).get(who)!).add(c.promptCacheKey!);
    }
    expect([...keys.keys()].sort()).toEqual(['Analyst', 'Engineer', 'Host', 'judge', 'speaker', 'summary']);
    for (const set of keys.values()) expect(set.size).toBe(1);
    expect(new Set([...keys.values()].map((s) => [...s][0])).size).toBe(keys.size);
    // another run of the same SOP: other keys
    const other = new Recorder();
    await new Run({ sop: sop('rule'), file: 'layout', llm: other, maxTurns: 2, runId: 'another-run' }).run();
    expect(keys.get('Host')!.has(other.calls.find((c) => c.meta.role === 'Host')!.promptCacheKey!)).toBe(false);
  });
});
