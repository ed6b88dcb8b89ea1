// A GGUF model in process (`--llm local:`, src/core/llm/local.ts): prefill and decode speed through the
// provider sop runs, on the local provider's test model (SmolLM2-135M-Instruct Q4_1, fetched by
// .ci/run) or the model given with `--model PATH`. Each repetition sends another prompt (its first
// line differs), so no prefix is reused from the sequence's cache; prefill is the prompt's tokens
// over the time to the first streamed token, decode the reply's other tokens over the rest.
// Options (npm run bench -- local --threads 2 --model PATH): --threads (default 1: llama.cpp's
// threads spin while they wait for each other, which a shared machine turns into minutes),
// --reps (default 3).
// Then a population step: the social-spread example cut to 100 agents (a sample of its personas),
// all active, each deciding for itself in one step (48-token replies under the menu's JSON-schema
// grammar), run on the same model with 1 context sequence and with 8 (SOP_LOCAL_SEQUENCES), at
// --concurrency equal to the sequences; actions/s is the step's 100 actions over the time from
// population_started to population_step (--agents N for another size, --pop-sequences 1,8).
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
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
  const file = join(dir, 'spread.sop.json');
  writeFileSync(file, JSON.stringify(sop, null, 2));
  return file;
}

/** One population step of the SOP on `sequences` context sequences: its actions per second, and how many were invalid. */
async function populationStep(LocalProvider, localSettings, runSop, model, threads, sequences, file, agents) {
  const provider = await LocalProvider.create({ model, settings: { ...localSettings({}), threads, sequences }, seed: 1 });
  const handle = runSop(file, { llm: provider, seed: 2, concurrency: sequences });
  let started;
  let step;
  let ended;
  for await (const e of handle) {
    if (e.type === 'population_started') started = performance.now();
    if (e.type === 'population_step') {
      ended = performance.now();
      step = e;
    }
  }
  const result = await handle.result;
  if (result.status !== 'finished' || !step) throw new Error(`the population run ${result.status}: ${result.error?.message ?? ''}`);
  const actions = step.actions.length;
  return {
    sequences,
    agents,
    actions,
    invalid: step.actions.filter((a) => a.name === 'invalid').length,
    // tokens of a decision, on average (the model's tokenizer)
    prompt_tokens_per_call: round(result.usage.prompt_tokens / actions, 0),
    reply_tokens_per_call: round(result.usage.completion_tokens / actions, 1),
    seconds: round((ended - started) / 1000, 1),
    actions_per_s: round(actions / ((ended - started) / 1000), 2),
  };
}

export async function run() {
  const spec = JSON.parse(readFileSync(join(ROOT, 'test/fixtures/models/smollm2.json'), 'utf8'));
  const model = option('model', join(ROOT, '.cache', 'models', spec.file));
  const threads = Number(option('threads', 1));
  const reps = Number(option('reps', 3));
  const title = 'A GGUF model in process (--llm local:)';
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

  const { LocalProvider } = await import(pathToFileURL(join(ROOT, 'dist/src/core/llm/local.js')).href);
  const { localSettings } = await import(pathToFileURL(join(ROOT, 'dist/src/core/llm/local-runtime.js')).href);
  const settings = { ...localSettings({}), threads, sequences: 1, contextSize: 4096 };
  const loadStarted = performance.now();
  const provider = await LocalProvider.create({ model, settings, seed: 1 });
  const loadMs = performance.now() - loadStarted;
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
          { role: 'system', content: `Session ${i + 1} of ${reps + 1}. You read this SOP file and answer questions on it.\n${system}` },
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
  // a population step, 1 sequence against 8
  const { runSop } = await import(pathToFileURL(join(ROOT, 'dist/src/index.js')).href);
  const agents = Number(option('agents', 100));
  const popSequences = String(option('pop-sequences', '1,8')).split(',').map(Number);
  const dir = mkdtempSync(join(tmpdir(), 'sop-bench-local-'));
  const population = [];
  try {
    const file = populationSop(dir, agents);
    for (const n of popSequences)
      population.push({
        ...(await populationStep(LocalProvider, localSettings, runSop, model, threads, n, file, agents)),
        load_average: round(loadavg()[0], 2),
      });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const byN = Object.fromEntries(population.map((p) => [p.sequences, p]));
  const speedup = byN[1] && byN[8] ? round(byN[8].actions_per_s / byN[1].actions_per_s, 2) : null;

  const results = {
    local: {
      model: basename(model),
      threads,
      sequences: 1,
      runtime: `node-llama-cpp ${provider.describe?.match(/node-llama-cpp (\S+)/)?.[1] ?? '?'}`,
      load_ms: round(loadMs, 0),
      prompt_tokens: promptTokens,
      reply_tokens: replyTokens,
      reps,
      prefill_tokens_per_s: round(median(prefill), 0),
      decode_tokens_per_s: round(median(decode), 1),
      // this machine as these figures were taken (results.json's `machine` block is the last run's)
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model, load_average: round(loadavg()[0], 2), time: new Date().toISOString() },
      // a step of `agents` agents of social-spread, 48-token replies under the grammar, each with the load average at its end
      population: { agents, threads, max_tokens: 48, runs: population, speedup_8_over_1: speedup },
      population_actions_per_s: Object.fromEntries(population.map((p) => [`sequences_${p.sequences}`, p.actions_per_s])),
    },
  };
  return {
    title: `${title}: ${basename(model)}, ${threads} thread${threads === 1 ? '' : 's'}`,
    rows: [
      row('model load', `${round(loadMs, 0)} ms`),
      row(`prefill (${promptTokens}-token prompt)`, `${results.local.prefill_tokens_per_s} tokens/s`),
      row(`decode (${replyTokens}-token reply)`, `${results.local.decode_tokens_per_s} tokens/s`),
      ...population.map((p) =>
        row(
          `population step, ${p.agents} agents, ${p.sequences} sequence${p.sequences === 1 ? '' : 's'}`,
          `${p.actions_per_s} actions/s (${p.seconds} s, ${p.invalid} invalid, load ${p.load_average})`,
        ),
      ),
      ...(speedup !== null ? [row('8 sequences over 1', `${speedup}x`)] : []),
    ],
    results,
    notes: [`load average ${round(loadavg()[0], 2)} at the end: on a shared machine these figures are lower than a quiet one gives`],
  };
}
