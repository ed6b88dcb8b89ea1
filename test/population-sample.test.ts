// The generator (declared marginals, seeded) and sampling (reservoir, stratified): the same seed
// gives the same rows, shares are met exactly within the documented rounding, and sampling 1,000
// of a 100k-row file holds only what it keeps.
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { generateRows } from '../src/features/population/generate.js';
import { loadPopulation } from '../src/features/population/population.js';
import { sampleN, sampleStratified, stratumCounts } from '../src/features/population/sample.js';
import type { GenerateSpec, PopulationSpec } from '../src/features/population/types.js';

// A real collection before each figure: the flag lets a fresh context reach gc().
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapAfterGc = () => {
  gc();
  return process.memoryUsage().heapUsed;
};

const dir = mkdtempSync(join(tmpdir(), 'pop-sample-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SPEC: GenerateSpec = {
  n: 20_000,
  seed: 7,
  columns: {
    age: { normal: { mean: 40, sd: 12, min: 18, max: 90, round: true } },
    party: { categorical: { left: 0.45, right: 0.55 } },
    interest: { categorical: { sports: 0.3, politics: 0.3, music: 0.4 } },
    followers: { uniform: { min: 0, max: 500, round: true } },
    score: { uniform: { min: -1, max: 1 } },
  },
};

const rowsOf = (spec: GenerateSpec) => [...generateRows(spec)].map((r) => r.row);

describe('generator', () => {
  it('gives the same rows for the same seed, other rows for another', () => {
    const a = rowsOf({ ...SPEC, n: 500 });
    expect(rowsOf({ ...SPEC, n: 500 })).toEqual(a);
    const b = rowsOf({ ...SPEC, n: 500, seed: 8 });
    expect(b.map((r) => r.age)).not.toEqual(a.map((r) => r.age));
    expect(a[0]!.id).toBe('a0');
    expect(a[499]!.id).toBe('a499');
  });

  it('keeps a column when others are added, and a smaller n is a prefix', () => {
    const a = rowsOf({ ...SPEC, n: 300 });
    const wider = rowsOf({ ...SPEC, n: 600, columns: { extra: { choice: ['x', 'y'] }, ...SPEC.columns } });
    expect(wider.slice(0, 300).map((r) => [r.age, r.party, r.followers])).toEqual(a.map((r) => [r.age, r.party, r.followers]));
  });

  it('draws each marginal as declared', () => {
    const rows = rowsOf(SPEC);
    const share = (col: string, v: string) => rows.filter((r) => r[col] === v).length / rows.length;
    expect(share('party', 'left')).toBeCloseTo(0.45, 1);
    expect(share('interest', 'music')).toBeCloseTo(0.4, 1);
    const ages = rows.map((r) => r.age as number);
    expect(ages.every((a) => Number.isInteger(a) && a >= 18 && a <= 90)).toBe(true);
    const mean = ages.reduce((x, y) => x + y, 0) / ages.length;
    expect(mean).toBeGreaterThan(39);
    expect(mean).toBeLessThan(42); // cut at 18 raises the mean a little
    const f = rows.map((r) => r.followers as number);
    expect(Math.min(...f)).toBe(0);
    expect(Math.max(...f)).toBe(500);
    expect(f.every(Number.isInteger)).toBe(true);
    const s = rows.map((r) => r.score as number);
    expect(s.every((x) => x >= -1 && x < 1 && !Number.isInteger(x))).toBe(true);
  });

  it('refuses a normal cut to a range it almost never reaches', () => {
    expect(() => rowsOf({ n: 1, seed: 1, columns: { x: { normal: { mean: 0, sd: 1, min: 8 } } } })).toThrow(
      'column "x": the range from 8 up holds less than 0.1% of a normal of mean 0 and sd 1',
    );
  });
});

describe('sampling', () => {
  const items = Array.from({ length: 10_000 }, (_, i) => i);

  it('draws n in source order, the same for the same seed', async () => {
    const a = await sampleN(items, 100, 3);
    expect(a.rows).toHaveLength(100);
    expect(a.seen).toBe(10_000);
    expect([...a.rows].sort((x, y) => x - y)).toEqual(a.rows);
    expect(new Set(a.rows).size).toBe(100);
    expect((await sampleN(items, 100, 3)).rows).toEqual(a.rows);
    expect((await sampleN(items, 100, 4)).rows).not.toEqual(a.rows);
    await expect(sampleN(items.slice(0, 50), 100, 3)).rejects.toThrow('the source has 50 rows, fewer than the 100 asked for');
  });

  it('is uniform: each item is kept about n/N of the time', async () => {
    const counts = new Array<number>(10).fill(0);
    for (let seed = 0; seed < 2000; seed++) for (const i of (await sampleN(items.slice(0, 10), 3, seed)).rows) counts[i]!++;
    for (const c of counts) expect(c / 2000).toBeCloseTo(0.3, 1);
  });

  it('rounds shares by largest remainder, ties to the key that sorts first', () => {
    expect([...stratumCounts({ a: 1 / 3, b: 1 / 3, c: 1 / 3 }, 10)]).toEqual([
      ['a', 4],
      ['b', 3],
      ['c', 3],
    ]);
    expect(Object.fromEntries(stratumCounts({ x: 0.45, y: 0.55 }, 11))).toEqual({ x: 5, y: 6 });
    expect(Object.fromEntries(stratumCounts({ z: 0.5, y: 0.25, x: 0.25 }, 6))).toEqual({ x: 2, y: 1, z: 3 });
    for (let n = 1; n < 60; n++) expect([...stratumCounts({ p: 0.17, q: 0.29, r: 0.54 }, n).values()].reduce((a, b) => a + b)).toBe(n);
  });

  it('meets target shares exactly, per stratum, and refuses a stratum with too few rows', async () => {
    const rows = rowsOf(SPEC);
    const key = (r: (typeof rows)[number]) => `${r.party}|${r.interest}`;
    const shares = { 'left|music': 0.25, 'right|music': 0.25, 'left|sports': 0.2, 'right|politics': 0.3 };
    const { rows: kept } = await sampleStratified(rows, { key, shares, n: 333, seed: 5 });
    const got: Record<string, number> = {};
    for (const r of kept) got[key(r)] = (got[key(r)] ?? 0) + 1;
    expect(got).toEqual(Object.fromEntries(stratumCounts(shares, 333)));
    expect(got).toEqual({ 'left|music': 83, 'right|music': 83, 'left|sports': 67, 'right|politics': 100 });
    const again = await sampleStratified(rows, { key, shares, n: 333, seed: 5 });
    expect(again.rows).toEqual(kept);
    await expect(sampleStratified(rows.slice(0, 100), { key, shares, n: 333, seed: 5 })).rejects.toThrow(
      /^stratum "left\|music" has \d+ rows, fewer than the 83 its share 0.25 of 333 asks for$/,
    );
  });

  /** A CSV of `rows` people, each row a few hundred bytes, written in blocks of 1,000 rows. */
  async function peopleCsv(name: string, rows: number): Promise<string> {
    const file = join(dir, name);
    const out = createWriteStream(file);
    out.write('id,name,age,party,bio\n');
    const bio = 'a synthetic biography that makes each row a few hundred bytes long; '.repeat(5);
    for (let start = 0; start < rows; start += 1000) {
      let block = '';
      for (let i = start; i < Math.min(rows, start + 1000); i++)
        block += `p${i},Name${i % 97},${18 + (i % 70)},${i % 3 ? 'left' : 'right'},"${bio}${i}"\n`;
      if (!out.write(block)) await new Promise<void>((r) => out.once('drain', () => r()));
    }
    await new Promise<void>((r) => out.end(() => r()));
    return file;
  }

  it('samples a CSV the same for the same seed, other rows for another', async () => {
    await peopleCsv('mid.csv', 5000);
    const spec = (seed: number): PopulationSpec => ({ source: { file: 'mid.csv' }, persona: '{{name}}', sample: { n: 200, seed } });
    const a = await loadPopulation(spec(11), { baseDir: dir });
    const again = await loadPopulation(spec(11), { baseDir: dir });
    expect(a.size).toBe(200);
    expect(a.sourceRows).toBe(5000);
    expect(again.ids).toEqual(a.ids);
    expect(again.row(199)).toEqual(a.row(199));
    expect((await loadPopulation(spec(12), { baseDir: dir })).ids).not.toEqual(a.ids);
  });

  it('samples 1,000 of a 100k-row CSV holding little memory', async () => {
    const file = await peopleCsv('big.csv', 100_000);
    const spec: PopulationSpec = { source: { file: 'big.csv' }, persona: '{{name}} ({{party}})', sample: { n: 1000, seed: 11 } };

    const retainedBase = heapAfterGc();
    const base = process.memoryUsage();
    let peakHeap = base.heapUsed;
    let peakRss = base.rss;
    const probe = () => {
      const m = process.memoryUsage();
      peakHeap = Math.max(peakHeap, m.heapUsed);
      peakRss = Math.max(peakRss, m.rss);
    };
    const timer = setInterval(probe, 5);
    const started = Date.now();
    const pop = await loadPopulation(spec, { baseDir: dir });
    clearInterval(timer);
    probe();
    const heapMb = (peakHeap - base.heapUsed) / 2 ** 20;
    const rssMb = (peakRss - base.rss) / 2 ** 20;
    const retainedMb = (heapAfterGc() - retainedBase) / 2 ** 20;
    console.log(
      `sampled 1,000 of 100,000 rows (${(statSync(file).size / 2 ** 20).toFixed(1)} MiB file) in ${Date.now() - started} ms: ` +
        `peak heap +${heapMb.toFixed(1)} MiB, peak RSS +${rssMb.toFixed(1)} MiB, kept +${retainedMb.toFixed(1)} MiB`,
    );
    expect(pop.size).toBe(1000);
    expect(pop.sourceRows).toBe(100_000);
    // Holding every row of the file (~35 MiB of text) would keep ~90 MiB; the 1,000 rows kept
    // take well under 1 MiB. The peak counts garbage not yet collected, hence its wide bound.
    expect(retainedMb).toBeLessThan(8);
    expect(heapMb).toBeLessThan(100);
    expect(rssMb).toBeLessThan(200);
    expect(new Set(pop.ids).size).toBe(1000);
  }, 60_000);

  it('keeps 100k generated agents compactly, and fast', async () => {
    const spec: PopulationSpec = { source: { generate: { ...SPEC, n: 100_000 } }, persona: '{{party}} {{interest}}' };
    const base = heapAfterGc();
    const started = Date.now();
    const pop = await loadPopulation(spec, { baseDir: dir });
    const ms = Date.now() - started;
    const heapMb = (heapAfterGc() - base) / 2 ** 20;
    console.log(`100,000 generated agents of ${pop.columns.length} columns: ${ms} ms, kept +${heapMb.toFixed(1)} MiB of heap`);
    expect(pop.size).toBe(100_000);
    expect(pop.archetypes()).toHaveLength(6);
    expect(heapMb).toBeLessThan(64);
  }, 60_000);
});
