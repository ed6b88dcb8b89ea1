// A GGUF model in process (`--llm local:`, src/core/llm/local.ts) at the speed a user gets: on the
// local provider's test model (SmolLM2-135M-Instruct Q4_1, fetched by .ci/run) or `--model PATH`,
// through the provider sop runs, at three thread counts: 1, the default (the cores but one, at
// least 1: src/core/llm/local-runtime.ts defaultThreads) and every core, each with a busy loop on
// one core beside it (another process spinning: a test runner, a second run), as a shared machine
// has. The three settings are measured in turn, `--rounds` times (default 2), so the machine's
// drift hits them alike; each figure is the median of its setting's rounds.
// For each: prefill and decode tokens/s (a prompt of about 880 tokens and a 128-token reply at
// temperature 0, `--reps` times (default 2) after a warm-up, each with another first line so no
// prefix comes from the sequence's cache; prefill is the prompt's tokens over the time to the
// first streamed token, decode the reply's other tokens over the rest), then one population step
// of 20 agents (the social-spread example cut to 20 of its personas, all active, each deciding
// for itself, 48-token replies under the menu's grammar, the default 4 sequences and
// --concurrency): its seconds from population_started to population_step, and the longest gap
// between llm_progress events while it ran. Target: the default within 20% of the best of the
// three on the step (results.json `local.threads`, `local.default_over_best`).
// The earlier figures of a 100-agent step on 1 sequence against 8 (`local.population`) are kept.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, cpus, loadavg, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib/engine.mjs';
import { median, round, row } from './lib/stats.mjs';

export const order = 90;

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
}

/** The social-spread example cut to one step of `agents` agents, all active, each deciding for itself. */
function populationSop(dir, agents) {
  const sop = JSON.parse(readFileSync(join(ROOT, 'examples/social-spread/social-spread.sop.json'), 'utf8'));
  delete sop.$schema;
  sop.llm = { temperature: 0.7, max_tokens: 48 };
  const feed = sop.states.feed;
  feed.population = { ...feed.population, sample: { n: agents, seed: 1 } };
  feed.activation = { probability: 1 };
  feed.cognition = { tier: 'per_agent' };
  feed.max_steps = 1;
  feed.transitions = [];
  feed.next_states = { 1: 'end' };
  copyFileSync(join(ROOT, 'examples/social-spread/personas.csv'), join(dir, 'personas.csv'));
  const file = join(dir, `spread${agents}.sop.json`);
  writeFileSync(file, JSON.stringify(sop, null, 2));
  return file;
}

/** One population step of the SOP: its seconds, actions/s, invalid actions and the longest gap between progress events. */
async function populationStep(runSop, provider, file, agents, concurrency) {
  const handle = runSop(file, { llm: provider, seed: 2, ...(concurrency ? { concurrency } : {}) });
  let started;
  let step;
  let ended;
  let lastTold;
  let gap = 0;
  let told = 0;
  for await (const e of handle) {
    const t = performance.now();
    if (e.type === 'population_started') started = lastTold = t;
    if (e.type === 'llm_progress' && e.population) {
      gap = Math.max(gap, t - lastTold);
      lastTold = t;
      told++;
    }
    if (e.type === 'population_step') {
      ended = t;
      gap = Math.max(gap, t - lastTold);
      step = e;
    }
  }
  const result = await handle.result;
  if (result.status !== 'finished' || !step) throw new Error(`the population run ${result.status}: ${result.error?.message ?? ''}`);
  const actions = step.actions.length;
  return {
    agents,
    actions,
    invalid: step.actions.filter((a) => a.name === 'invalid').length,
    prompt_tokens_per_call: round(result.usage.prompt_tokens / actions, 0),
    reply_tokens_per_call: round(result.usage.completion_tokens / actions, 1),
    seconds: round((ended - started) / 1000, 1),
    actions_per_s: round(actions / ((ended - started) / 1000), 2),
    progress_events: told,
    longest_silence_s: round(gap / 1000, 1),
  };
}

/** Prefill and decode tokens/s of `reps` calls (after a warm-up) on the provider. */
async function speeds(provider, model, reps, tag) {
  const system = readFileSync(join(ROOT, 'examples/debate/debate.sop.json'), 'utf8').slice(0, 3000);
  const prefill = [];
  const decode = [];
  let promptTokens = 0;
  let replyTokens = 0;
  for (let i = 0; i < reps + 1; i++) {
    const started = performance.now();
    let first;
    const res = await provider.chat(
      {
        model,
        messages: [
          { role: 'system', content: `Session ${tag}-${i + 1}. You read this SOP file and answer questions on it.\n${system}` },
          { role: 'user', content: 'Write a long story about the debate this file describes, with every speaker in it.' },
        ],
        temperature: 0,
        maxTokens: 128,
        stream: true,
        meta: { purpose: 'agent', state: 'bench', agent: 'Bench', turn: i + 1 },
      },
      { onDelta: () => void (first ??= performance.now()) },
    );
    const end = performance.now();
    if (i === 0) continue; // the first call warms up
    promptTokens = res.usage.promptTokens;
    replyTokens = res.usage.completionTokens;
    prefill.push(res.usage.promptTokens / ((first - started) / 1000));
    if (res.usage.completionTokens > 1) decode.push((res.usage.completionTokens - 1) / ((end - first) / 1000));
  }
  return { prefill: median(prefill), decode: median(decode), promptTokens, replyTokens };
}

/** Another process spinning on one core until it is killed. */
function busyLoop() {
  const child = spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' });
  const kill = () => child.kill('SIGKILL');
  process.once('exit', kill);
  return () => {
    process.off('exit', kill);
    kill();
  };
}

export async function run() {
  const spec = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/models/smollm2.json'), 'utf8'));
  const model = option('model', join(ROOT, '.cache', 'models', spec.file));
  const reps = Number(option('reps', 2));
  const rounds = Number(option('rounds', 2));
  const agents = Number(option('agents', 20));
  const title = 'A GGUF model in process (--llm local:), threads under a busy loop';
  const missing = !existsSync(join(ROOT, 'node_modules', 'node-llama-cpp'))
    ? 'node-llama-cpp is not installed'
    : !existsSync(model)
      ? `no model at ${model} (bash .ci/run or node scripts/fetch-test-model.mjs fetches the test model)`
      : undefined;
  if (missing)
    return {
      title,
      rows: [row('local model', 'skipped')],
      results: {},
      notes: [`skipped: ${missing}; results.json keeps its last local figures`],
    };

  const { LocalProvider, closeLocalModels } = await import(pathToFileURL(join(ROOT, 'dist/src/core/llm/local.js')).href);
  const { localSettings, defaultThreads } = await import(pathToFileURL(join(ROOT, 'dist/src/core/llm/local-runtime.js')).href);
  const { runSop } = await import(pathToFileURL(join(ROOT, 'dist/src/index.js')).href);
  const cores = availableParallelism();
  const settingsOf = [
    { setting: '1', threads: 1 },
    { setting: 'default', threads: defaultThreads(cores) },
    { setting: 'all', threads: cores },
  ];
  const dir = mkdtempSync(join(tmpdir(), 'sop-bench-local-'));
  const measured = new Map(settingsOf.map((s) => [s.setting, []]));
  const loads = [];
  let runtime = '?';
  let tokens = { promptTokens: 0, replyTokens: 0 };
  const stopBusy = busyLoop();
  try {
    const file = populationSop(dir, agents);
    for (let r = 0; r < rounds; r++)
      for (const s of settingsOf) {
        await closeLocalModels(); // each setting loads its model afresh, alone in memory
        const provider = await LocalProvider.create({ model, settings: { ...localSettings({}), threads: s.threads }, seed: 1 });
        const sp = await speeds(provider, model, reps, `${s.setting}-${r}`);
        tokens = sp;
        runtime = `node-llama-cpp ${provider.describe?.match(/node-llama-cpp (\S+)/)?.[1] ?? '?'}`;
        const step = await populationStep(runSop, provider, file, agents);
        const load = round(loadavg()[0], 2);
        loads.push(load);
        measured.get(s.setting).push({ round: r + 1, prefill: sp.prefill, decode: sp.decode, step, load_average: load });
      }
  } finally {
    stopBusy();
    await closeLocalModels();
    rmSync(dir, { recursive: true, force: true });
  }
  const threads = settingsOf.map((s) => {
    const m = measured.get(s.setting);
    return {
      setting: s.setting,
      threads: s.threads,
      busy_loop: true,
      prefill_tokens_per_s: round(median(m.map((x) => x.prefill)), 0),
      decode_tokens_per_s: round(median(m.map((x) => x.decode)), 1),
      step_agents: agents,
      step_seconds: round(median(m.map((x) => x.step.seconds)), 1),
      step_actions_per_s: round(median(m.map((x) => x.step.actions_per_s)), 2),
      step_invalid: Math.max(...m.map((x) => x.step.invalid)),
      step_longest_silence_s: Math.max(...m.map((x) => x.step.longest_silence_s)),
      rounds: m.map((x) => ({
        round: x.round,
        prefill_tokens_per_s: round(x.prefill, 0),
        decode_tokens_per_s: round(x.decode, 1),
        step_seconds: x.step.seconds,
        progress_events: x.step.progress_events,
        load_average: x.load_average,
      })),
    };
  });
  const byName = Object.fromEntries(threads.map((t) => [t.setting, t]));
  // the step's speed: its shortest time over the default's (actions/s rounded to 0.01 is too coarse for a slow step)
  const best = Math.min(...threads.map((t) => t.step_seconds));
  const defaultOverBest = round(best / byName.default.step_seconds, 2);
  // the earlier comparison of context sequences, on request (--pop-sequences 1,8)
  const previous = (() => {
    try {
      return JSON.parse(readFileSync(join(ROOT, 'bench/results.json'), 'utf8')).local ?? {};
    } catch {
      return {};
    }
  })();
  const results = {
    local: {
      model: basename(model),
      runtime,
      cores,
      default_threads: defaultThreads(cores),
      prompt_tokens: tokens.promptTokens,
      reply_tokens: tokens.replyTokens,
      reps,
      rounds,
      // every setting with a busy loop on one core beside it; medians of the rounds, measured in turn
      threads,
      default_over_best: defaultOverBest,
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, load_average: round(loadavg()[0], 2), time: new Date().toISOString() },
      ...(previous.population ? { population: previous.population, population_actions_per_s: previous.population_actions_per_s } : {}),
    },
  };
  return {
    title: `${title}: ${basename(model)}, ${cores} cores`,
    rows: [
      ...threads.flatMap((t) => [
        row(
          `${t.setting} (${t.threads} thread${t.threads === 1 ? '' : 's'}): prefill / decode`,
          `${t.prefill_tokens_per_s} / ${t.decode_tokens_per_s} tokens/s`,
        ),
        row(
          `${t.setting} (${t.threads}): ${agents}-agent step`,
          `${t.step_seconds} s, ${t.step_actions_per_s} actions/s, silent ${t.step_longest_silence_s} s at most`,
        ),
      ]),
      row('default over the best, step under a busy loop', `${defaultOverBest}`, '>= 0.8', defaultOverBest >= 0.8),
      row(
        'longest silence in a step (llm_progress)',
        `${Math.max(...threads.map((t) => t.step_longest_silence_s))} s`,
        '<= 10 s',
        threads.every((t) => t.step_longest_silence_s <= 10),
      ),
    ],
    results,
    notes: [
      `a busy loop spun on one core throughout; load average ${loads.join(', ')} after each measurement: on a shared machine these figures are noisy`,
    ],
  };
}
