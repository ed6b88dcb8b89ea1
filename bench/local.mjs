// A GGUF model in process (`--llm local:`, src/llm/local.ts): prefill and decode speed through the
// provider sop runs, on the local provider's test model (SmolLM2-135M-Instruct Q4_1, fetched by
// .ci/run) or the model given with `--model PATH`. Each repetition sends another prompt (its first
// line differs), so no prefix is reused from the sequence's cache; prefill is the prompt's tokens
// over the time to the first streamed token, decode the reply's other tokens over the rest.
// Options (npm run bench -- local --threads 2 --model PATH): --threads (default 1: llama.cpp's
// threads spin while they wait for each other, which a shared machine turns into minutes),
// --reps (default 3).
// The population step's actions/s (1 sequence against 8) needs population states, not built yet.
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ROOT } from './lib/engine.mjs';
import { median, round, row } from './lib/stats.mjs';

export const order = 90;

function option(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
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

  const { LocalProvider } = await import(pathToFileURL(join(ROOT, 'dist/src/llm/local.js')).href);
  const { localSettings } = await import(pathToFileURL(join(ROOT, 'dist/src/llm/local-runtime.js')).href);
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
      population_actions_per_s: null,
      population_note:
        'not measured: the population step (a 100-agent step, 1 sequence against 8) needs population states, being built separately',
    },
  };
  return {
    title: `${title}: ${basename(model)}, ${threads} thread${threads === 1 ? '' : 's'}`,
    rows: [
      row('model load', `${round(loadMs, 0)} ms`),
      row(`prefill (${promptTokens}-token prompt)`, `${results.local.prefill_tokens_per_s} tokens/s`),
      row(`decode (${replyTokens}-token reply)`, `${results.local.decode_tokens_per_s} tokens/s`),
      row('population step actions/s', 'not measured'),
    ],
    results,
    notes: ['the population step (100 agents, 1 sequence against 8) waits for population states'],
  };
}
