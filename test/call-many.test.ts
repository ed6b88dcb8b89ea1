// A step's calls made at once (src/core/runtime/call-many.ts): outcomes in call order whatever order
// they arrive in, the concurrency bound, failures after every call settled, the straggler policy
// at the step's deadline, and a plugin's dispatch handed every call no journal answered. Then the
// straggler policy through a population state.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { callMany, type CallDispatch, type CallOne, type ManyCall } from '../src/core/runtime/call-many.js';
import { loadSop, MockProvider, runSop, validateSop, type RunEvent } from '../src/index.js';
import type { ChatOptions, ChatRequest, ChatResponse, LlmProvider } from '../src/core/llm/types.js';

const calls = (n: number): ManyCall[] =>
  Array.from({ length: n }, (_, i) => ({
    messages: [{ role: 'user', content: `call ${i}` }],
    settings: {},
    meta: { purpose: 'agent', state: 's', turn: 0 },
    key: `1:a${i}`,
  }));
const step = { state: 's', visit: 1, step: 1 };

/** A promise settled from outside. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((a, b) => ((resolve = a), (reject = b)));
  return { promise, resolve, reject };
}

/** Rejects when the signal aborts. */
const untilAborted = (signal?: AbortSignal) =>
  new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));

describe('callMany, calls sent directly', () => {
  it('returns the replies in call order, with at most `concurrency` calls at once', async () => {
    let inFlight = 0;
    let most = 0;
    const one: CallOne = async (c) => {
      most = Math.max(most, ++inFlight);
      // later calls answer first
      await new Promise((r) => setTimeout(r, 20 - Number(c.key.slice(3))));
      inFlight--;
      return `reply to ${c.key}`;
    };
    const out = await callMany(one, calls(12), { step, concurrency: 4 });
    expect(out).toEqual(calls(12).map((c) => ({ reply: `reply to ${c.key}` })));
    expect(most).toBe(4);
  });

  it('lets every call settle before throwing the first failure in call order', async () => {
    const settled: string[] = [];
    const one: CallOne = async (c) => {
      const n = Number(c.key.slice(3));
      await new Promise((r) => setTimeout(r, n === 5 ? 1 : 10));
      settled.push(c.key);
      if (n === 5 || n === 2) throw new Error(`failed ${c.key}`);
      return 'ok';
    };
    await expect(callMany(one, calls(6), { step, concurrency: 6 })).rejects.toThrow('failed 1:a2');
    expect(settled).toHaveLength(6);
  });

  it('gives the calls unanswered at the deadline up (default), aborting them', async () => {
    const aborted: string[] = [];
    const one: CallOne = async (c, _key, _via, signal) => {
      if (c.key !== '1:a1') return 'fast';
      try {
        return await untilAborted(signal);
      } catch (e) {
        aborted.push(c.key);
        throw e;
      }
    };
    const out = await callMany(one, calls(3), { step, concurrency: 3, straggler: { deadlineMs: 30, then: 'default' } });
    expect(out).toEqual([{ reply: 'fast' }, { late: true }, { reply: 'fast' }]);
    expect(aborted).toEqual(['1:a1']);
  });

  it('asks a straggler once more (redraw): the first reply wins and the other call is given up', async () => {
    const keys: string[] = [];
    const one: CallOne = async (c, key, _via, signal) => {
      keys.push(key);
      if (key === '1:a0') return untilAborted(signal);
      return `reply to ${key}`;
    };
    const out = await callMany(one, calls(2), { step, concurrency: 2, straggler: { deadlineMs: 20, then: 'redraw' } });
    expect(out).toEqual([{ reply: 'reply to 1:a0:redraw' }, { reply: 'reply to 1:a1' }]);
    expect(keys).toEqual(['1:a0', '1:a1', '1:a0:redraw']);
  });

  it('waits for stragglers when told to (wait)', async () => {
    const slow = deferred<string>();
    const one: CallOne = async (c) => (c.key === '1:a0' ? slow.promise : 'fast');
    const pending = callMany(one, calls(2), { step, concurrency: 2, straggler: { deadlineMs: 5, then: 'wait' } });
    setTimeout(() => slow.resolve('slow but kept'), 40);
    expect(await pending).toEqual([{ reply: 'slow but kept' }, { reply: 'fast' }]);
  });
});

describe('callMany through a dispatch', () => {
  it('hands the dispatch every call the journal did not answer, once all are in, and returns replies in call order', async () => {
    const sent: string[][] = [];
    const dispatch: CallDispatch = {
      name: 'test',
      async send(list, ref) {
        expect(ref).toEqual(step);
        sent.push(list.map((c) => c.key));
        for (const c of [...list].reverse()) c.resolve({ content: `batched ${c.key}`, usage: { promptTokens: 1, completionTokens: 1 } });
      },
    };
    // calls 0 and 3 are "journaled": answered without reaching the dispatch, after a while
    const one: CallOne = async (c, _key, via) => {
      if (c.key === '1:a0' || c.key === '1:a3') {
        await new Promise((r) => setTimeout(r, 15));
        return `journaled ${c.key}`;
      }
      const res = await via!({ messages: c.messages, model: 'm', meta: c.meta }, {});
      return res.content;
    };
    const out = await callMany(one, calls(5), { step, concurrency: 1, dispatch });
    expect(sent).toEqual([['1:a1', '1:a2', '1:a4']]);
    expect(out.map((o) => ('reply' in o ? o.reply : 'late'))).toEqual([
      'journaled 1:a0',
      'batched 1:a1',
      'batched 1:a2',
      'journaled 1:a3',
      'batched 1:a4',
    ]);
  });

  it('fails the calls a failing dispatch left unsettled, and sends nothing when the journal answered all', async () => {
    const dispatch: CallDispatch = {
      name: 'test',
      async send(list) {
        list[0]!.resolve({ content: 'one', usage: { promptTokens: 1, completionTokens: 1 } });
        throw new Error('the batch was cancelled');
      },
    };
    const one: CallOne = async (c, _key, via) => (await via!({ messages: c.messages, model: 'm', meta: c.meta }, {})).content;
    await expect(callMany(one, calls(3), { step, concurrency: 8, dispatch })).rejects.toThrow('the batch was cancelled');
    let asked = 0;
    const none: CallDispatch = { name: 'none', send: async () => void asked++ };
    expect(await callMany(async () => 'journaled', calls(3), { step, concurrency: 8, dispatch: none })).toHaveLength(3);
    expect(asked).toBe(0);
  });
});

describe('a population state with a straggler policy', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'sop-straggler-'));
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  /** The social-spread example, 2 steps, every agent per_agent, with this straggler policy. */
  function sopWith(straggler: unknown): string {
    const sop = JSON.parse(readFileSync('examples/social-spread/social-spread.sop.json', 'utf8')) as {
      states: Record<string, Record<string, unknown>>;
      $schema?: string;
    };
    delete sop.$schema;
    const feed = sop.states.feed!;
    Object.assign(feed, { max_steps: 2, cognition: [{ tier: 'per_agent' }], straggler });
    const file = join(tmp, `s${Math.random().toString(36).slice(2)}.sop.json`);
    copyFileSync('examples/social-spread/personas.csv', join(tmp, 'personas.csv'));
    writeFileSync(file, JSON.stringify(sop));
    return file;
  }

  /** The mock, except that the agents named never answer (until their call is given up). */
  class Hanging implements LlmProvider {
    readonly id = 'hanging';
    private readonly mock = new MockProvider();
    constructor(private readonly hang: (agent: string, attempt: number) => boolean) {}
    private readonly attempts = new Map<string, number>();
    async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
      const agent = request.meta.agent ?? '';
      const attempt = (this.attempts.get(agent) ?? 0) + 1;
      this.attempts.set(agent, attempt);
      if (request.meta.population && this.hang(agent, attempt)) return untilAborted(options.signal);
      return this.mock.chat(request, options);
    }
  }

  async function steps(file: string, llm: LlmProvider) {
    const handle = runSop(loadSop(file), { llm });
    const out: Array<Extract<RunEvent, { type: 'population_step' }>> = [];
    for await (const e of handle) if (e.type === 'population_step') out.push(e);
    const result = await handle.result;
    expect(result.status).toBe('finished');
    return out;
  }

  it('gives hanging agents the default action at the deadline, and the run goes on', async () => {
    const file = sopWith({ deadline_s: 0.3, then: 'default', default: { name: 'like', args: { post_id: 'news' } } });
    const hangs = (agent: string) => agent.endsWith('7');
    const list = await steps(file, new Hanging(hangs));
    expect(list).toHaveLength(2);
    const late = list.flatMap((s) => s.actions.filter((a) => hangs(a.agent)));
    expect(late.length).toBeGreaterThan(0);
    for (const a of late) expect(a).toMatchObject({ name: 'like', args: { post_id: 'news' } });
  });

  it('asks hanging agents again (redraw): their second answer is their action', async () => {
    const file = sopWith({ deadline_s: 0.3, then: 'redraw' });
    const list = await steps(file, new Hanging((agent, attempt) => agent.endsWith('7') && attempt === 1));
    const redrawn = list[0]!.actions.filter((a) => a.agent.endsWith('7'));
    expect(redrawn.length).toBeGreaterThan(0);
    for (const a of redrawn) expect(a.name).not.toBe('invalid');
  });

  it('refuses a default action that is not on the menu, naming the pointer', () => {
    const file = sopWith({ deadline_s: 1, then: 'default', default: { name: 'shout' } });
    const v = validateSop(file);
    expect(v.ok).toBe(false);
    expect(v.errors.map((d) => `${d.pointer}: ${d.message}`)).toEqual([
      '/states/feed/straggler/default/name: "shout" is not in the state\'s action menu (post, like, repost, follow, idle)',
    ]);
  });
});
