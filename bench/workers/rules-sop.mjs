// A child of bench/rules.mjs: one sop run in its own process, printing one JSON line.
//   node rules-sop.mjs zic N STEPS [journal]  - the ZI-C market (bench/lib/zic-sop.mjs): CPU seconds
//        from the start of the run (the SOP loaded) to its end, agent-steps, efficiency
//   node rules-sop.mjs social N STEPS ACTIVE - a social population with a rule tier and a run folder:
//        CPU ms of each step, applied actions, the journal's bytes, peak RSS
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { populationSop } from '../lib/population-sop.mjs';
import { zicSop } from '../lib/zic-sop.mjs';

const [kind, nText, stepsText, extra] = process.argv.slice(2);
const n = Number(nText);
const steps = Number(stepsText);
const cpuS = (u) => (u.user + u.system) / 1e6;

const { runSop, loadSop } = await import('sop');
const dir = mkdtempSync(join(tmpdir(), 'sop-bench-rules-'));
try {
  const file = join(dir, 'bench.sop.json');
  const social = kind === 'social';
  const sopObject = social
    ? populationSop(n, Number(extra), steps, {
        cognition: { tier: 'rule', policy: 'cascade', params: { repost: 0.2, like: 0.3, post: 0.05 } },
        world: {
          type: 'social',
          params: { rank: 'recency', feed_size: 3, seed_posts: [{ id: 'news', author: 'a0', text: 'Buses are free.' }] },
          graph: { generate: { model: 'barabasi_albert', m: 3, seed: 7 } },
        },
      })
    : zicSop(n, steps);
  writeFileSync(file, JSON.stringify(sopObject));
  const sop = loadSop(file);
  const out = social || extra === 'journal' ? join(dir, 'runs') : undefined;
  const cpu0 = process.cpuUsage();
  const handle = runSop(sop, { llm: 'mock', quiet: true, ...(out ? { out } : {}) });
  const stepCpuMs = [];
  const stepHeapMb = [];
  let actions = 0;
  let last = process.cpuUsage();
  let metrics;
  for await (const e of handle) {
    if (e.type === 'population_started') last = process.cpuUsage();
    if (e.type === 'population_step') {
      const now = process.cpuUsage();
      stepCpuMs.push((cpuS(now) - cpuS(last)) * 1000);
      stepHeapMb.push(Math.round(process.memoryUsage().heapUsed / 1e6));
      last = now;
      actions += e.actions.length;
      metrics = e.metrics;
    }
  }
  const result = await handle.result;
  const cpu = cpuS(process.cpuUsage(cpu0));
  if (result.status !== 'finished') throw new Error(`the bench run ended ${result.status}: ${result.error?.message ?? ''}`);
  const journalBytes = handle.dir ? statSync(join(handle.dir, 'journal.jsonl')).size : 0;
  process.stdout.write(
    JSON.stringify({
      cpu_s: cpu,
      agent_steps: social ? actions : n * steps,
      efficiency: metrics?.efficiency ?? null,
      step_cpu_ms: stepCpuMs,
      step_heap_mb: stepHeapMb,
      actions,
      journal_bytes: journalBytes,
      peak_rss_mb: Math.round(process.resourceUsage().maxRSS / 1024),
    }) + '\n',
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
