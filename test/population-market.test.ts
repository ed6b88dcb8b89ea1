// The market example (examples/market): 200 zero-intelligence-constrained rule traders (Gode and
// Sunder 1993) in a continuous double auction reach an allocative efficiency near the published
// figure for ZI-C (about 99%); the mean over 20 run seeds must be at least 0.95.
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, type RunEvent } from '../src/index.js';

describe('examples/market: ZI-C rule traders through a population state', () => {
  it('reach a mean allocative efficiency of at least 0.95 over 20 seeds, with no LLM call', async () => {
    const sop = loadSop('examples/market/market.sop.json');
    const effs: number[] = [];
    for (let seed = 1; seed <= 20; seed++) {
      let last: Extract<RunEvent, { type: 'population_step' }> | undefined;
      let calls = 0;
      const handle = runSop(sop, { seed });
      for await (const e of handle) {
        if (e.type === 'population_step') last = e;
        if (e.type === 'llm_call') calls++;
      }
      const result = await handle.result;
      expect(result.status).toBe('finished');
      expect(calls).toBe(0);
      expect(last!.step).toBe(100);
      effs.push(last!.metrics.efficiency!);
    }
    const mean = effs.reduce((a, b) => a + b, 0) / effs.length;
    console.log(
      `examples/market: ZI-C allocative efficiency over 20 seeds: mean ${mean.toFixed(4)} (min ${Math.min(...effs).toFixed(3)}, max ${Math.max(...effs).toFixed(3)})`,
    );
    expect(mean).toBeGreaterThanOrEqual(0.95);
  });
});
