// Progress while a model in this process thinks (issue 37, src/core/runtime/llm-progress.ts): a
// provider that generates here reports each call's tokens (ChatOptions.onProgress); the run tells
// `llm_progress` events per agent's call or per population step, which the terminal shows (a
// status line, else a line each), `--json` prints, the journal holds and `sop view` shows. The
// LLM is replaced by a provider that reports progress as a local model does (the real model:
// test/local-stop.test.ts); everything else is the engine's own.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { terminalDisplay } from '../src/apps/cli/display.js';
import { TranscriptBuilder } from '../src/apps/view/transcript.js';
import { LlmProgress, progressText } from '../src/core/runtime/llm-progress.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import type { CallMeta, ChatOptions, ChatRequest, ChatResponse, LlmProvider } from '../src/core/llm/types.js';
import { runSop } from '../src/index.js';
import { until } from './helpers/until.js';

type ProgressEvent = Extract<RunEvent, { type: 'llm_progress' }>;
const tmp = mkdtempSync(join(tmpdir(), 'sop-progress-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const agentCall = (over: Partial<CallMeta> = {}): CallMeta => ({ purpose: 'agent', state: 'talk', agent: 'Ada', turn: 1, ...over });

describe('the progress meter', () => {
  it("tells one call's prompt, tokens so far and rate while it runs, and nothing once it has ended", async () => {
    const told: ProgressEvent[] = [];
    const meter = new LlmProgress((e) => told.push(e as ProgressEvent), 40);
    const call = meter.begin(agentCall());
    call.onProgress({ promptTokens: 120, tokens: 0 });
    expect(await until(() => told.length >= 1)).toBe(true);
    expect(told[0]).toMatchObject({ type: 'llm_progress', state: 'talk', turn: 1, purpose: 'agent', agent: 'Ada', calls: 1, done: 0 });
    expect(told[0]).toMatchObject({ generating: 1, prompt_tokens: 120, tokens: 0, tokens_per_s: 0 });
    expect(progressText(told[0]!)).toMatch(/^Ada's agent call: reading 120 prompt tokens \(\d+ s\)$/);
    call.onProgress({ promptTokens: 120, tokens: 7 });
    call.onProgress({ promptTokens: 120, tokens: 30 });
    expect(await until(() => told.some((e) => e.tokens === 30))).toBe(true);
    const last = told.at(-1)!;
    expect(last.prompt_tokens).toBe(120); // counted once per call, not per report
    expect(last.tokens_per_s).toBeGreaterThan(0);
    expect(progressText(last)).toMatch(/^Ada's agent call: 30 tokens so far, [\d.]+ tokens\/s \(\d+ s\)$/);
    call.end();
    expect(await until(() => meter.following === 0)).toBe(true);
    const after = told.length;
    // a new call of another turn is a new group; the old one told nothing more
    const next = meter.begin(agentCall({ turn: 2 }));
    next.onProgress({ promptTokens: 50, tokens: 1 });
    expect(await until(() => told.length > after)).toBe(true);
    expect(told.slice(after).every((e) => e.turn === 2)).toBe(true);
    next.end();
    meter.stop();
  });

  it("adds up a population step's calls: begun, answered, generating, and the tokens of all of them", async () => {
    const told: ProgressEvent[] = [];
    const meter = new LlmProgress((e) => told.push(e as ProgressEvent), 40);
    const pop = (agent: string) => meter.begin(agentCall({ agent, population: true, state: 'feed', turn: 3 }));
    const [a, b, c] = [pop('a1'), pop('a2'), pop('a3')];
    a.onProgress({ promptTokens: 300, tokens: 10 });
    b.onProgress({ promptTokens: 290, tokens: 4 });
    a.end(); // answered with its 10 tokens
    expect(await until(() => told.length >= 1)).toBe(true);
    expect(told[0]).toMatchObject({ population: true, state: 'feed', turn: 3, calls: 3, done: 1, generating: 1 });
    expect(told[0]).toMatchObject({ prompt_tokens: 590, tokens: 14 });
    expect(told[0]!.agent).toBeUndefined();
    expect(progressText(told[0]!)).toMatch(/^step at turn 3: 1 of 3 calls answered, 1 generating; 14 tokens so far, [\d.]+ tokens\/s/);
    c.onProgress({ promptTokens: 310, tokens: 6 });
    expect(await until(() => told.at(-1)!.tokens === 20)).toBe(true);
    b.end();
    c.end();
    expect(await until(() => meter.following === 0)).toBe(true);
    meter.stop();
  });

  it("a server's calls, which report nothing, tell nothing", async () => {
    const told: RunEvent[] = [];
    const meter = new LlmProgress((e) => told.push(e), 10);
    const call = meter.begin(agentCall());
    // the meter looks at it for a few ticks: nothing reported, nothing told
    let ticks = 0;
    const probe = setInterval(() => ticks++, 15);
    expect(await until(() => ticks >= 4)).toBe(true);
    clearInterval(probe);
    call.end();
    expect(await until(() => meter.following === 0)).toBe(true);
    expect(told).toEqual([]);
    meter.stop();
  });
});

/** A provider standing in for a local model: it reports its progress and answers once the run has told it (event-driven, no sleep). */
function slowLocal(): { provider: LlmProvider; told: () => void } {
  let release: () => void = () => {};
  const told = new Promise<void>((r) => (release = r));
  return {
    told: () => release(),
    provider: {
      id: 'local',
      free: true,
      async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
        options.onProgress?.({ promptTokens: 42, tokens: 0 });
        options.onProgress?.({ promptTokens: 42, tokens: 5 });
        await told;
        return { content: 'Cities should keep some cars.', usage: { promptTokens: 42, completionTokens: 5 }, model: 'fake.gguf' };
      },
    },
  };
}

describe('a run on a model that reports progress', () => {
  const sop = {
    name: 'progress',
    agents: { Ada: { roles: { talk: 'Speaker' } } },
    root: 'talk',
    states: {
      talk: { roles: ['Speaker'], components: { Speaker: { task: 'Say one thing.' } }, next_states: { '0': 'end' } },
      end: { final: true },
    },
  };

  it('tells llm_progress while the call runs (5 s in), journals it, and sop view and the terminal show it', async () => {
    const { provider, told } = slowLocal();
    const events: RunEvent[] = [];
    const out = join(tmp, 'runs');
    const handle = runSop(sop, { llm: provider, out, listeners: [(e) => (events.push(e), e.type === 'llm_progress' && told())] });
    const result = await handle.result;
    expect(result.status).toBe('finished');
    const progress = events.filter((e): e is ProgressEvent => e.type === 'llm_progress');
    expect(progress).toHaveLength(1); // the call answered once told: one event
    expect(progress[0]).toMatchObject({ state: 'talk', turn: 1, purpose: 'agent', agent: 'Ada', prompt_tokens: 42, tokens: 5 });
    expect(progress[0]!.elapsed_ms).toBeGreaterThanOrEqual(4000); // the first after about 5 s: quick calls tell nothing
    // told before the call's own llm_call, and written to the journal (sop view reads it from there)
    expect(events.findIndex((e) => e.type === 'llm_progress')).toBeLessThan(events.findIndex((e) => e.type === 'llm_call'));
    const [run] = readdirSync(out);
    const journal = readFileSync(join(out, run!, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string });
    expect(journal.filter((e) => e.type === 'llm_progress')).toHaveLength(1);

    // sop view: a progress piece while the call runs, cleared by its message
    const view = new TranscriptBuilder();
    const pieces = events.flatMap((e) => view.add(e).map((p) => ({ at: e.type, p })));
    const shown = pieces.find((x) => x.p.kind === 'progress');
    expect(shown?.p).toEqual({ kind: 'progress', text: progressText(progress[0]!) });
    expect(view.progress).toBe(''); // the message came after it
    const mid = new TranscriptBuilder();
    for (const e of events.slice(0, events.indexOf(progress[0]!) + 1)) mid.add(e);
    expect(mid.progress).toMatch(/^Ada's agent call: 5 tokens so far/);

    // the terminal: a line on a stderr that is not a terminal, the status line on one
    const chunks = { plain: [] as string[], tty: [] as string[] };
    const stream = (isTTY: boolean, into: string[]) =>
      ({ isTTY, columns: 200, write: (s: string) => (into.push(s), true) }) as unknown as NodeJS.WriteStream;
    const plain = terminalDisplay({ out: stream(false, []), err: stream(false, chunks.plain), quiet: false, redact: (s) => s, env: {} });
    const tty = terminalDisplay({
      out: stream(true, []),
      err: stream(true, chunks.tty),
      quiet: false,
      redact: (s) => s,
      env: { NO_COLOR: '1' },
    });
    for (const e of events) {
      plain(e);
      tty(e);
    }
    expect(chunks.plain.join('')).toContain(`(${progressText(progress[0]!)})\n`);
    expect(chunks.tty.some((c) => c.includes(`· ${progressText(progress[0]!)}`))).toBe(true);
    // --quiet shows none of it
    const quiet: string[] = [];
    const q = terminalDisplay({ out: stream(false, []), err: stream(false, quiet), quiet: true, redact: (s) => s, env: {} });
    q(progress[0]!);
    expect(quiet.join('')).toBe('');
  }, 60_000);
});
