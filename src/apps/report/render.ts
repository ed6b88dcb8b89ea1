// The report's words (docs/validity.md#report): a table per target for the terminal, the same as
// DIR/report.md, and the rows of the `validity` table of the results database.
import type { TargetResult } from '../../features/validity/types.js';
import type { TableSpec } from '../sweep/sweep-db.js';

const n4 = (x: number | null | undefined): string =>
  x === null || x === undefined || !Number.isFinite(x) ? '-' : String(Number(x.toPrecision(4)));
const interval = (lo: number | null | undefined, hi: number | null | undefined) =>
  lo === null || lo === undefined ? '-' : `[${n4(lo)}, ${n4(hi)}]`;
const verdict = (r: TargetResult) => (r.pass === true ? 'met' : r.pass === false ? 'MISSED' : 'NOT MEASURED');

/** The rows of one target's table: [label, value]. */
export function targetRows(r: TargetResult): Array<[string, string]> {
  const rows: Array<[string, string]> = [
    ['source', r.source],
    ['measures', r.measure],
    [r.kind === 'effect' ? 'seeds' : 'runs', String(r.n)],
  ];
  if (r.kind === 'effect') {
    if (r.paired)
      rows.push(['paired difference', `${n4(r.paired.mean)} ${interval(r.paired.lo, r.paired.hi)} (95%, width ${n4(r.paired.width)})`]);
    if (r.independent)
      rows.push([
        r.paired ? 'unpaired (Welch), same runs' : 'difference (Welch)',
        `${n4(r.independent.mean)} ${interval(r.independent.lo, r.independent.hi)} (95%, width ${n4(r.independent.width)})`,
      ]);
    rows.push(['target', r.target]);
    rows.push(['interval covers target', r.covers === null ? '-' : r.covers ? 'yes' : 'no']);
    if (r.coverage !== null) rows.push(["seeds' own intervals covering it", `${n4(100 * r.coverage)}%`]);
    if (r.null_inflation !== null) rows.push(['null inflation', `${n4(100 * r.null_inflation)}% of seeds significant at 5% (expected 5%)`]);
  } else if (r.kind === 'value') {
    rows.push(['simulated', r.sim ? `${n4(r.sim.mean)} ${interval(r.sim.lo, r.sim.hi)} (mean, 95% interval; sd ${n4(r.sim.sd)})` : '-']);
    rows.push(['target', r.target]);
  } else {
    rows.push(['target', r.target]);
  }
  if (r.divergence) {
    const label = { abs_error: '|error|', js: 'Jensen-Shannon', ks: 'Kolmogorov-Smirnov', band: 'largest |error| / band' }[
      r.divergence.name
    ];
    rows.push([label, n4(r.divergence.value)]);
  }
  if (r.wasserstein !== null) rows.push(['Wasserstein-1', n4(r.wasserstein)]);
  if (r.kind === 'value' || r.kind === 'effect')
    rows.push([
      'variance ratio (sim sd / target sd)',
      r.variance_ratio === null
        ? '- (the target gives no sd)'
        : `${n4(r.variance_ratio)}${r.under_dispersed ? ' UNDER-DISPERSED (< 0.5)' : ''}`,
    ]);
  if (r.points) {
    const off = r.points.filter((p) => !p.within);
    rows.push([
      'points within the band',
      `${r.points.length - off.length} of ${r.points.length}${
        off.length
          ? ` (outside: ${off
              .slice(0, 5)
              .map((p) => `step ${p.step}: ${n4(p.mean)} vs ${n4(p.target)}`)
              .join('; ')}${off.length > 5 ? '; ...' : ''})`
          : ''
      }`,
    ]);
  }
  rows.push(['distance', n4(r.distance)]);
  if (r.note) rows.push(['note', r.note]);
  return rows;
}

/** The terminal's text: a table per target, then the tally. */
export function reportText(results: readonly TargetResult[], header: string): string {
  const lines = [header, ''];
  for (const r of results) {
    lines.push(`${r.name} (${r.kind}): ${verdict(r)}`);
    const rows = targetRows(r);
    const w = Math.max(...rows.map(([k]) => k.length));
    for (const [k, v] of rows) lines.push(`  ${k.padEnd(w)}  ${v}`);
    lines.push('');
  }
  lines.push(tally(results));
  return lines.join('\n') + '\n';
}

export function tally(results: readonly TargetResult[]): string {
  const met = results.filter((r) => r.pass === true).length;
  const missed = results.filter((r) => r.pass === false).map((r) => r.name);
  const unmeasured = results.filter((r) => r.pass === null).map((r) => r.name);
  return (
    `${results.length} target${results.length === 1 ? '' : 's'}: ${met} met` +
    `, ${missed.length} missed${missed.length ? ` (${missed.join(', ')})` : ''}` +
    `${unmeasured.length ? `, ${unmeasured.length} not measured (${unmeasured.join(', ')})` : ''}`
  );
}

const md = (s: string) => s.replace(/\|/g, '\\|').replace(/\s+/g, ' ');

/** DIR/report.md. */
export function reportMarkdown(results: readonly TargetResult[], title: string, about: readonly string[]): string {
  const lines = [`# Validity report: ${title}`, '', ...about.map((a) => `- ${a}`), '', tally(results) + '.', ''];
  for (const r of results) {
    lines.push(`## ${r.name} (${r.kind}): ${verdict(r)}`, '', '| | |', '|---|---|');
    for (const [k, v] of targetRows(r)) lines.push(`| ${md(k)} | ${md(v)} |`);
    if (r.points) {
      lines.push('', '| step | target | simulated mean | 95% interval | band | within |', '|---|---|---|---|---|---|');
      for (const p of r.points)
        lines.push(
          `| ${p.step} | ${n4(p.target)} | ${n4(p.mean)} | ${interval(p.lo, p.hi)} | ${n4(p.band)} | ${p.within ? 'yes' : 'no'} |`,
        );
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** The `validity` table: one row per target. */
export function validityTable(results: readonly TargetResult[]): TableSpec {
  return {
    name: 'validity',
    columns: [
      ['target', 'VARCHAR'],
      ['kind', 'VARCHAR'],
      ['source', 'VARCHAR'],
      ['measure', 'VARCHAR'],
      ['target_text', 'VARCHAR'],
      ['pass', 'BOOLEAN'],
      ['n', 'INTEGER'],
      ['mean', 'DOUBLE'],
      ['lo', 'DOUBLE'],
      ['hi', 'DOUBLE'],
      ['sd', 'DOUBLE'],
      ['divergence_name', 'VARCHAR'],
      ['divergence', 'DOUBLE'],
      ['wasserstein', 'DOUBLE'],
      ['variance_ratio', 'DOUBLE'],
      ['under_dispersed', 'BOOLEAN'],
      ['paired_mean', 'DOUBLE'],
      ['paired_lo', 'DOUBLE'],
      ['paired_hi', 'DOUBLE'],
      ['independent_mean', 'DOUBLE'],
      ['independent_lo', 'DOUBLE'],
      ['independent_hi', 'DOUBLE'],
      ['covers', 'BOOLEAN'],
      ['coverage', 'DOUBLE'],
      ['null_inflation', 'DOUBLE'],
      ['distance', 'DOUBLE'],
      ['note', 'VARCHAR'],
      ['result', 'JSON'],
    ],
    rows: results.map((r) => [
      r.name,
      r.kind,
      r.source,
      r.measure,
      r.target,
      r.pass,
      r.n,
      r.sim?.mean ?? null,
      r.sim?.lo ?? null,
      r.sim?.hi ?? null,
      r.sim?.sd ?? null,
      r.divergence?.name ?? null,
      finiteOrNull(r.divergence?.value),
      r.wasserstein,
      r.variance_ratio,
      r.under_dispersed,
      r.paired?.mean ?? null,
      r.paired?.lo ?? null,
      r.paired?.hi ?? null,
      r.independent?.mean ?? null,
      r.independent?.lo ?? null,
      r.independent?.hi ?? null,
      r.covers,
      r.coverage,
      r.null_inflation,
      finiteOrNull(r.distance),
      r.note,
      JSON.stringify(r, (_, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : v)),
    ]),
  };
}

const finiteOrNull = (x: number | undefined): number | null => (x !== undefined && Number.isFinite(x) ? x : null);
