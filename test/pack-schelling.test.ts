// The Schelling replication pack (issue 33): mild preferences (at least 3 of 8 like neighbours)
// give strong segregation. The baseline the target is measured against, the share of like
// neighbours when residents are placed at random, is computed here from residents.csv; then the
// pack's sweep passes `sop report --check`.
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from './helpers/cli.js';
import { MODELS_DIR, packTargets, sweepAndReport } from './helpers/pack.js';

/** The expected share of like neighbours under random placement: sum over colours of (n_c / N) (n_c - 1) / (N - 1). */
function randomBaseline(): number {
  const colours = readFileSync(`${MODELS_DIR}/schelling/residents.csv`, 'utf8')
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => l.split(',')[1]!.trim());
  const n = colours.length;
  const counts = new Map<string, number>();
  for (const c of colours) counts.set(c, (counts.get(c) ?? 0) + 1);
  return [...counts.values()].reduce((s, k) => s + (k / n) * ((k - 1) / (n - 1)), 0);
}

beforeAll(() => requireBuiltCli());

describe('the Schelling pack', () => {
  it('asks for an end state at least half again as segregated as random placement, and above the wanted share', () => {
    const base = randomBaseline();
    expect(base).toBeCloseTo(0.502, 3);
    const t = packTargets('schelling');
    const [lo, hi] = t.segregation!.interval as [number, number];
    expect(lo).toBeGreaterThanOrEqual(1.5 * base - 0.005);
    // and twice what the residents ask for (0.375): segregation far beyond the preference
    expect(lo).toBeGreaterThanOrEqual(2 * 0.375);
    expect(hi).toBeLessThan(1);
    expect(String(t.segregation!.source)).toContain('0.502');
  });

  it('passes sop report --check after a sweep over 5 seeds', async () => {
    const r = await sweepAndReport('schelling', '1-5');
    expect(r.sweep.status, r.sweep.stderr).toBe(0);
    expect(r.report.status, r.report.stdout + r.report.stderr).toBe(0);
    expect(r.report.stdout).toContain('segregation');
    expect(r.report.stdout).toContain('settles');
  }, 120_000);
});
