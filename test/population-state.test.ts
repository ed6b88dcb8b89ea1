// Population states (docs/population.md): many agents act in each step, drawn from data; their
// actions are applied in a declared order, never completion order; results do not depend on the
// concurrency; memory stays bounded; metrics move the run on; validation names the pointer.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, copyFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSop, MockProvider, RecordingProvider, runSop, validateSop, type RunEvent } from '../src/index.js';
import { defineWorld, registerWorld } from '../src/extend.js';
import type { ChatRequest, LlmProvider } from '../src/core/llm/types.js';

const EXAMPLE = 'examples/social-spread/social-spread.sop.json';
const tmp = mkdtempSync(join(tmpdir(), 'sop-population-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type StepEvent = Extract<RunEvent, { type: 'population_step' }>;

async function events(sop: ReturnType<typeof loadSop>, o: Parameters<typeof runSop>[1]): Promise<RunEvent[]> {
  const handle = runSop(sop, o);
  const out: RunEvent[] = [];
  for await (const e of handle) out.push(e);
  const result = await handle.result;
  if (result.status !== 'finished') throw new Error(`run ${result.status}: ${result.error?.message ?? ''}`);
  return out;
}

/** Events without what differs between two runs of the same thing (times, durations, run ids). */
const comparable = (list: RunEvent[]): string[] =>
  list
    .filter((e) => e.type !== 'delta')
    .map((e) => JSON.stringify(e, (k, v) => (['time', 'timestamp', 'ms', 'run_id'].includes(k) ? undefined : (v as unknown))));

/** A copy of the example with some fields of its population state replaced, in the temp folder (next to its personas). */
function variant(name: string, change: (feed: Record<string, unknown>, sop: Record<string, unknown>) => void): string {
  const sop = JSON.parse(readFileSync(EXAMPLE, 'utf8')) as Record<string, unknown> & { states: Record<string, Record<string, unknown>> };
  delete sop.$schema;
  change(sop.states.feed!, sop);
  const file = join(tmp, `${name}.sop.json`);
  copyFileSync('examples/social-spread/personas.csv', join(tmp, 'personas.csv'));
  writeFileSync(file, JSON.stringify(sop, null, 2));
  return file;
}

describe('a population state', () => {
  it('runs the social-spread example offline: one population_step per step, then the debrief reads its metrics', async () => {
    const list = await events(loadSop(EXAMPLE), { llm: 'mock', prompts: true });
    const steps = list.filter((e): e is StepEvent => e.type === 'population_step');
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(steps.map((s) => s.clock)).toEqual(['08:00', '09:00', '10:00', '11:00', '12:00', '13:00']);
    const started = list.find((e) => e.type === 'population_started');
    expect(started).toMatchObject({ agents: 1000, world: 'social' });
    for (const s of steps) {
      expect(s.active).toBeGreaterThan(50); // about a tenth of 1,000 at those hours
      expect(s.active).toBeLessThan(200);
      for (const a of s.actions) expect(['post', 'like', 'repost', 'follow', 'idle', 'invalid']).toContain(a.name);
      expect(s.metrics).toHaveProperty('repost_share');
      expect(s.metrics).toHaveProperty('cascade.news.size');
    }
    expect(steps.at(-1)!.metrics.reposts).toBeGreaterThan(0);
    // an analyst's prompt names the cascade's figures
    const prompt = list.find((e) => e.type === 'prompt' && e.state === 'debrief') as Extract<RunEvent, { type: 'prompt' }>;
    const last = steps.at(-1)!.metrics;
    expect(prompt.messages[0]!.content).toContain(`${last.reposts} reposts, a cascade of ${last['cascade.news.size']}`);
  });

  it('lays decisions out for prompt caches: rules and tools, the step snapshot, the persona, the feed, the ask; keys sharded by step', async () => {
    const requests: ChatRequest[] = [];
    const mock = new MockProvider();
    const llm: LlmProvider = { id: mock.id, chat: (r, o) => (requests.push(r), mock.chat(r, o)) };
    const list = await events(loadSop(EXAMPLE), { llm });
    const decisions = requests.filter((r) => r.meta.population);
    // each step's event carries the usage of its calls (the step's cached share, when a provider reports it)
    const steps = list.filter((e): e is StepEvent => e.type === 'population_step');
    for (const st of steps) {
      const mine = requests.filter((r) => r.meta.population && r.meta.turnInState === st.step);
      expect(st.usage?.calls).toBe(mine.length);
      expect(st.usage?.prompt_tokens).toBeGreaterThan(mine.length * 100);
    }
    expect(decisions.length).toBeGreaterThan(300);
    // one system message for every agent of every step
    expect(new Set(decisions.map((r) => r.messages[0]!.content)).size).toBe(1);
    expect(decisions[0]!.messages[0]!.content).not.toMatch(/You are \w+, \d+/);
    const byStep = new Map<number, ChatRequest[]>();
    for (const r of decisions) byStep.set(r.meta.turnInState!, [...(byStep.get(r.meta.turnInState!) ?? []), r]);
    for (const [step, list] of byStep) {
      // a user message with the step's clock and snapshot, the same for all (a cache breakpoint goes
      // after it), then one with the agent's persona, then its feed, then the ask
      const head = list[0]!.messages[1]!.content;
      expect(head).toMatch(/^It is \d\d:\d\d \(step \d\)\.\nWhat everyone can see:\n\{.*\}\n\n$/s);
      for (const r of list) {
        expect(r.messages).toHaveLength(3);
        expect(r.messages[1]!.content).toBe(head);
        expect(r.messages[2]!.content).toMatch(/^You are /);
        expect(r.meta.cacheBreaks).toEqual([0, 1]);
        const u = r.messages[2]!.content;
        expect(u.indexOf('You are ')).toBeLessThan(u.indexOf('What you see now:'));
        expect(u.endsWith('Choose your action.')).toBe(true);
      }
      // keys: the run, the state and the role, then the step and one of ceil(1,000 / 16) shards
      const keys = new Set(list.map((r) => r.promptCacheKey!));
      for (const k of keys) expect(k).toMatch(new RegExp(`^sop-[0-9a-z]+-[0-9a-z]+-${step}\\.\\d+$`));
      expect(keys.size).toBeGreaterThan(list.length / 4);
      expect(Math.max(...[...keys].map((k) => Number(k.split('.').at(-1))))).toBeLessThan(63);
    }
    // an agent keeps its shard from step to step
    const shardOf = new Map<string, string>();
    for (const r of decisions) {
      const shard = r.promptCacheKey!.split('.').at(-1)!;
      expect(shardOf.get(r.meta.agent!) ?? shard).toBe(shard);
      shardOf.set(r.meta.agent!, shard);
    }
  });

  it('gives the same journal events at concurrency 1, 64 and 500', async () => {
    const sop = loadSop(EXAMPLE);
    const one = comparable(await events(sop, { llm: 'mock', concurrency: 1 }));
    expect(comparable(await events(sop, { llm: 'mock', concurrency: 64 }))).toEqual(one);
    expect(comparable(await events(sop, { llm: 'mock', concurrency: 500 }))).toEqual(one);
  });

  it('a cassette recorded at concurrency 500 replays at concurrency 1 to the same events', async () => {
    const sop = loadSop(EXAMPLE);
    const cassette = join(tmp, 'spread.cassette.json');
    const recorded = comparable(
      await events(sop, { llm: new RecordingProvider(new MockProvider(), cassette, sop.name), concurrency: 500 }),
    );
    const replayed = comparable(await events(sop, { llm: `replay:${cassette}`, concurrency: 1 }));
    // the run_started line names the provider; everything after it is the same
    expect(replayed.slice(1)).toEqual(recorded.slice(1));
  });

  it('keeps each agent’s prompt flat over steps (bounded memory)', async () => {
    const file = variant('flat', (feed) => {
      feed.activation = { probability: 1 };
      feed.max_steps = 8;
      feed.transitions = [];
      feed.population = { ...(feed.population as object), sample: { n: 40, seed: 1 } };
    });
    const list = await events(loadSop(file), { llm: 'mock', prompts: true });
    const sizes = new Map<string, number[]>();
    for (const e of list)
      if (e.type === 'prompt' && e.state === 'feed' && e.agent) {
        const size = e.messages.reduce((n, m) => n + m.content.length, 0);
        sizes.set(e.agent, [...(sizes.get(e.agent) ?? []), size]);
      }
    expect(sizes.size).toBeGreaterThan(10);
    for (const [, s] of sizes) {
      expect(s).toHaveLength(8);
      // memory is the last 3 actions: from step 4 on, a prompt grows by no more than the feed's text varies
      expect(Math.max(...s.slice(3)) - Math.min(...s.slice(3))).toBeLessThan(2500);
    }
  });

  it('archetype tier: one LLM call per group of agents that share the persona template’s values', async () => {
    const file = variant('arch', (feed) => {
      feed.cognition = { tier: 'archetype' };
      feed.population = { source: { file: 'personas.csv' }, persona: 'You care about {{interest}}.' };
      feed.max_steps = 2;
      feed.transitions = [];
    });
    const list = await events(loadSop(file), { llm: 'mock' });
    for (const step of [1, 2]) {
      const calls = list.filter((e) => e.type === 'llm_call' && e.state === 'feed' && e.turn === step);
      const s = list.find((e): e is StepEvent => e.type === 'population_step' && e.step === step)!;
      expect(calls.length).toBeLessThanOrEqual(5); // five interests
      expect(s.actions.filter((a) => a.tier === 'archetype').length).toBe(s.active);
    }
  });

  it('rule tier: no LLM call; a transition on a metric moves the run on before max_steps', async () => {
    const file = variant('rule', (feed) => {
      feed.cognition = { tier: 'rule', policy: 'cascade', params: { repost: 0.5, like: 0.2 } };
      feed.activation = { probability: 0.5 };
      feed.max_steps = 20;
      feed.transitions = [{ when: 'cascade_news_size >= 30', to: 'debrief' }];
    });
    const list = await events(loadSop(file), { llm: 'mock' });
    const steps = list.filter((e): e is StepEvent => e.type === 'population_step');
    expect(list.filter((e) => e.type === 'llm_call' && e.state === 'feed')).toHaveLength(0);
    expect(steps.length).toBeLessThan(20);
    expect(steps.at(-1)!.metrics['cascade.news.size']).toBeGreaterThanOrEqual(30);
    expect(steps.slice(0, -1).every((s) => (s.metrics['cascade.news.size'] ?? 0) < 30)).toBe(true);
    expect(list.find((e) => e.type === 'state_entered' && e.state === 'debrief')).toBeDefined();
  });

  it('interventions: an injected post at step 2, a parameter changed, and a survey whose answers stay out of memory', async () => {
    const file = variant('intervene', (feed) => {
      feed.max_steps = 3;
      feed.transitions = [];
      feed.interventions = [
        { at: 2, act: { agent: 'a5', name: 'post', args: { text: 'Correction: the buses stay paid.' } } },
        { at: 2, set: { feed_size: 3 } },
        { at: 3, survey: { name: 'trust', question: 'Do you trust the news about buses? One word.', where: "party == 'left'", n: 7 } },
      ];
    });
    const list = await events(loadSop(file), { llm: 'mock', prompts: true });
    const steps = list.filter((e): e is StepEvent => e.type === 'population_step');
    expect(steps[1]!.actions[0]).toMatchObject({ agent: 'a5', name: 'post', tier: 'injected', ok: true });
    const answers = steps[2]!.surveys!;
    expect(answers).toHaveLength(7);
    const surveyed = new Set(answers.map((a) => a.agent));
    const prompts = list.filter((e) => e.type === 'prompt' && e.state === 'feed') as Array<Extract<RunEvent, { type: 'prompt' }>>;
    expect(prompts.some((p) => p.messages.some((m) => m.content.includes('Do you trust the news')) && p.purpose !== 'survey')).toBe(false);
    expect(surveyed.size).toBe(7);
  });
});

describe('resolution of simultaneous actions', () => {
  it('judge: one judge call per contested object, in the order of the objects; priority: higher first', async () => {
    const judged = variant('judge', (feed) => {
      feed.resolution = { type: 'judge' };
      feed.activation = { probability: 1 };
      feed.population = { source: { file: 'personas.csv' }, persona: 'You are {{name}}.', sample: { n: 40, seed: 3 } };
      feed.max_steps = 2;
      feed.transitions = [];
    });
    const list = await events(loadSop(judged), { llm: 'mock', prompts: true });
    const judges = list.filter((e) => e.type === 'llm_call' && e.purpose === 'judge' && e.state === 'feed');
    expect(judges.length).toBeGreaterThan(0);
    const objects = list
      .filter((e): e is Extract<RunEvent, { type: 'prompt' }> => e.type === 'prompt' && e.purpose === 'judge' && e.turn === 1)
      .map((e) => (JSON.parse(e.messages[1]!.content) as { object: string }).object);
    expect(objects).toEqual([...objects].sort());
    expect(new Set(objects).size).toBe(objects.length);

    const prioritised = variant('priority', (feed) => {
      feed.resolution = { type: 'priority', expr: 'age' };
      feed.activation = { probability: 1 };
      feed.population = { source: { file: 'personas.csv' }, persona: 'You are {{name}}.', sample: { n: 40, seed: 3 } };
      feed.max_steps = 1;
      feed.transitions = [];
    });
    const step = (await events(loadSop(prioritised), { llm: 'mock' })).find((e): e is StepEvent => e.type === 'population_step')!;
    const ages = new Map<string, number>();
    for (const line of readFileSync('examples/social-spread/personas.csv', 'utf8').trim().split('\n').slice(1)) {
      const [id, , age] = line.split(',');
      ages.set(id!, Number(age));
    }
    const applied = step.actions.filter((a) => a.name !== 'invalid').map((a) => ages.get(a.agent)!);
    expect(applied).toEqual([...applied].sort((a, b) => b - a));
  });
});

describe('a world of your own', () => {
  it('registered with registerWorld, validates and runs like the built-ins', async () => {
    const voting = defineWorld<{ tally: Record<string, number> }, { options: string[] }>({
      name: 'voting-test',
      description: 'Agents vote for one option.',
      params: { type: 'object', required: ['options'], properties: { options: { type: 'array', items: { type: 'string' } } } },
      actions: [
        {
          name: 'vote',
          description: 'Vote.',
          parameters: { type: 'object', required: ['option'], properties: { option: { type: 'string', enum: ['tea', 'coffee'] } } },
        },
      ],
      init: (params) => ({ tally: Object.fromEntries(params.options.map((o) => [o, 0])) }),
      snapshot: (st) => st.tally,
      observe: (st) => st.tally,
      apply: (st, actions) =>
        actions.map((a) => {
          const option = String(a.args.option);
          st.tally[option] = (st.tally[option] ?? 0) + 1;
          return { agent: a.agent, name: a.name, ok: true, output: `voted ${option}` };
        }),
      metrics: (st) => ({ ...st.tally }),
    });
    const file = variant('voting', (feed) => {
      feed.world = { type: 'voting-test', params: { options: ['tea', 'coffee'] } };
      feed.actions = ['vote'];
      feed.population = { source: { file: 'personas.csv' }, sample: { n: 30, seed: 2 } };
      feed.activation = { probability: 1 };
      feed.max_steps = 2;
      feed.transitions = [];
      feed.metrics = {};
    });
    expect(validateSop(file).errors.map((d) => d.message)).toEqual([
      `unknown world "voting-test" (worlds: board, contest, grid, groups, market, network, social)`,
    ]);
    registerWorld(voting);
    expect(validateSop(file).ok).toBe(true);
    const list = await events(loadSop(file), { llm: 'mock' });
    const last = list.filter((e): e is StepEvent => e.type === 'population_step').at(-1)!;
    expect(last.metrics.tea! + last.metrics.coffee!).toBe(60); // 30 agents voted at each of 2 steps
  });
});

describe('sop validate of a population state', () => {
  const problems = (file: string) => validateSop(file).errors.map((d) => `${d.pointer}: ${d.message}`);

  it('accepts both examples', () => {
    expect(validateSop(EXAMPLE).ok).toBe(true);
    expect(validateSop('examples/market/market.sop.json').ok).toBe(true);
  });

  it('refuses a persona template naming a missing column, at its pointer', () => {
    const file = variant('bad-persona', (feed) => {
      feed.population = { source: { file: 'personas.csv' }, persona: 'You are {{nmae}}.' };
    });
    expect(problems(file)).toEqual([
      '/states/feed/population/persona: names column "nmae", which the source does not have (columns: id, name, age, party, interest, followers)',
    ]);
  });

  it('refuses an action the world does not accept', () => {
    const file = variant('bad-action', (feed) => {
      feed.actions = ['post', 'retweet'];
    });
    expect(problems(file)).toEqual([
      '/states/feed/actions/1: "retweet" is not an action of world "social" (its actions: post, like, repost, follow, idle)',
    ]);
  });

  it('refuses a missing data file', () => {
    const file = variant('bad-file', (feed) => {
      feed.population = { source: { file: 'nobody.csv' } };
    });
    const found = problems(file);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^\/states\/feed\/population\/source\/file: .*nobody\.csv/);
  });

  it('refuses an expression that does not parse and an unknown rule policy', () => {
    const file = variant('bad-expr', (feed) => {
      feed.cognition = [{ tier: 'rule', policy: 'telepathy' }];
      feed.transitions = [{ when: 'reposts >', to: 'debrief' }];
    });
    const found = problems(file);
    expect(found.some((p) => p.startsWith('/states/feed/cognition/0/policy: unknown rule policy "telepathy"'))).toBe(true);
    expect(found.some((p) => p.startsWith('/states/feed/transitions/0/when: '))).toBe(true);
  });

  it("refuses a population state's settings on a state without a population, rather than ignore them", () => {
    const file = variant('stray-settings', (_feed, sop) => {
      const debrief = (sop.states as Record<string, Record<string, unknown>>).debrief!;
      debrief.llm_mode = 'batch';
      debrief.straggler = { deadline_s: 5, then: 'wait' };
    });
    expect(problems(file)).toEqual([
      '/states/debrief/llm_mode: "llm_mode" is a population state\'s setting, and this state has no "population" (docs/population.md)',
      '/states/debrief/straggler: "straggler" is a population state\'s setting, and this state has no "population" (docs/population.md)',
    ]);
  });
});
