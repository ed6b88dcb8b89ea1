// The prompt bench's two fixtures with prompts the size of real ones, run with the engine's
// layout and with the layout of main before issue 26, and billed by the simulated provider
// caches (./billed-cache.mjs):
//  - bench/fixtures/salt-road.sop.json: a turn-based game of 6 houses, about 1,150 tokens of rules
//    and persona in each agent prompt, a 24-message window and a summary every 24 messages;
//  - bench/fixtures/town-square.sop.json: a population step of 1,000 agents (3 steps), about 900
//    tokens of rules, the tools, the step's trending posts, a persona and a feed of 5 posts.
// Main's layout: the summary rewritten at each refresh (semantics summaryChunks off), the
// persona first in a population agent's system message and the snapshot after its feed, and no
// prompt_cache_key.
import { join } from 'node:path';
import { FIXTURES } from './engine.mjs';
import { RealisticReplies, billed, cacheCalls, loadCacheTools } from './billed-cache.mjs';

export const GAME_TURNS = 300;
export const COST_TURNS = 1000;
/** Throughput profiles of the send times: the game one call at a time, a step 32 at a time. */
export const PROFILE = { turn_based: { latency_ms: 2500, concurrency: 1 }, population: { latency_ms: 2000, concurrency: 32 } };

// main's population templates (prompts/population_system.hbs and population_observe.hbs before issue 26)
const MAIN_POPULATION_SYSTEM =
  '{{#if persona}}{{persona}}\n\n{{/if}}{{#if environment_prompt}}{{environment_prompt}}\n\n{{/if}}You are one of many people in a simulation. ' +
  'At each step you see what is in front of you and take exactly one action.\nAct by calling one of the tools. Where tools are not available, ' +
  'reply with one JSON object and nothing else:\n{"command": "<action>", "command_args": {...}}\nYour actions: {{join actions ", "}}. ' +
  'Keep any text you write short (one or two sentences), in your own voice.\n';
const MAIN_POPULATION_OBSERVE =
  'It is {{clock}} (step {{step}}).\n{{#if memory}}\n{{memory}}\n{{/if}}\nWhat you see now:\n{{observation}}\n{{#if snapshot}}\n\n' +
  'What everyone can see:\n{{snapshot}}\n{{/if}}\n\nChoose your action.\n';

async function record(engine, file, turns, main, environment) {
  const { Run, MockProvider, loadSopFile } = engine;
  const { sop } = loadSopFile(file);
  if (environment) sop.environment = { ...sop.environment, ...environment };
  if (main && sop.states.square) {
    sop.templates = { ...sop.templates, population_system: MAIN_POPULATION_SYSTEM };
    sop.states.square.observe = MAIN_POPULATION_OBSERVE;
  }
  const llm = new RealisticReplies(new MockProvider({ walk: false }));
  const plugins = main ? () => [{ name: 'bench-main-layout', semantics: (s) => ({ ...s, summaryChunks: false }) }] : undefined;
  const result = await new Run({ sop, file, llm, maxTurns: turns, runId: 'bench-cache', ...(plugins ? { plugins } : {}) }).run();
  if (!sop.states.square && result.turns !== turns) throw new Error(`${file} stopped after ${result.turns} turns (${result.status})`);
  return llm.calls;
}

/**
 * Where sop puts Anthropic's breakpoints (a server with llm.cache_breakpoints): after the system
 * message, the summary and the window of an agent prompt (meta.cacheBreaks), after the system
 * message of any other call.
 */
function breakpoints(request, ends) {
  const marks = request.meta.cacheBreaks ?? [0];
  return marks.map((i) => ends[i]).filter((x) => x !== undefined);
}

function simulate(tools, tok, recorded, profile, { keys, model, minTokens }) {
  const calls = cacheCalls(tok, recorded, {
    latencyMs: profile.latency_ms,
    concurrency: profile.concurrency,
    keys,
    breakpoints,
  });
  const openai = tools.simulateOpenAiCache(calls);
  const anthropic = tools.simulateAnthropicCache(calls, { minTokens });
  return { calls, openai: billed(tools, tok, calls, openai, model), anthropic: billed(tools, tok, calls, anthropic, model) };
}

/** Only the calls of the first `turns` turns (their cache results depend only on calls before them). */
function firstTurns(tools, tok, sim, turns, model) {
  const keep = sim.calls.map((c, i) => [c, i]).filter(([c]) => c.request.meta.turn <= turns);
  const pick = (s) => ({
    ...s,
    calls: keep.map(([, i]) => s.calls[i]),
    promptTokens: keep.reduce((a, [, i]) => a + s.calls[i].promptTokens, 0),
  });
  return billed(
    tools,
    tok,
    keep.map(([c]) => c),
    pick(tools.simulateOpenAiCache(sim.calls)),
    model,
  );
}

export async function billedCaches(engine) {
  const tools = await loadCacheTools();
  const game = join(FIXTURES, 'salt-road.sop.json');
  const square = join(FIXTURES, 'town-square.sop.json');
  const model = engine.loadSopFile(game).sop.llm.model;
  const tok = await tools.tokenizerFor(model);
  const minTokens = 1024; // Anthropic's floor for Claude Sonnet and Opus 4.x (Haiku 4.5: 4,096)
  const out = { model, tokenizer: tok.encoding, turn_based: {}, population: {} };
  // main's layout on the same SOP; and with a window of the same mean size as the engine's (24 to
  // 47 messages against 12 to 59), so that the cost compares prompts that show as much
  const variants = [
    ['layout', false],
    ['main_layout', true],
    ['main_layout_same_mean_window', true, { max_chat_history: 24, summary: { every: 24 } }],
  ];
  for (const [name, main, environment] of variants) {
    const turns = await record(engine, game, COST_TURNS, main, environment);
    const sim = simulate(tools, tok, turns, PROFILE.turn_based, { keys: !main, model, minTokens });
    out.turn_based[name] = {
      ...(environment ? { environment } : {}),
      [`first_${GAME_TURNS}_turns_openai`]: firstTurns(tools, tok, sim, GAME_TURNS, model),
      [`all_${COST_TURNS}_turns_openai`]: sim.openai,
      [`all_${COST_TURNS}_turns_anthropic`]: { cached_share: sim.anthropic.cached_share, by_purpose: sim.anthropic.by_purpose },
    };
    if (environment) continue;
    const pop = await record(engine, square, 3, main);
    const psim = simulate(tools, tok, pop, PROFILE.population, { keys: !main, model, minTokens });
    out.population[name] = {
      openai: psim.openai,
      anthropic: { cached_share: psim.anthropic.cached_share, by_step: psim.anthropic.by_step },
    };
  }
  return out;
}
