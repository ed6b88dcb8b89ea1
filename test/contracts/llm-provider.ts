// The contract of an LlmProvider (src/core/llm/types.ts): a reply with its usage, the same text
// streamed as deltas, and a call abandoned through its signal gives no reply.
import { describe, expect, it } from 'vitest';
import type { ChatRequest, LlmProvider } from '../../src/core/llm/types.js';

export interface ProviderUnderTest {
  provider: LlmProvider;
  /**
   * A call the provider holds until it is aborted, or at least far longer than the test's timeout
   * (absent: its calls answer at once).
   */
  held?: () => ChatRequest;
}

/** One agent call of a debate-like run (the cassette fixture's first interactions match it). */
export function agentRequest(turn = 1, stream = false): ChatRequest {
  return {
    model: 'gpt-4o-mini',
    stream,
    messages: [
      { role: 'system', content: 'You are Ann, who argues for the motion.' },
      { role: 'user', content: `Make your case, turn ${turn}.` },
    ],
    meta: { purpose: 'agent', state: 'talk', agent: 'Ann', role: 'pro', turn },
  };
}

export function llmProviderContract(name: string, make: () => Promise<ProviderUnderTest> | ProviderUnderTest): void {
  describe(`LlmProvider: ${name}`, () => {
    it('answers with text and usage in whole tokens', async () => {
      const { provider } = await make();
      expect(provider.id).toMatch(/\S/);
      const res = await provider.chat(agentRequest(1));
      expect(res.content).toMatch(/\S/);
      for (const n of [res.usage.promptTokens, res.usage.completionTokens]) {
        expect(Number.isInteger(n)).toBe(true);
        expect(n).toBeGreaterThan(0);
      }
    });

    it('streams the reply as deltas that add up to the content', async () => {
      const { provider } = await make();
      const deltas: string[] = [];
      const res = await provider.chat(agentRequest(1, true), { onDelta: (d) => deltas.push(d) });
      expect(deltas.length).toBeGreaterThan(0);
      expect(deltas.join('')).toBe(res.content);
    });

    it('gives no reply to a call whose signal is already aborted, and the next call is answered as if it never happened', async () => {
      const { provider } = await make();
      const reference = await (await make()).provider.chat(agentRequest(1));
      const ctl = new AbortController();
      ctl.abort(new Error('stopped by the test'));
      await expect(provider.chat(agentRequest(1), { signal: ctl.signal })).rejects.toThrow();
      expect((await provider.chat(agentRequest(1))).content).toBe(reference.content);
    });

    it('ends a call in flight when its signal aborts', async () => {
      const { provider, held } = await make();
      if (!held) return; // its calls answer at once: nothing is in flight to abort
      const ctl = new AbortController();
      const call = provider.chat(held(), { signal: ctl.signal });
      setTimeout(() => ctl.abort(new Error('stopped by the test')), 50);
      // a held call ends only by its abort: ignored, it outlasts the test's timeout (or answers)
      await expect(call).rejects.toThrow();
    });
  });
}
