// The adaptive limit of LLM calls at once (src/core/llm/aimd.ts, src/core/llm/adaptive-limit.ts,
// src/core/llm/rate-headers.ts): slow start, additive increase while latency holds, one halving per
// overload, a shared pause from retry-after and exhausted x-ratelimit quotas; and the openai
// provider's attempts going through it against a real HTTP server.
import { describe, expect, it } from 'vitest';
import { Aimd } from '../src/core/llm/aimd.js';
import { AdaptiveGate, type LimitChange } from '../src/core/llm/adaptive-limit.js';
import { admissionWait, parseResetDuration } from '../src/core/llm/rate-headers.js';
import { OpenAiProvider } from '../src/core/llm/openai.js';
import { RetryBudget } from '../src/core/llm/retry.js';
import { retryWarnings } from '../src/api/choices.js';
import { startOpenAiServer } from './helpers/openai-server.js';
import { until } from './helpers/until.js';
import { scaled } from './helpers/time.js';

const headers = (h: Record<string, string>) => new Headers(h);

/** `n` successes of `latency` ms, sent at `t`. */
function successes(a: Aimd, n: number, t: number, latency: number) {
  const changes = [];
  for (let i = 0; i < n; i++) {
    const c = a.observe({ status: 200, sentAt: t, at: t + latency });
    if (c) changes.push(c);
  }
  return changes;
}

describe('AIMD', () => {
  it('doubles each window of successes from its start, up to the ceiling', () => {
    const a = new Aimd({ ceiling: 100, initial: 8 });
    const limits: number[] = [];
    for (let w = 0; w < 6; w++) limits.push(...successes(a, a.limit, w * 100, 20).map((c) => c.limit));
    expect(limits).toEqual([16, 32, 64, 100]);
  });

  it('halves once on the 429s of one overload, then grows by one per window while latency holds', () => {
    const a = new Aimd({ ceiling: 1000, initial: 64 });
    successes(a, 64, 0, 20); // 128
    expect(a.limit).toBe(128);
    // three 429s of requests sent before the decrease: one halving
    expect(a.observe({ status: 429, sentAt: 100, at: 130 })).toMatchObject({ limit: 64, previous: 128, reason: '429' });
    expect(a.observe({ status: 429, sentAt: 100, at: 131 })).toBeUndefined();
    expect(a.observe({ status: 429, sentAt: 120, at: 140 })).toBeUndefined();
    // a window of successes: +1 (no more doubling)
    expect(successes(a, 64, 200, 20)).toEqual([{ limit: 65, previous: 64, reason: 'latency holds' }]);
    // a 429 of a request sent after that decrease halves again
    expect(a.observe({ status: 429, sentAt: 300, at: 320 })?.limit).toBe(32);
  });

  it('holds the limit when latency grows past twice its baseline', () => {
    const a = new Aimd({ ceiling: 1000, initial: 10 });
    successes(a, 10, 0, 20); // baseline 20 ms, 20
    expect(successes(a, 20, 100, 50)).toEqual([]); // 50 ms > 2 x 20: held, slow start over
    expect(successes(a, 20, 200, 30)).toEqual([{ limit: 21, previous: 20, reason: 'latency holds' }]);
  });

  it('halves on a burst of 5xx or failed connections, not on one, and never below the floor', () => {
    const a = new Aimd({ ceiling: 64, initial: 8, floor: 2 });
    expect(a.observe({ status: 503, sentAt: 0, at: 5 })).toBeUndefined();
    expect(a.observe({ status: 0, sentAt: 0, at: 6 })).toBeUndefined();
    expect(a.observe({ status: 500, sentAt: 0, at: 7 })).toMatchObject({ limit: 4, reason: '5xx burst' });
    for (let t = 10; t < 100; t += 10) a.observe({ status: 429, sentAt: t, at: t + 1 });
    expect(a.limit).toBe(2);
    // a refused request (400) says nothing of load
    expect(a.observe({ status: 400, sentAt: 200, at: 201 })).toBeUndefined();
  });
});

describe('rate-limit headers', () => {
  it('reads Go-style resets and seconds, and refuses anything else', () => {
    expect(parseResetDuration('1s')).toBe(1000);
    expect(parseResetDuration('6m0s')).toBe(360_000);
    expect(parseResetDuration('1h2m3.5s')).toBe(3_723_500);
    expect(parseResetDuration('250ms')).toBe(250);
    expect(parseResetDuration('2')).toBe(2000);
    for (const bad of ['', 'soon', '1d', '-1s', '1s; rm -rf']) expect(parseResetDuration(bad)).toBeUndefined();
  });

  it('waits for retry-after, and for the reset of an exhausted request or token quota', () => {
    expect(admissionWait(headers({ 'retry-after-ms': '150' }))).toBe(150);
    expect(admissionWait(headers({ 'retry-after': '2' }))).toBe(2000);
    expect(admissionWait(headers({ 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '6m0s' }))).toBe(360_000);
    expect(admissionWait(headers({ 'x-ratelimit-remaining-tokens': '0', 'x-ratelimit-reset-tokens': '20ms' }))).toBe(20);
    expect(admissionWait(headers({ 'x-ratelimit-remaining-tokens': '0' }))).toBe(1000); // no reset said: a second
    expect(admissionWait(headers({ 'x-ratelimit-remaining-requests': '12', 'x-ratelimit-reset-requests': '1s' }))).toBe(0);
    expect(admissionWait(headers({ 'x-ratelimit-remaining-requests': 'none' }))).toBe(0);
  });
});

describe('the gate', () => {
  it('lets at most `limit` in at once, first in first out, and an aborted waiter leaves the queue', async () => {
    const gate = new AdaptiveGate({ ceiling: 2, initial: 2, endpoint: 'e', maxPauseMs: 1000 });
    const order: number[] = [];
    const releases: Array<() => void> = [];
    const task = (n: number) => () =>
      new Promise<void>((r) => {
        order.push(n);
        releases.push(r);
      });
    const ctrl = new AbortController();
    const runs = [gate.run(task(1)), gate.run(task(2)), gate.run(task(3), ctrl.signal), gate.run(task(4))];
    await until(() => order.length === 2);
    expect(gate.queued).toBe(2);
    ctrl.abort(new Error('stopped'));
    await expect(runs[2]).rejects.toThrow('stopped');
    releases[0]!();
    await until(() => order.length === 3);
    expect(order).toEqual([1, 2, 4]);
    releases[1]!();
    releases[2]!();
    await Promise.all([runs[0], runs[1], runs[3]]);
    expect(gate.inFlight).toBe(0);
  });

  it('pauses every call for a retry-after, capped at the timeout, and reports the change', async () => {
    const changes: LimitChange[] = [];
    let now = 1000;
    const gate = new AdaptiveGate({
      ceiling: 8,
      initial: 8,
      endpoint: 'e',
      maxPauseMs: 60,
      onChange: (c) => changes.push(c),
      now: () => now,
    });
    gate.observe({ status: 429, sentAt: 990, at: 1000, headers: headers({ 'retry-after': '30' }) }); // 30 s, capped at 60 ms
    expect(changes).toEqual([{ limit: 4, previous: 8, reason: '429', endpoint: 'e', inFlight: 0 }]);
    let ran = false;
    const waiting = gate.run(async () => void (ran = true));
    await new Promise((r) => setImmediate(r));
    expect(ran).toBe(false);
    now = 1061; // the pause is over when its timer fires
    await waiting;
    expect(ran).toBe(true);
  });
});

describe('the openai provider through a gate', () => {
  it('retries each 429 to an answer, and learns a limit that keeps the 429s few', async () => {
    // each reply held long enough that the first 8 calls are in flight together on a loaded machine
    const server = await startOpenAiServer({ latencyMs: scaled(400), maxInFlight: { limit: 5, retryAfterMs: 10 } });
    try {
      const changes: LimitChange[] = [];
      const gate = new AdaptiveGate({ ceiling: 40, initial: 8, endpoint: server.url, maxPauseMs: 1000, onChange: (c) => changes.push(c) });
      const budget = new RetryBudget(0, 0.5);
      const llm = new OpenAiProvider({ baseURL: server.url, apiKey: 'k', gate, budget, retry: { baseDelayMs: 5, maxRetries: 6 } });
      const meta = { purpose: 'agent' as const, state: 's', turn: 1 };
      const replies = await Promise.all(
        Array.from({ length: 40 }, (_, i) => llm.chat({ model: 'm', messages: [{ role: 'user', content: `q${i}` }], meta })),
      );
      expect(replies.map((r) => r.content)).toEqual(Array.from({ length: 40 }, (_, i) => `echo: q${i}`));
      // 8 sent at once to a server that takes 5: 3 refused, the limit halved; without the gate, 35 would be
      expect(changes[0]).toMatchObject({ previous: 8, limit: 4, reason: '429' });
      expect(server.rejected).toBeGreaterThanOrEqual(3);
      expect(server.rejected).toBeLessThan(12);
      expect(budget.calls).toBe(40);
      expect(budget.used).toBe(server.rejected); // every 429 retried once, within a budget of 20
    } finally {
      await server.close();
    }
  });
});

describe('retry warnings', () => {
  it('warn of every retry but 429s, which are warned once every 5 s with the count since', () => {
    const said: string[] = [];
    let t = 0;
    const onRetry = retryWarnings(
      (m) => said.push(m as string),
      () => t,
    );
    const r429 = { attempt: 1, delayMs: 100, reason: 'HTTP 429: slow down' };
    onRetry(r429);
    for (t = 100; t < 1000; t += 100) onRetry(r429);
    onRetry({ attempt: 1, delayMs: 500, reason: 'HTTP 500: oops' });
    t = 5100;
    onRetry(r429);
    expect(said).toEqual([
      'LLM call failed (HTTP 429: slow down); retry 1 in 100 ms',
      'LLM call failed (HTTP 500: oops); retry 1 in 500 ms',
      'LLM call failed (HTTP 429: slow down); retry 1 in 100 ms; 9 more calls were rate limited (429) and retried since the last such warning',
    ]);
  });
});
