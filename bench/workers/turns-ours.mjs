// Child process of bench/langgraph.mjs: the round-robin fixture run by this engine for N turns
// with the mock LLM, the plain in-memory environment (no embeddings, like the LangGraph side)
// and every event kept in memory (the counterpart of LangGraph's MemorySaver). Prints one JSON
// line: per-turn overhead samples summarised, and the peak RSS of this process.
import { join } from 'node:path';
import { FIXTURES, TimedProvider, loadEngine, tempRuns } from '../lib/engine.mjs';
import { mean, median, p95 } from '../lib/stats.mjs';

const turns = Number(process.argv[2] ?? 2000);
const journal = process.argv.includes('--journal');
const engine = await loadEngine();
const { Run, MockProvider, RunFolder, makeRedactor, ListEnvironment } = engine;
const file = join(FIXTURES, 'roundrobin.sop.json');
const { sop } = engine.loadSopFile(file);

const llm = new TimedProvider(new MockProvider());
const events = [];
const runs = journal ? tempRuns('rr') : undefined;
const folder = runs ? new RunFolder(runs.dir, 'bench', makeRedactor()) : undefined;
const overheadUs = [];
let last = 0;
let lastLlm = 0;
const clock = (event) => {
  if (event.type !== 'message') return;
  const now = performance.now();
  overheadUs.push((now - last - (llm.ms - lastLlm)) * 1000);
  last = now;
  lastLlm = llm.ms;
};
const keep = folder
  ? folder.onEvent
  : (event) => {
      if (event.type !== 'delta') events.push(event);
    };
const run = new Run({
  sop,
  file,
  llm,
  maxTurns: turns,
  runId: 'bench',
  listeners: [clock, keep],
  environment: new ListEnvironment(sop.environment?.type ?? 'cooperative'),
});
const started = performance.now();
last = started;
const result = await run.run();
const totalMs = performance.now() - started;
folder?.close?.();
runs?.remove();
if (result.turns !== turns) throw new Error(`stopped after ${result.turns} turns (${result.status}: ${result.error?.message ?? ''})`);
process.stdout.write(
  JSON.stringify({
    side: journal ? 'ours+journal' : 'ours',
    turns,
    median_us: median(overheadUs),
    p95_us: p95(overheadUs),
    mean_us: mean(overheadUs),
    first200_median_us: median(overheadUs.slice(0, 200)),
    last200_median_us: median(overheadUs.slice(-200)),
    total_ms: totalMs,
    llm_ms: llm.ms,
    peak_rss_kb: process.resourceUsage().maxRSS,
    messages: result.messages.length,
    events: events.length,
  }) + '\n',
);
