// A population step on a real model (issue 28), SmolLM2-135M-Instruct Q4_1 through `local:`:
// 50 agents of the social-spread example each decide once, and every action of the step is one
// of the menu with arguments the world's action schema accepts (no `invalid` action), because
// each population call carries its menu (tools, commands) and the local provider generates it
// under the JSON-schema grammar made from them. Short: one step, 48-token replies, one thread.
// It skips, saying why, without the model or node-llama-cpp.
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runSop, type RunEvent } from '../src/index.js';
import { LocalProvider, closeLocalModels } from '../src/core/llm/local.js';
import { commandReplySchema } from '../src/core/llm/local-grammar.js';
import { localSettings } from '../src/core/llm/local-runtime.js';
import type { ChatOptions, ChatRequest, ChatResponse, LlmProvider } from '../src/core/llm/types.js';
import { social } from '../src/features/population/worlds/social.js';
import { checkActionArgs } from '../src/features/population/worlds/world.js';
import { TEST_MODEL, noteSkip } from './helpers/local-model.js';

const missing = noteSkip('a population step on the local model');
const tmp = mkdtempSync(join(tmpdir(), 'sop-local-pop-'));
// a timed-out test's generations stop, and the models are freed, before this file's worker goes
afterAll(closeLocalModels);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type StepEvent = Extract<RunEvent, { type: 'population_step' }>;

/** The social-spread example cut to one step of 50 agents, every one of them active, each deciding for itself. */
function spreadOf50(): string {
  const sop = JSON.parse(readFileSync('examples/social-spread/social-spread.sop.json', 'utf8')) as Record<string, unknown> & {
    states: Record<string, Record<string, unknown>>;
  };
  delete sop.$schema;
  sop.llm = { temperature: 0.7, max_tokens: 48 };
  const feed = sop.states.feed!;
  feed.population = { ...(feed.population as object), sample: { n: 50, seed: 1 } };
  feed.activation = { probability: 1 };
  feed.cognition = { tier: 'per_agent' };
  feed.max_steps = 1;
  feed.transitions = [];
  feed.next_states = { '1': 'end' };
  copyFileSync('examples/social-spread/personas.csv', join(tmp, 'personas.csv'));
  const file = join(tmp, 'spread50.sop.json');
  writeFileSync(file, JSON.stringify(sop, null, 2));
  return file;
}

describe.skipIf(missing !== undefined)('a population step on SmolLM2-135M-Instruct', () => {
  it('50 agents give only schema-valid actions of the menu, each call made under the grammar', async ({ signal }) => {
    const local = await LocalProvider.create({
      model: TEST_MODEL,
      settings: { ...localSettings({}), threads: 1, sequences: 4, maxTokens: 48 },
      seed: 5,
    });
    // what each population call brought to the provider: its menu, and the grammar made from it
    const seen: Array<{ population: boolean; tools: string[]; commands: string[]; grammar: boolean }> = [];
    const spy: LlmProvider = {
      id: local.id,
      free: true,
      chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse> {
        const m = request.meta;
        seen.push({
          population: m.population === true,
          tools: (m.tools ?? []).map((t) => t.name),
          commands: (m.commands ?? []).map((c) => c.name),
          grammar: commandReplySchema(m) !== undefined,
        });
        return local.chat(request, options);
      },
    };
    const handle = runSop(spreadOf50(), { llm: spy, seed: 2, concurrency: 4, signal }); // a timeout stops the step
    const events: RunEvent[] = [];
    for await (const e of handle) events.push(e);
    const result = await handle.result;
    expect(result.status, result.error?.message).toBe('finished');

    const menu = ['post', 'like', 'repost', 'follow', 'idle'];
    const steps = events.filter((e): e is StepEvent => e.type === 'population_step');
    expect(steps).toHaveLength(1);
    const step = steps[0]!;
    expect(step.active).toBe(50);
    expect(step.actions).toHaveLength(50);
    const invalid = step.actions.filter((a) => a.name === 'invalid');
    expect(invalid.map((a) => `${a.agent}: ${a.output}`)).toEqual([]);
    for (const a of step.actions) {
      expect(menu, a.agent).toContain(a.name);
      expect(checkActionArgs(social, { agent: a.agent, name: a.name, args: a.args }), `${a.agent} ${JSON.stringify(a.args)}`).toBe('');
    }
    // 50 population calls, each with the menu as tools and commands, so under the grammar
    const calls = seen.filter((s) => s.population);
    expect(calls).toHaveLength(50);
    for (const c of calls) {
      expect(c.tools).toEqual(menu);
      expect(c.commands).toEqual(menu);
      expect(c.grammar).toBe(true);
    }
    // the replies are the model's (its tokenizer's counts), not the mock's
    const llmCalls = events.filter((e) => e.type === 'llm_call' && e.state === 'feed') as Array<Extract<RunEvent, { type: 'llm_call' }>>;
    expect(llmCalls).toHaveLength(50);
    for (const c of llmCalls) expect(c.model).toBe('SmolLM2-135M-Instruct.Q4_1.gguf');
  }, 1_200_000); // 50 calls on one thread: about 3 min alone, 10 or more at a load of 16
});
