// Worker thread of bench/sweep.mjs (tinypool): runs `sims` simulations of the round-robin fixture
// against the server at `url`, not streamed, and returns their call counts.
import { loadEngine, loadLlm } from '../lib/engine.mjs';
import { runMany } from '../sweep.mjs';

export default async function ({ url, file, sims, turns, staggerMs = 0 }) {
  const engine = await loadEngine();
  const { openaiProvider } = await loadLlm();
  const { sop } = engine.loadSopFile(file);
  const llm = await openaiProvider({ baseURL: url, apiKey: 'bench' });
  const r = await runMany(engine, llm, sop, file, sims, turns, false, staggerMs);
  return { longestChain: r.longestChain, totalCalls: r.totalCalls };
}
