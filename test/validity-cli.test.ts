// sop sweep and sop report against targets (docs/validity.md), with the built CLI and no API key:
// the zic-market acceptance (20 seeds, --check exits 0 and prints the efficiency's mean and
// interval beside Gode and Sunder's figure, checked against the t interval computed here from
// results.jsonl); a target moved far away makes --check exit 1 naming it; a paired experiment on
// common random numbers over 30 seeds gives an interval at most half as wide as the same arms on
// independent seeds; --verify names a data file edited after a sweep; a population file named by
// {{inputs.X}} varies with the sweep's input rows; sop validate names a target's mistake by pointer.
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import type { ResultLine } from '../src/apps/sweep/results.js';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';

const ROOT = join(import.meta.dirname, '..');
const ZIC = join(ROOT, 'examples/models/zic-market');
const ADOPTION = join(ROOT, 'test/fixtures/validity/adoption-arms.sop.json');
const tmp = mkdtempSync(join(tmpdir(), 'sop-validity-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

// no key anywhere: a rule-only SOP sweeps without one (as sop run)
const env: NodeJS.ProcessEnv = { ...process.env };
delete env.OPENAI_API_KEY;
delete env.OPENAI_BASE_URL;

async function sop(...args: string[]) {
  requireBuiltCli();
  const r = await spawnCliAsync(args, { encoding: 'utf8', timeout: 600_000, env, cwd: tmp });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const lines = (out: string): ResultLine[] =>
  readFileSync(join(out, 'results.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ResultLine);

// Student's t 97.5% quantiles from the published table (df 19, 29), for the intervals computed here
const T975: Record<number, number> = { 19: 2.093024, 29: 2.04523 };
function tInterval(xs: number[]): { mean: number; lo: number; hi: number } {
  const n = xs.length;
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const sd = Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1));
  const half = (T975[n - 1]! * sd) / Math.sqrt(n);
  return { mean, lo: mean - half, hi: mean + half };
}
function welchWidth(a: number[], b: number[]): number {
  const v = (xs: number[]) => {
    const m = xs.reduce((s, x) => s + x, 0) / xs.length;
    return xs.reduce((s, x) => s + (x - m) ** 2, 0) / (xs.length - 1) / xs.length;
  };
  // Welch-Satterthwaite degrees of freedom are at least min(n) - 1 = 29: t(0.975, df) <= t(0.975, 29)
  return 2 * T975[29]! * Math.sqrt(v(a) + v(b));
}
const fmt = (x: number) => String(Number(x.toPrecision(4)));

describe('sop report on the zic-market (acceptance)', () => {
  const out = join(tmp, 'zic');
  it('a 20-seed sweep with no key passes --check, with the mean and interval beside the figure of Gode and Sunder', async () => {
    const s = await sop('sweep', join(ZIC, 'zic-market.sop.json'), '--seeds', '1-20', '--out', out);
    expect(s.stderr).toContain('20 of 20 runs done, 0 failed');
    expect(s.code).toBe(0);
    const rs = lines(out);
    const eff = rs.map((r) => r.metrics?.trading?.efficiency);
    expect(eff.every((x) => typeof x === 'number')).toBe(true);
    const ci = tInterval(eff as number[]);

    const r = await sop('report', out, '--check');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('efficiency (value): met');
    expect(r.stdout).toContain('Gode and Sunder 1993');
    expect(r.stdout).toContain(`simulated                            ${fmt(ci.mean)} [${fmt(ci.lo)}, ${fmt(ci.hi)}]`);
    expect(r.stdout).toContain('0.98 +- 0.02');
    expect(ci.mean).toBeGreaterThan(0.96); // within the target's tolerance of 0.98
    // report.md, the summary's metric row and the databases' tables
    expect(readFileSync(join(out, 'report.md'), 'utf8')).toContain('## efficiency (value): met');
    expect(readFileSync(join(out, 'summary.md'), 'utf8')).toContain(
      `| trading | efficiency | 20 | ${fmt(ci.mean)} | ${fmt(ci.lo)} to ${fmt(ci.hi)} |`,
    );
    const db = await DuckDBInstance.create(join(out, 'sweep.duckdb'), { access_mode: 'READ_ONLY' });
    try {
      const c = await db.connect();
      const v = (await c.runAndReadAll(`SELECT target, pass, mean FROM validity`)).getRowsJS();
      expect(v).toEqual([['efficiency', true, expect.closeTo(ci.mean, 12)]]);
      const m = (await c.runAndReadAll(`SELECT count(*) FROM sweep_metrics WHERE name = 'efficiency'`)).getRowsJS();
      expect(Number(m[0]![0])).toBe(20);
      c.closeSync();
    } finally {
      db.closeSync();
    }
  }, 900_000);

  it('a target moved far from the result makes --check exit 1, naming it', async () => {
    const dir = join(tmp, 'zic-moved');
    cpSync(ZIC, dir, { recursive: true });
    const file = join(dir, 'zic-market.sop.json');
    const moved = join(tmp, 'zic-moved-out');
    const s = await sop('sweep', file, '--seeds', '1-3', '--out', moved);
    expect(s.code).toBe(0);
    expect((await sop('report', moved, '--check')).code).toBe(0);
    writeFileSync(file, readFileSync(file, 'utf8').replace('"value": 0.98', '"value": 0.5'));
    const r = await sop('report', moved, '--check');
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('efficiency (value): MISSED');
    expect(r.stderr).toContain('check: target "efficiency" missed: 0.5 +- 0.02');
  }, 900_000);
});

describe('paired experiments on common random numbers', () => {
  it('over 30 seeds, the paired interval is at most half as wide as on independent seeds; sop report prints both', async () => {
    const paired = join(tmp, 'paired');
    const independent = join(tmp, 'independent');
    expect((await sop('sweep', ADOPTION, '--seeds', '1-30', '--out', paired)).code).toBe(0);
    expect((await sop('sweep', ADOPTION, '--seeds', '1-30', '--independent', '--out', independent)).code).toBe(0);
    const byArm = (out: string, arm: string) =>
      lines(out)
        .filter((r) => r.arm === arm)
        .sort((a, b) => a.seed - b.seed)
        .map((r) => r.metrics!.spread!.adopters!);
    // the keys carry the arm; independent arms ran on seeds hashed with the arm's name
    expect(lines(paired).map((r) => r.key)).toContainEqual(expect.stringMatching(/^s3-atreated-/));
    expect(lines(paired).every((r) => r.run_seed === undefined)).toBe(true);
    expect(lines(independent).every((r) => r.run_seed !== undefined && r.run_seed !== r.seed)).toBe(true);
    // widths computed here: the paired t interval of the seed-by-seed differences, Welch's of the independent arms (a bound)
    const pt = byArm(paired, 'treated');
    const pc = byArm(paired, 'control');
    const d = pt.map((x, i) => x - pc[i]!);
    const p = tInterval(d);
    const pairedWidth = p.hi - p.lo;
    const independentWidth = welchWidth(byArm(independent, 'treated'), byArm(independent, 'control'));
    expect(pairedWidth).toBeLessThanOrEqual(0.5 * independentWidth);

    const rp = await sop('report', paired, '--check');
    expect(rp.code).toBe(0);
    expect(rp.stdout).toContain('arms control, treated on common random numbers');
    expect(rp.stdout).toContain(
      `paired difference                    ${fmt(p.mean)} [${fmt(p.lo)}, ${fmt(p.hi)}] (95%, width ${fmt(pairedWidth)})`,
    );
    expect(rp.stdout).toMatch(/unpaired \(Welch\), same runs +[-\d.]+ \[[-\d.]+, [-\d.]+\] \(95%, width [\d.]+\)/);
    const ri = await sop('report', independent, '--json');
    expect(ri.code).toBe(0);
    const effect = (
      JSON.parse(ri.stdout) as { results: Array<{ name: string; paired: unknown; independent: { width: number } }> }
    ).results.find((x) => x.name === 'adoption_effect')!;
    expect(effect.paired).toBeNull();
    expect(effect.independent.width).toBeLessThanOrEqual(independentWidth + 1e-9);
    expect(pairedWidth).toBeLessThanOrEqual(0.5 * effect.independent.width);
  }, 900_000);
});

describe('provenance', () => {
  it('sop report --verify names a data file edited after the sweep', async () => {
    const dir = join(tmp, 'zic-verify');
    cpSync(ZIC, dir, { recursive: true });
    const out = join(tmp, 'zic-verify-out');
    expect((await sop('sweep', join(dir, 'zic-market.sop.json'), '--seeds', '1-2', '--out', out)).code).toBe(0);
    const prov = JSON.parse(readFileSync(join(out, 'provenance.json'), 'utf8')) as {
      files: Array<{ path: string; sha256: string }>;
      seeds: number[];
      runs: unknown[];
      merkle_root: string;
    };
    expect(prov.seeds).toEqual([1, 2]);
    expect(prov.runs).toHaveLength(2);
    const { createHash } = await import('node:crypto');
    const traders = join(dir, 'traders.csv');
    expect(prov.files).toContainEqual(
      expect.objectContaining({ path: traders, sha256: createHash('sha256').update(readFileSync(traders)).digest('hex') }),
    );
    const ok = await sop('report', out, '--verify');
    expect(ok.code).toBe(0);
    expect(ok.stderr).toContain('verify: unchanged');
    writeFileSync(traders, readFileSync(traders, 'utf8').replace('b0,buyer,139;92,', 'b0,buyer,140;92,'));
    const bad = await sop('report', out, '--verify');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`changed: population file (/states/trading/population/source/file) ${traders}: changed`);
  }, 900_000);
});

describe('sweeps as data', () => {
  it('a population file named by {{inputs.X}} follows each input row', async () => {
    const dir = join(tmp, 'zic-data');
    cpSync(ZIC, dir, { recursive: true });
    const file = join(dir, 'zic-market.sop.json');
    const doc = JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
    doc.inputs = { traders: { default: 'traders.csv' } };
    doc.states.trading.population.source.file = '{{inputs.traders}}';
    writeFileSync(file, JSON.stringify(doc));
    // half the traders: the first 20 buyers and the first 20 sellers
    const rows = readFileSync(join(dir, 'traders.csv'), 'utf8').trim().split('\n');
    const half = [rows[0], ...rows.slice(1).filter((l) => /^[bs]([0-9]|1[0-9]),/.test(l))];
    writeFileSync(join(dir, 'half.csv'), half.join('\n') + '\n');
    writeFileSync(join(dir, 'rows.jsonl'), '{"traders": "traders.csv"}\n{"traders": "half.csv"}\n');
    const out = join(tmp, 'zic-data-out');
    const s = await sop('sweep', file, '--inputs', join(dir, 'rows.jsonl'), '--out', out);
    expect(s.code).toBe(0);
    const [all, part] = lines(out);
    expect(all!.metrics!.trading!.max_surplus).toBeGreaterThan(part!.metrics!.trading!.max_surplus!);
    const prov = JSON.parse(readFileSync(join(part!.run_dir!, 'provenance.json'), 'utf8')) as { files: Array<{ path: string }> };
    expect(prov.files.map((f) => f.path)).toEqual([join(dir, 'half.csv')]);
  }, 900_000);

  it('sop validate names a target mistake by its pointer', async () => {
    const file = join(tmp, 'bad-target.sop.json');
    const doc = JSON.parse(readFileSync(join(ZIC, 'zic-market.sop.json'), 'utf8')) as Record<string, any>;
    doc.states.trading.population.source.file = join(ZIC, 'traders.csv');
    doc.targets = { efficiency: { source: 's', metric: 'efficiency', value: 0.98 } };
    writeFileSync(file, JSON.stringify(doc, null, 2));
    const r = await sop('validate', file);
    expect(r.code).toBe(1);
    expect(r.stderr + r.stdout).toContain(
      '/targets/efficiency: value target "efficiency" needs "tolerance" or "interval" to say what passes',
    );
  }, 300_000);
});
