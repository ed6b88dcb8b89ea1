// Prompt caches as providers bill them (issue 26), and prompt growth. The target: the share of
// prompt tokens a provider would bill as cached, simulated with OpenAI's and Anthropic's rules
// (src/features/cost/prompt-cache.ts) on two fixtures with prompts the size of real ones, counted with the
// model's tokenizer (bench/lib/cache-fixtures.mjs), against the layout of main before issue 26.
// Diagnostics, over the 2,000-turn debate fixture (mock LLM, default environment): prompt tokens
// of the agent call at given turns, and for every agent prompt the share of it that is a
// byte-identical prefix of the same agent's previous prompt. That run goes through a SIMULATED
// prefix cache (bench/lib/prefix-cache.mjs) that reports cached prompt tokens the way OpenAI
// does, and the engine's usage totals (as in usage.json) give the cached share per purpose.
import { join } from 'node:path';
import { FIXTURES, TimedProvider, commonPrefix, loadEngine, promptBytes } from './lib/engine.mjs';
import { COST_TURNS, GAME_TURNS, PROFILE, billedCaches } from './lib/cache-fixtures.mjs';
import { PrefixCacheProvider } from './lib/prefix-cache.mjs';
import { mean, pct, round, row } from './lib/stats.mjs';
import { TURNS } from './overhead.mjs';

export const order = 30;
const AT = [10, 100, 1000, 2000];
/** Prompt size is compared as the mean over the AVG agent prompts ending at a turn (roles differ in size). */
const AVG = 50;
const FLAT_TARGET = 0.1;
/** #14's byte-prefix target: a diagnostic since issue 26 (the billed share below is the target). */
const PREFIX_TARGET = 0.85;
const CACHED_TARGET = { turn_based: 0.8, population: 0.6 };

/** Record every agent prompt of a run of `file` and measure sizes and shared prefixes. */
export async function promptStats(engine, { sop, file, turns, environment, openaiRule = false }) {
  const { Run, MockProvider } = engine;
  let visit = 0;
  let refreshes = 0;
  const tokensAt = new Map();
  const layout = { pairs: 0, below: 0 }; // same-visit pairs, and those sharing less than the layout allows
  const previous = new Map(); // agent (or ' judge') -> { bytes, state, visit, refreshes }
  const kinds = ['all', 'sameState', 'sameVisit', 'sameVisitNoRefresh', 'sameVisitRefresh', 'judgeSameVisit'];
  const pairs = Object.fromEntries(kinds.map((k) => [k, []]));
  const bytes = Object.fromEntries(kinds.map((k) => [k, [0, 0]]));
  const add = (kind, prefix, size) => {
    pairs[kind].push(prefix / size);
    bytes[kind][0] += prefix;
    bytes[kind][1] += size;
  };
  const cache = new PrefixCacheProvider(new MockProvider({ walk: false }), { openaiRule });
  const llm = new TimedProvider(cache, (request, response) => {
    // the debate loops for 2,000 turns
    const { meta } = request;
    if (meta.purpose === 'judge') {
      const cur = promptBytes(request.messages);
      const prev = previous.get(' judge');
      if (prev && prev.visit === visit) add('judgeSameVisit', commonPrefix(prev.bytes, cur), cur.length);
      previous.set(' judge', { bytes: cur, visit });
    }
    if (meta.purpose !== 'agent') return;
    tokensAt.set(meta.turn, response.usage.promptTokens);
    const cur = promptBytes(request.messages);
    const prev = previous.get(meta.agent);
    if (prev) {
      const prefix = commonPrefix(prev.bytes, cur);
      if (prev.visit === visit) {
        const bound = layoutBound(prev.messages, request.messages);
        layout.pairs++;
        if (prefix < bound) layout.below++;
      }
      add('all', prefix, cur.length);
      if (prev.state === meta.state) add('sameState', prefix, cur.length);
      if (prev.visit === visit) {
        add('sameVisit', prefix, cur.length);
        add(prev.refreshes === refreshes ? 'sameVisitNoRefresh' : 'sameVisitRefresh', prefix, cur.length);
      }
    }
    previous.set(meta.agent, {
      bytes: cur,
      messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
      state: meta.state,
      visit,
      refreshes,
    });
  });
  const onEvent = (e) => {
    if (e.type === 'state_entered') visit++;
    if (e.type === 'summary') refreshes++;
  };
  const run = new Run({
    sop,
    file,
    llm,
    maxTurns: turns,
    listeners: [onEvent],
    runId: 'bench-prompts',
    ...(environment ? { environment } : {}),
  });
  const result = await run.run();
  if (result.turns !== turns)
    throw new Error(`prompt bench stopped after ${result.turns} turns (${result.status}: ${result.error?.message ?? ''})`);
  const avgEnding = (t) => {
    const xs = [];
    for (let k = t; k > 0 && xs.length < AVG; k--) if (tokensAt.has(k)) xs.push(tokensAt.get(k));
    return mean(xs);
  };
  const share = (kind) => ({
    pairs: pairs[kind].length,
    mean: round(mean(pairs[kind]), 4),
    byte_weighted: round(bytes[kind][0] / bytes[kind][1], 4),
    min: round(Math.min(...pairs[kind]), 4),
  });
  return {
    tokensAt: Object.fromEntries(AT.filter((t) => t <= turns).map((t) => [t, tokensAt.get(t)])),
    avgAt: Object.fromEntries(AT.filter((t) => t <= turns).map((t) => [t, round(avgEnding(t), 1)])),
    prefix: { all: share('all'), same_state: share('sameState'), same_state_visit: share('sameVisit') },
    split: { no_refresh_between: share('sameVisitNoRefresh'), refresh_between: share('sameVisitRefresh') },
    judge: share('judgeSameVisit'),
    cached: cachedShare(result.usage),
    layout,
  };
}

const SUMMARY_HEAD = 'Summary of the conversation so far:'; // prompts/agent_context.hbs
const RELEVANT_HEAD = 'Earlier messages relevant to the current discussion:';

/**
 * The longest prefix the prescribed layout (system, summary, window that only grows between
 * refreshes, then retrieved messages and the last prompt) guarantees two consecutive prompts of
 * one agent share: with the same summary, everything up to the end of the earlier prompt's
 * window; after a summary refresh, the system message and what the two summaries share. The
 * bench counts the pairs whose shared prefix falls short of it (an engine that breaks its own
 * layout), which shows the share it reports is the most this layout can give on the fixture.
 */
function layoutBound(prevMessages, curMessages) {
  const stable = prevMessages.slice(0, -1); // the last prompt
  if (stable.at(-1)?.content.startsWith(RELEVANT_HEAD)) stable.pop();
  const summaryOf = (ms) => (ms[1]?.content.startsWith(SUMMARY_HEAD) ? ms[1].content : '');
  const [before, after] = [summaryOf(prevMessages), summaryOf(curMessages)];
  if (before === after) return promptBytes(stable).length;
  // the summary changed (or came first): what follows the system message may differ from its first byte on
  const [next, nextNow] = [promptBytes(prevMessages.slice(1, 2)), promptBytes(curMessages.slice(1, 2))];
  return promptBytes(prevMessages.slice(0, 1)).length + commonPrefix(next, nextNow);
}

/** Cached prompt tokens as the engine counted them (usage.json), as a share of prompt tokens, per purpose. */
function cachedShare(usage) {
  const share = (u) => (u && u.prompt_tokens > 0 ? round((u.cached_tokens ?? 0) / u.prompt_tokens, 4) : undefined);
  const out = { all: share(usage) };
  for (const [purpose, u] of Object.entries(usage.by_purpose)) out[purpose] = share(u);
  return out;
}

/**
 * What-if layouts, measured with a bench-side environment (the EnvironmentMemory interface lets a
 * program pass its own): retrieval off, and the recent window either aligned to the summary
 * cadence (the engine's rule: its first message moves only when the summary is refreshed, so it
 * holds between W and W + every - 1 messages and only grows in between) or sliding (the rule
 * before: always the last W messages).
 */
async function whatIf(engine, sop, file) {
  const { ListEnvironment } = await import('sop/extend');
  const W = sop.environment.max_chat_history;
  class SlidingWindow extends ListEnvironment {
    view(request) {
      return super.view({ ...request, window: W });
    }
  }
  const noRetrieval = { ...sop, environment: { ...sop.environment, top_k: 0 } };
  const visibility = sop.environment.type ?? 'cooperative';
  const sliding = await promptStats(engine, { sop: noRetrieval, file, turns: TURNS, environment: new SlidingWindow(visibility) });
  const aligned = await promptStats(engine, { sop: noRetrieval, file, turns: TURNS, environment: new ListEnvironment(visibility) });
  return { sliding, aligned };
}

export async function run() {
  const engine = await loadEngine();
  const file = join(FIXTURES, 'debate5.sop.json');
  const { sop } = engine.loadSopFile(file);
  const s = await promptStats(engine, { sop, file, turns: TURNS });
  const openai = await promptStats(engine, { sop, file, turns: TURNS, openaiRule: true });
  const w = await whatIf(engine, sop, file);
  const billed = await billedCaches(engine);
  const game = billed.turn_based.layout[`first_${GAME_TURNS}_turns_openai`];
  const square = billed.population.layout.openai;
  const cached = { turn_based: game.cached_share, population: square.cached_share };
  const cost = (name) => billed.turn_based[name][`all_${COST_TURNS}_turns_openai`].usd;
  const growth = s.avgAt[2000] / s.avgAt[100] - 1;
  const flat = Math.abs(growth) <= FLAT_TARGET;
  const visitShare = s.prefix.same_state_visit.byte_weighted;
  const results = {
    cached_share_openai_rules: {
      ...cached,
      note:
        `SIMULATED (src/features/cost/prompt-cache.ts): the share of prompt tokens OpenAI would bill as cached, counted with ${billed.tokenizer} ` +
        `(gpt-tokenizer) for ${billed.model}: turn_based over the ${GAME_TURNS} turns of bench/fixtures/salt-road.sop.json, population over ` +
        'the 3 steps of 1,000 agents of bench/fixtures/town-square.sop.json. Details in billed_prompt_cache.',
      target: CACHED_TARGET,
    },
    billed_prompt_cache: {
      note:
        'Mock LLM with replies of realistic length (bench/lib/billed-cache.mjs). OpenAI: exact prefix, 1,024-token floor, 128-token steps, ' +
        'routing by prompt_cache_key and the first 256 tokens, ~15 requests a minute per route before it spills to more machines, 5-minute TTL. ' +
        'Anthropic: breakpoints where sop puts them (after the system message, the summary and the window of an agent prompt; after the rules and the snapshot of a population prompt; after the system message of other calls), 1,024-token floor ' +
        "(Sonnet/Opus), 5-minute TTL; Claude's tokens approximated by o200k_base (no package ships Claude 3+'s tokenizer). Send times from " +
        `the throughput profile. main_layout: main before issue 26 (summary rewritten at each refresh, persona first, no prompt_cache_key); ` +
        'main_layout_same_mean_window: the same with a window of the same mean size, so that cost compares prompts that show as much.',
      throughput_profile: PROFILE,
      ...billed,
    },
    [`cost_usd_of_${COST_TURNS}_turns`]: {
      layout: cost('layout'),
      main_layout: cost('main_layout'),
      main_layout_same_mean_window: cost('main_layout_same_mean_window'),
      model: billed.model,
    },
    fixture: 'bench/fixtures/debate5.sop.json',
    token_estimate: "ceil(chars / 4) + 4 per message (the mock provider's usage estimate)",
    prompt_tokens_at_turn: s.tokensAt,
    prompt_tokens_mean_of_last_50_agent_prompts: s.avgAt,
    growth_100_to_2000: round(growth, 4),
    flat_target: FLAT_TARGET,
    stable_prefix_share: s.prefix,
    stable_prefix_share_same_state_visit_by_summary_refresh: s.split,
    stable_prefix_share_judge_same_state_visit: s.judge,
    prefix_target: PREFIX_TARGET,
    layout_bound_check: {
      note:
        'Same-visit pairs, and those whose shared prefix is shorter than the prescribed layout guarantees (the earlier ' +
        "prompt's system message, summary and window when the summary is unchanged; the system message and the summaries' " +
        'common prefix after a refresh). 0 below means the share above is the most this layout can give on this fixture.',
      pairs: s.layout.pairs,
      below_bound: s.layout.below,
    },
    prefix_target_measure: 'stable_prefix_share.same_state_visit.byte_weighted',
    simulated_prompt_cache: {
      note:
        'SIMULATED, no provider involved (bench/lib/prefix-cache.mjs): cached prompt tokens = the longest byte-identical prefix ' +
        'shared with any of the last 32 prompts, at 4 characters a token, reported as usage.cachedTokens and counted by the ' +
        "engine as in usage.json (cached_tokens). 'any_prefix': no minimum, 1-token steps (an upper bound); 'openai_rule': only " +
        'prompts of 1,024 tokens or more, in 128-token steps.',
      cached_share_of_prompt_tokens: { any_prefix: s.cached, openai_rule: openai.cached },
    },
    what_if_retrieval_off_sliding_window: {
      prompt_tokens_mean_of_last_50_agent_prompts: w.sliding.avgAt,
      stable_prefix_share: w.sliding.prefix,
    },
    what_if_retrieval_off_aligned_window: {
      prompt_tokens_mean_of_last_50_agent_prompts: w.aligned.avgAt,
      stable_prefix_share: w.aligned.prefix,
    },
  };
  const main = billed.turn_based.main_layout[`first_${GAME_TURNS}_turns_openai`];
  const usd = (x) => `$${x.toFixed(3)}`;
  const rows = [
    row(
      `Cached share, OpenAI rules: turn-based game (${GAME_TURNS} turns)`,
      `${pct(cached.turn_based)} (main: ${pct(main.cached_share)})`,
      `>= ${pct(CACHED_TARGET.turn_based)}`,
      cached.turn_based >= CACHED_TARGET.turn_based,
    ),
    row(
      'Cached share, OpenAI rules: population step of 1,000 agents',
      `${pct(cached.population)} (main: ${pct(billed.population.main_layout.openai.cached_share)})`,
      `>= ${pct(CACHED_TARGET.population)}`,
      cached.population >= CACHED_TARGET.population,
    ),
    row(
      `  cost of ${COST_TURNS.toLocaleString('en-US')} game turns, ${billed.model}`,
      `${usd(cost('layout'))} (main: ${usd(cost('main_layout'))}; same mean window: ${usd(cost('main_layout_same_mean_window'))})`,
    ),
    row('  population: cost of 3 steps of 1,000 agents', `${usd(square.usd)} (main: ${usd(billed.population.main_layout.openai.usd)})`),
    row(
      'Cached share, Anthropic rules: game / population',
      `${pct(billed.turn_based.layout[`all_${COST_TURNS}_turns_anthropic`].cached_share)} / ${pct(billed.population.layout.anthropic.cached_share)}`,
    ),
    row('Prompt tokens at turns 10 / 100 / 1,000 / 2,000', AT.map((t) => s.tokensAt[t]).join(' / ')),
    row(
      'Prompt size change, turn 100 -> 2,000 (mean of 50 prompts)',
      `${growth >= 0 ? '+' : ''}${pct(growth)}`,
      `within ±${pct(FLAT_TARGET)}`,
      flat,
    ),
    row('Stable-prefix share, agent twice in a row in one state (bytes, diagnostic)', pct(visitShare), `#14: >= ${pct(PREFIX_TARGET)}`),
    row('  pairs sharing less than the layout allows', `${s.layout.below} of ${s.layout.pairs}`, '0', s.layout.below === 0),
    row('  of which: no summary refresh in between', pct(s.split.no_refresh_between.byte_weighted)),
    row('  of which: a summary refresh in between', pct(s.split.refresh_between.byte_weighted)),
    row('Stable-prefix share, same agent and state (any visit)', pct(s.prefix.same_state.byte_weighted)),
    row('Stable-prefix share, all agent prompts', pct(s.prefix.all.byte_weighted)),
    row('Stable-prefix share, judge twice in a row in one state', pct(s.judge.byte_weighted)),
    row('Cached prompt tokens, simulated prefix cache (all calls)', pct(s.cached.all ?? 0)),
    row('Cached prompt tokens, simulated with OpenAI rules', pct(openai.cached.all ?? 0)),
    row(
      '  what-if: retrieval off, sliding window (same measure)',
      `${pct(w.sliding.prefix.same_state_visit.byte_weighted)}, ${Math.round(w.sliding.avgAt[2000])} tokens`,
    ),
    row(
      '  what-if: retrieval off, window aligned to summaries',
      `${pct(w.aligned.prefix.same_state_visit.byte_weighted)}, ${Math.round(w.aligned.avgAt[2000])} tokens`,
    ),
  ];
  const notes = [];
  if (s.layout.below > 0) notes.push(`${s.layout.below} agent prompt pairs share less than the prompt layout allows.`);
  if (!flat) notes.push(`Prompt size grows ${pct(growth)} from turn 100 to 2,000.`);
  for (const k of ['turn_based', 'population'])
    if (cached[k] < CACHED_TARGET[k])
      notes.push(`Cached share (OpenAI rules) of the ${k} fixture misses ${pct(CACHED_TARGET[k])}: ${pct(cached[k])}.`);
  return {
    title: 'Prompt caches as providers bill them, prompt growth and stable prefix (mock LLM)',
    rows,
    results: { prompts: results },
    notes,
  };
}
