// Memory inside a run: summary cadence and its place in the next prompt, competitive isolation
// and cooperative sharing in real agent prompts, retrieval for the judge, the token budget,
// command-line overrides, and a 2,000-turn mock run whose prompts stay flat.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runCommand } from '../src/apps/cli/run-command.js';
import { ListEnvironment } from '../src/core/environment/environment.js';
import { MemoryEnvironment } from '../src/core/environment/memory-environment.js';
import { applyMemoryOverrides } from '../src/core/environment/memory-settings.js';
import { MockProvider } from '../src/core/llm/mock.js';
import type { ChatOptions, ChatRequest, ChatResponse, LlmProvider } from '../src/core/llm/types.js';
import { estimateUsage } from '../src/core/llm/types.js';
import { Run } from '../src/api/engine/run-with-features.js';
import type { RunSnapshot } from '../src/core/runtime/position.js';
import { restoreSummaryChunks, summaryChunks } from '../src/core/runtime/summaries.js';
import type { Sop } from '../src/format/sop/types.js';

/** A scripted LLM: records every request and answers with `reply`. */
class Scripted implements LlmProvider {
  readonly id = 'scripted';
  readonly calls: ChatRequest[] = [];
  constructor(private readonly reply: (r: ChatRequest) => string) {}
  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    this.calls.push(request);
    const content = this.reply(request);
    if (request.stream) options.onDelta?.(content);
    return { content, usage: estimateUsage(request.messages, content) };
  }
  of(purpose: string) {
    return this.calls.filter((c) => c.meta.purpose === purpose);
  }
}

const text = (r: ChatRequest) => r.messages.map((m) => m.content).join('\n');

function chatSop(environment: Sop['environment'], turnsPerState = 100): Sop {
  return {
    name: 'memory-test',
    environment,
    agents: {
      Ann: { roles: { prep: 'Captain', debate: 'Pro' } },
      Ben: { roles: { prep: 'Researcher', debate: 'Con' } },
    },
    root: 'prep',
    states: {
      prep: {
        roles: ['Captain', 'Researcher'],
        begin_role: 'Captain',
        begin_query: 'Our secret plan: indexing the database tables before the demo.',
        controller: { type: 'order', max_turns: 3 },
        next_states: { '1': 'debate' },
      },
      debate: {
        roles: ['Pro', 'Con'],
        begin_role: 'Pro',
        begin_query: 'Opening: which database indexes do we need?',
        controller: { type: 'order', max_turns: turnsPerState },
        next_states: { '1': 'end' },
      },
      end: { final: true },
    },
  };
}

describe('summaries', () => {
  it('with max_chat_history 5, are requested after messages 5, 10 and 15, and the latest is in the next agent prompt', async () => {
    const sop: Sop = {
      name: 'cadence',
      environment: { max_chat_history: 5 },
      agents: { Ann: { roles: { chat: 'A' } }, Ben: { roles: { chat: 'B' } } },
      root: 'chat',
      states: { chat: { roles: ['A', 'B'], next_states: { '0': 'chat' } } },
    };
    let summaries = 0;
    const llm = new Scripted((r) =>
      r.meta.purpose === 'summary' ? `SUMMARY-${++summaries} after turn ${r.meta.turn}` : `line ${r.meta.turn}`,
    );
    const events: string[] = [];
    const result = await new Run({
      sop,
      file: 'cadence',
      llm,
      maxTurns: 17,
      listeners: [
        (e) => {
          if (e.type === 'summary') events.push(`${e.after_messages}`);
        },
      ],
    }).run();
    expect(result.turns).toBe(17);
    expect(llm.of('summary').map((c) => c.meta.turn)).toEqual([5, 10, 15]);
    expect(events).toEqual(['5', '10', '15']);
    // The call order is fixed: the summary comes right after the message it follows.
    const order = llm.calls.map((c) => `${c.meta.purpose}@${c.meta.turn}`);
    expect(order.slice(order.indexOf('summary@5') - 1, order.indexOf('summary@5') + 2)).toEqual(['agent@5', 'summary@5', 'agent@6']);
    // The next agent prompt carries the summary's chunks so far, oldest first: a refresh appends one.
    const agentAt = (t: number) => text(llm.of('agent').find((c) => c.meta.turn === t)!);
    expect(agentAt(5)).not.toContain('SUMMARY-');
    expect(agentAt(6)).toContain('SUMMARY-1 after turn 5');
    expect(agentAt(11)).toContain('SUMMARY-1 after turn 5\n\nSUMMARY-2 after turn 10');
    expect(agentAt(16)).toContain('SUMMARY-1 after turn 5\n\nSUMMARY-2 after turn 10\n\nSUMMARY-3 after turn 15');
    // Each summary request holds the summary so far and the five new messages, and asks for the next chunk.
    const second = text(llm.of('summary')[1]!);
    expect(second).toContain('Summary so far: SUMMARY-1 after turn 5');
    expect(second).toContain('as the next part of the summary');
    for (const t of [6, 7, 8, 9, 10]) expect(second).toContain(`line ${t}`);
    expect(second).not.toContain('line 5\n');
  });

  it('merges the oldest chunks into one only when there are more than max_chunks, and a resume keeps them', async () => {
    const sop: Sop = {
      name: 'chunks',
      environment: { max_chat_history: 2, summary: { max_chunks: 4 } },
      agents: { Ann: { roles: { chat: 'A' } }, Ben: { roles: { chat: 'B' } } },
      root: 'chat',
      states: { chat: { roles: ['A', 'B'], next_states: { '0': 'chat' } } },
    };
    let n = 0;
    const llm = new Scripted((r) => {
      if (r.meta.purpose !== 'summary') return `line ${r.meta.turn}`;
      return text(r).includes('Parts of a summary to merge') ? `MERGED-${++n}` : `C${r.meta.turn}`;
    });
    const summaries: string[] = [];
    let snapshot: RunSnapshot | undefined;
    await new Run({
      sop,
      file: 'chunks',
      llm,
      maxTurns: 15,
      listeners: [
        (e) => {
          if (e.type === 'summary') summaries.push(e.summary);
          if (e.type === 'checkpoint') snapshot = e.snapshot;
        },
      ],
    }).run();
    // refreshes after messages 2, 4, ..., 14; the fifth chunk makes more than 4: the oldest 3 are merged
    expect(summaries.slice(0, 4)).toEqual(['C2', 'C2\n\nC4', 'C2\n\nC4\n\nC6', 'C2\n\nC4\n\nC6\n\nC8']);
    expect(summaries[4]).toBe('MERGED-1\n\nC8\n\nC10');
    const merge = llm.of('summary').find((c) => text(c).includes('Parts of a summary to merge'))!;
    expect(text(merge)).toContain('C2\n\nC4\n\nC6\n\nWrite one summary');
    // two refreshes later there are 5 again: the merged chunk is merged with the next two
    expect(summaries.slice(5)).toEqual(['MERGED-1\n\nC8\n\nC10\n\nC12', 'MERGED-2\n\nC12\n\nC14']);
    // an agent's prompt after a refresh starts with its prompt before it, up to the end of the summary
    const agents = llm.of('agent');
    const before = text(agents.find((c) => c.meta.turn === 11)!);
    const after = text(agents.find((c) => c.meta.turn === 13)!);
    expect(after.startsWith(before.slice(0, before.indexOf('C10') + 3))).toBe(true);
    // a checkpoint holds the chunks' lengths, and a resume restores the same chunks (so the same merges follow)
    expect(snapshot!.environment.summary_chunks).toEqual([8, 3, 3]);
    const env = new ListEnvironment('cooperative');
    env.summary = snapshot!.environment.summary;
    restoreSummaryChunks(env, env.summary, snapshot!.environment.summary_chunks);
    expect(summaryChunks(env)).toEqual(['MERGED-2', 'C12', 'C14']);
  });

  it('follows a per-state summary.every and can be switched off', async () => {
    const base = chatSop({ max_chat_history: 50 }, 6);
    const sop = { ...base, states: { ...base.states, debate: { ...base.states.debate, summary: { every: 2 } } } } as Sop;
    const llm = new Scripted((r) => (r.meta.purpose === 'summary' ? 'S' : 'x'));
    await new Run({ sop, file: 't', llm }).run();
    // prep: 3 messages, no summary (every 50); debate: messages 4..9, summaries after 4, 6 and 8.
    expect(llm.of('summary').map((c) => c.meta.turn)).toEqual([4, 6, 8]);
    const off = new Scripted(() => 'x');
    await new Run({ sop: { ...sop, environment: { max_chat_history: 2, summary: { enabled: false } } }, file: 't', llm: off }).run();
    expect(off.of('summary')).toHaveLength(0);
  });
});

describe('visibility in real prompts', () => {
  const secret = 'Our secret plan';

  it("competitive: the other state's messages reach neither the window, the retrieval, the summary nor the judge", async () => {
    const llm = new Scripted((r) =>
      r.meta.purpose === 'summary'
        ? `summary mentioning ${
            r.messages
              .map((m) => m.content)
              .join(' ')
              .includes(secret)
              ? 'THE SECRET'
              : 'nothing'
          }`
        : r.meta.purpose === 'judge'
          ? '0'
          : `database indexes point ${r.meta.turn}`,
    );
    const run = new Run({ sop: chatSop({ type: 'competitive', max_chat_history: 2, top_k: 3, summary: { every: 4 } }, 8), file: 't', llm });
    const result = await run.run();
    expect(result.status).toBe('finished');
    const debate = llm.calls.filter((c) => c.meta.state === 'debate');
    expect(debate.length).toBeGreaterThan(5);
    for (const c of debate) {
      expect(text(c)).not.toContain(secret);
      expect(text(c)).not.toMatch(/point [23]\b/); // the prep state's other messages
      expect(text(c)).not.toContain('THE SECRET');
    }
    // Retrieval did run in the debate (earlier debate messages show up as relevant).
    expect(debate.some((c) => text(c).includes('Earlier messages relevant to the current discussion'))).toBe(true);
  });

  it("cooperative: the previous state's message is retrieved for the later state", async () => {
    const llm = new Scripted((r) => (r.meta.purpose === 'judge' ? '0' : `point ${r.meta.turn}`));
    await new Run({ sop: chatSop({ type: 'cooperative', max_chat_history: 2, top_k: 1 }, 4), file: 't', llm }).run();
    const debateAgents = llm.of('agent').filter((c) => c.meta.state === 'debate');
    // The debate opened with "which database indexes do we need?": the prep message about indexing is retrieved.
    const first = text(debateAgents[0]!);
    expect(first).toContain('Earlier messages relevant to the current discussion:\nAnn (Captain): Our secret plan');
  });

  it('gives the judge the summary, the recent state window and relevant earlier messages', async () => {
    const sop = chatSop({ type: 'cooperative', max_chat_history: 2, top_k: 1, summary: { every: 3 } }, 4);
    const llm = new Scripted((r) =>
      r.meta.purpose === 'summary' ? 'JUDGE-SEES-SUMMARY' : r.meta.purpose === 'judge' ? '0' : `point ${r.meta.turn}`,
    );
    await new Run({ sop, file: 't', llm }).run();
    const judge = llm.of('judge').filter((c) => c.meta.state === 'debate');
    const first = text(judge[0]!);
    expect(first).toContain('JUDGE-SEES-SUMMARY');
    expect(first).toContain('Earlier messages related to it:\nAnn (Captain): Our secret plan');
    // The judge sees at most max_chat_history messages of the state.
    const last = text(judge[judge.length - 1]!);
    expect(last).not.toContain('Opening: which database indexes');
  });
});

describe('token budget in agent prompts', () => {
  it('trims retrieved history first and never drops the system prompt or the last prompt', async () => {
    const long = (n: number) => `point ${n}: ` + 'database indexing detail '.repeat(30);
    const sop = chatSop({ type: 'cooperative', max_chat_history: 4, top_k: 3, max_prompt_tokens: 1000, summary: { enabled: false } }, 12);
    const llm = new Scripted((r) => (r.meta.purpose === 'judge' ? '0' : long(r.meta.turn)));
    const unlimited = new Scripted((r) => (r.meta.purpose === 'judge' ? '0' : long(r.meta.turn)));
    await new Run({ sop, file: 't', llm }).run();
    await new Run({
      sop: { ...sop, environment: { ...sop.environment, max_prompt_tokens: undefined } },
      file: 't',
      llm: unlimited,
    }).run();
    const budgeted = llm.of('agent');
    const free = unlimited.of('agent');
    expect(Math.max(...free.map((c) => estimateUsage(c.messages, '').promptTokens))).toBeGreaterThan(1000);
    // The retrieved messages sit between the window and the last prompt (docs/memory.md, "Prompt layout").
    const isRelevant = (m: { content: string }) => m.content.startsWith('Earlier messages relevant');
    for (const [i, c] of budgeted.entries()) {
      expect(estimateUsage(c.messages, '').promptTokens).toBeLessThanOrEqual(1000);
      const full = free[i]!;
      expect(c.messages[0]).toEqual(full.messages[0]); // system prompt kept
      expect(c.messages[c.messages.length - 1]).toEqual(full.messages[full.messages.length - 1]); // last prompt kept
      const kept = c.messages.filter((m) => !isRelevant(m));
      const whole = full.messages.filter((m) => !isRelevant(m));
      expect(kept[kept.length - 2]).toEqual(whole[whole.length - 2]); // newest window message kept
    }
    // Late in the run the relevant block (the context message) went first, the window stayed whole
    // (in the latest prompt whose window fits: the window grows between summary cadence points).
    let i = free.length - 1;
    while (
      i > 0 &&
      estimateUsage(
        free[i]!.messages.filter((m) => !isRelevant(m)),
        '',
      ).promptTokens > 1000
    )
      i--;
    expect(i).toBeGreaterThan(free.length / 2);
    const late = budgeted[i]!;
    const lateFree = free[i]!;
    const n = lateFree.messages.length;
    expect(lateFree.messages[n - 2]!.content).toMatch(/^Earlier messages relevant/);
    expect(late.messages).toEqual([...lateFree.messages.slice(0, n - 2), lateFree.messages[n - 1]]);
  });

  it('warns once when even the fixed parts exceed the budget', async () => {
    const sop = chatSop({ type: 'cooperative', max_chat_history: 3, max_prompt_tokens: 256 }, 3);
    const big = { ...sop, states: { ...sop.states, debate: { ...sop.states.debate, environment_prompt: 'Rules. '.repeat(400) } } } as Sop;
    const warnings: string[] = [];
    const llm = new Scripted((r) => (r.meta.purpose === 'judge' ? '0' : 'ok'));
    await new Run({
      sop: big,
      file: 't',
      llm,
      listeners: [
        (e) => {
          if (e.type === 'warning') warnings.push(e.message);
        },
      ],
    }).run();
    expect(warnings.filter((w) => w.includes('max_prompt_tokens'))).toHaveLength(1);
    expect(warnings[0]).toMatch(/needs \d+ tokens even without history, over environment.max_prompt_tokens 256/);
  });
});

describe('command line', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
    vi.restoreAllMocks();
  });

  it('--embedder, --top-k and --max-chat-history override the SOP', () => {
    const sop = chatSop({ max_chat_history: 9, top_k: 0 });
    const withState = { ...sop, states: { ...sop.states, prep: { ...sop.states.prep, max_chat_history: 7 } } } as Sop;
    const out = applyMemoryOverrides(withState, { embedder: 'openai:text-embedding-3-small', topK: 4, maxChatHistory: 3 });
    expect(out.environment).toMatchObject({ embedder: 'openai:text-embedding-3-small', top_k: 4, max_chat_history: 3 });
    expect(out.states.prep!.max_chat_history).toBeUndefined();
    expect(withState.states.prep!.max_chat_history).toBe(7); // the original is untouched
    expect(applyMemoryOverrides(sop, {})).toBe(sop);
    expect(() => applyMemoryOverrides(sop, { topK: -1 })).toThrow('options.topK must be a whole number >= 0, got -1');
    expect(() => applyMemoryOverrides(sop, { maxChatHistory: 0 })).toThrow('options.maxChatHistory must be a whole number >= 1');
    expect(() => applyMemoryOverrides(sop, { embedder: 'word2vec' })).toThrow(/unknown embedder "word2vec"/);
  });

  it('sop run --llm mock --top-k --embedder local writes prompt sizes by turn to usage.json and the closing line', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sop-memory-cli-'));
    dirs.push(out);
    const stderr: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => {
      stderr.push(String(s));
      return true;
    });
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true); // the messages
    const code = await runCommand({
      file: 'bench/fixtures/memory-chat.sop.json',
      llm: 'mock',
      maxTurns: 60,
      out,
      inputs: [],
      json: false,
      quiet: false,
      embedder: 'local',
      topK: 2,
      maxChatHistory: 4,
    });
    vi.restoreAllMocks();
    expect(code).toBe(0);
    const [dir] = readdirSync(out);
    const usage = JSON.parse(readFileSync(join(out, dir!, 'usage.json'), 'utf8'));
    expect(Object.keys(usage.agent_prompt_tokens_at_turn)).toEqual(['10', '20', '50']);
    const closing = stderr.join('');
    expect(closing).toMatch(
      /Prompt size of the speaking agent in tokens, sampled at turn 10: \d+, 20: \d+, 50: \d+ \(usage\.json: agent_prompt_tokens_at_turn\)\./,
    );
    expect(closing).toMatch(/Embeddings: local-v1, 60 messages/);
  });

  it('fails before the run with a clear message for an unusable embedder', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sop-memory-cli-'));
    dirs.push(out);
    await expect(
      runCommand({
        file: 'bench/fixtures/memory-chat.sop.json',
        llm: 'mock',
        maxTurns: 5,
        out,
        inputs: [],
        json: false,
        quiet: true,
        embedder: 'transformers:./no/such/model',
      }),
    ).rejects.toThrow(/model folder .*no\/such\/model does not exist/);
    expect(readdirSync(out)).toEqual([]);
  });
});

describe('a 2,000-turn mock run', () => {
  it('keeps the agent prompt flat once the window fills', async () => {
    const sop = JSON.parse(readFileSync('bench/fixtures/memory-chat.sop.json', 'utf8')) as Sop;
    // Agent prompt sizes by turn: the window grows between summary refreshes (every 8 messages)
    // and shrinks back at each, so sizes are compared as the mean over one refresh cycle.
    const mock = new MockProvider();
    const sizes = new Map<number, number>();
    const llm: LlmProvider = {
      id: mock.id,
      async chat(request, options) {
        const res = await mock.chat(request, options);
        if (request.meta.purpose === 'agent') sizes.set(request.meta.turn, res.usage.promptTokens);
        return res;
      },
    };
    const run = new Run({ sop, file: 'memory-chat', llm, maxTurns: 2000 });
    const result = await run.run();
    expect(result.turns).toBe(2000);
    const at = result.usage.agent_prompt_tokens_at_turn!;
    expect(Object.keys(at)).toEqual(['10', '20', '50', '100', '200', '500', '1000', '2000']);
    expect(at['2000']).toBe(sizes.get(2000));
    const cycle = (end: number) => {
      // two cycles (a turn that opens a state with its begin query makes no agent call)
      const xs = [...Array(16).keys()].map((k) => sizes.get(end - k)).filter((x) => x !== undefined);
      expect(xs.length).toBeGreaterThan(8);
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    const [t50, t500, t2000] = [cycle(50), cycle(500), cycle(2000)];
    expect(Math.abs(t2000 - t500) / t500).toBeLessThan(0.1);
    expect(Math.abs(t2000 - t50) / t50).toBeLessThan(0.1);
    expect(run.env).toBeInstanceOf(MemoryEnvironment);
    expect((run.env as MemoryEnvironment).embedderId).toBe('local-v1');
    expect(result.usage.by_purpose.summary!.calls).toBe(250 + 61); // every 8 messages, and a merge of chunks every 4 refreshes from the 9th
  }, 60_000);
});
