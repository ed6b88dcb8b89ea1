import { describe, expect, it } from 'vitest';
import { LimitedProvider, limitConcurrency } from '../src/core/llm/limit.js';
import type { ChatRequest, ChatResponse, LlmProvider } from '../src/core/llm/types.js';

/** A provider whose calls stay open until the test settles them, in any order. */
class GatedProvider implements LlmProvider {
  readonly id = 'gated';
  active = 0;
  maxActive = 0;
  started: string[] = [];
  private readonly open = new Map<string, { resolve: (r: ChatResponse) => void; reject: (e: Error) => void }>();

  chat(request: ChatRequest): Promise<ChatResponse> {
    const name = request.messages[0]!.content;
    this.started.push(name);
    this.active++;
    this.maxActive = Math.max(this.maxActive, this.active);
    return new Promise<ChatResponse>((resolve, reject) => this.open.set(name, { resolve, reject })).finally(() => {
      this.active--;
    });
  }

  finish(name: string): void {
    this.open.get(name)!.resolve({ content: `reply to ${name}`, usage: { promptTokens: 1, completionTokens: 1 } });
    this.open.delete(name);
  }

  fail(name: string): void {
    this.open.get(name)!.reject(new Error(`failure of ${name}`));
    this.open.delete(name);
  }
}

const request = (name: string): ChatRequest => ({
  messages: [{ role: 'user', content: name }],
  model: 'm',
  meta: { purpose: 'agent', state: 's', turn: 1 },
});
/** Let pending promise callbacks run. */
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('limitConcurrency', () => {
  it('lets at most N calls reach the provider at once and starts the rest first in, first out', async () => {
    const inner = new GatedProvider();
    const llm = limitConcurrency(inner, 2);
    const calls = ['a', 'b', 'c', 'd', 'e'].map((n) => llm.chat(request(n)));
    await settle();
    expect(inner.started).toEqual(['a', 'b']);
    inner.finish('b');
    await settle();
    expect(inner.started).toEqual(['a', 'b', 'c']);
    inner.finish('a');
    inner.finish('c');
    await settle();
    expect(inner.started).toEqual(['a', 'b', 'c', 'd', 'e']);
    inner.finish('e');
    inner.finish('d');
    const replies = await Promise.all(calls);
    expect(replies.map((r) => r.content)).toEqual(['a', 'b', 'c', 'd', 'e'].map((n) => `reply to ${n}`));
    expect(inner.maxActive).toBe(2);
  });

  it('gives the slot back when a call fails', async () => {
    const inner = new GatedProvider();
    const llm = new LimitedProvider(inner, 1);
    const first = llm.chat(request('a'));
    const second = llm.chat(request('b'));
    await settle();
    inner.fail('a');
    await expect(first).rejects.toThrow('failure of a');
    await settle();
    expect(inner.started).toEqual(['a', 'b']);
    inner.finish('b');
    await expect(second).resolves.toMatchObject({ content: 'reply to b' });
    expect(llm.limit.activeCount).toBe(0);
  });

  it('drops a waiting call when its signal aborts, without calling the provider', async () => {
    const inner = new GatedProvider();
    const llm = limitConcurrency(inner, 1);
    const abort = new AbortController();
    const first = llm.chat(request('a'));
    const aborted = llm.chat(request('b'), { signal: abort.signal });
    const third = llm.chat(request('c'));
    await settle();
    abort.abort(new Error('stopped by the user'));
    await expect(aborted).rejects.toThrow('stopped by the user');
    inner.finish('a');
    await settle();
    inner.finish('c');
    await Promise.all([first, third]);
    expect(inner.started).toEqual(['a', 'c']);
  });

  it('rejects at once when the signal is already aborted, without taking a slot', async () => {
    const inner = new GatedProvider();
    const llm = new LimitedProvider(inner, 3);
    const abort = new AbortController();
    abort.abort();
    await expect(llm.chat(request('a'), { signal: abort.signal })).rejects.toThrow(/aborted/);
    expect(llm.limit.activeCount + llm.limit.pendingCount).toBe(0);
    expect(inner.started).toEqual([]);
  });

  it('shares one limit between the providers given it', async () => {
    const inner = new GatedProvider();
    const first = new LimitedProvider(inner, 1);
    const second = new LimitedProvider(inner, first.limit);
    const a = first.chat(request('a'));
    const b = second.chat(request('b'));
    await settle();
    expect(inner.started).toEqual(['a']);
    expect(second.limit.pendingCount).toBe(1);
    inner.finish('a');
    await settle();
    expect(inner.started).toEqual(['a', 'b']);
    inner.finish('b');
    await Promise.all([a, b]);
    expect(inner.maxActive).toBe(1);
  });

  it('refuses a limit that is not a whole number of at least 1, and passes through without one', () => {
    const inner = new GatedProvider();
    expect(() => limitConcurrency(inner, 0)).toThrow(/at least 1 \(got 0\)/);
    expect(() => limitConcurrency(inner, 2.5)).toThrow(/whole number/);
    expect(limitConcurrency(inner, undefined)).toBe(inner);
  });
});
