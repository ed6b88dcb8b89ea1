// What a calibration writes into its folder (docs/calibrate.md#what-it-writes): the saved state
// (calibration.json, after every completed round), the posterior as a table of DuckDB
// (calibration.duckdb: tables posterior and rounds) and as Parquet (posterior.parquet), one row
// per particle with its weight, a histogram of each parameter (hist-NAME.svg), and report.md.
import { DuckDBInstance } from '@duckdb/node-api';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';
import { CalibrateError, type Parameter } from '../../features/calibrate/priors.js';
import { currentPopulation, runsSpent, type Particle, type SmcState } from '../../features/calibrate/smc.js';
import { fmt, histogram, summarise, svgHistogram, textHistogram, type ParameterSummary } from '../../features/calibrate/summary.js';
import type { TargetResult } from '../../features/validity/index.js';

export const STATE_FILE = 'calibration.json';
export const DB_FILE = 'calibration.duckdb';
export const PARQUET_FILE = 'posterior.parquet';
export const REPORT_FILE = 'report.md';

export interface SavedCalibration {
  v: 1;
  /** The SOP file, and a hash of what a calibration's runs depend on (the SOP's text, the seed, the population, the inputs). */
  file: string;
  fingerprint: string;
  state: SmcState;
}

/** The saved calibration of a folder (undefined: none yet); a file of another calibration is refused. */
export function readSaved(dir: string, fingerprint: string): SmcState | undefined {
  const file = join(dir, STATE_FILE);
  if (!existsSync(file)) return undefined;
  let saved: SavedCalibration;
  try {
    saved = JSON.parse(readFileSync(file, 'utf8')) as SavedCalibration;
  } catch (err) {
    throw new CalibrateError(`${file}: not a saved calibration (${(err as Error).message.split('\n')[0]}); give another --out`);
  }
  if (saved.v !== 1 || !Array.isArray(saved.state?.rounds))
    throw new CalibrateError(`${file}: not a saved calibration; give another --out`);
  if (saved.fingerprint !== fingerprint)
    throw new CalibrateError(
      `${file} holds a calibration of another SOP, seed, --population or inputs than this one; give another --out (or the same settings to continue it)`,
    );
  // a calibration stopped by its budget continues with a larger one: the stop is judged again
  const { stopped: _, ...state } = saved.state;
  return state;
}

export function writeSaved(dir: string, file: string, fingerprint: string, state: SmcState): void {
  writeFileAtomic(join(dir, STATE_FILE), JSON.stringify({ v: 1, file, fingerprint, state } satisfies SavedCalibration) + '\n');
}

const ident = (name: string): string => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;
const sqlValue = (v: unknown): string =>
  v === null || v === undefined
    ? 'NULL'
    : typeof v === 'number'
      ? Number.isFinite(v)
        ? String(v)
        : 'NULL'
      : typeof v === 'boolean'
        ? String(v)
        : literal(String(v));

/** The posterior (and each round) as DuckDB tables, and the posterior as Parquet; each file replaced whole. */
export async function writeTables(
  dir: string,
  params: readonly Parameter[],
  state: SmcState,
  keysOf: (p: Particle) => string[],
): Promise<void> {
  const pop = currentPopulation(state);
  const tmp = join(dir, `.${DB_FILE}.${randomBytes(6).toString('hex')}.tmp`);
  const parquetTmp = join(dir, `.${PARQUET_FILE}.${randomBytes(6).toString('hex')}.tmp`);
  const db = await DuckDBInstance.create(tmp, { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' });
  const c = await db.connect();
  try {
    const colType = (p: Parameter) =>
      p.kind === 'continuous' || p.values.every((v) => typeof v === 'number')
        ? 'DOUBLE'
        : p.values.every((v) => typeof v === 'boolean')
          ? 'BOOLEAN'
          : 'VARCHAR';
    await c.run(
      `CREATE TABLE posterior (round INTEGER, particle INTEGER, weight DOUBLE, distance DOUBLE, ${params.map((p) => `${ident(p.name)} ${colType(p)}`).join(', ')}, seeds BIGINT[], runs VARCHAR[])`,
    );
    const rows = (pop?.particles ?? []).map(
      (p) =>
        `(${[p.round, p.index, p.weight, p.distance, ...params.map((x) => p.values[x.name])].map(sqlValue).join(', ')}, ` +
        `[${p.seeds.join(', ')}]::BIGINT[], [${keysOf(p).map(literal).join(', ')}]::VARCHAR[])`,
    );
    for (let i = 0; i < rows.length; i += 500) await c.run(`INSERT INTO posterior VALUES ${rows.slice(i, i + 500).join(', ')}`);
    await c.run(
      'CREATE TABLE rounds (round INTEGER, epsilon DOUBLE, proposed INTEGER, runs INTEGER, kept INTEGER, acceptance DOUBLE, ess DOUBLE, discarded BOOLEAN)',
    );
    if (state.rounds.length > 0)
      await c.run(
        `INSERT INTO rounds VALUES ${state.rounds
          .map(
            (r) =>
              `(${[r.round, r.epsilon, r.proposed, r.runs, r.particles.length, r.acceptance, r.ess, r.discarded === true].map(sqlValue).join(', ')})`,
          )
          .join(', ')}`,
      );
    await c.run(`COPY posterior TO ${literal(parquetTmp)} (FORMAT parquet)`);
  } catch (err) {
    rmSync(tmp, { force: true });
    rmSync(parquetTmp, { force: true });
    throw new CalibrateError(`${join(dir, DB_FILE)}: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    c.closeSync();
    db.closeSync();
  }
  rmSync(`${tmp}.wal`, { force: true });
  renameSync(tmp, join(dir, DB_FILE));
  renameSync(parquetTmp, join(dir, PARQUET_FILE));
}

/** Each parameter's posterior summary (the --json figures). */
export function summaries(params: readonly Parameter[], state: SmcState): Record<string, ParameterSummary> {
  const pop = currentPopulation(state);
  if (!pop) return {};
  return Object.fromEntries(params.map((p) => [p.name, summarise(p, pop.particles)]));
}

const show = (v: unknown): string => (typeof v === 'number' ? fmt(v) : String(v));

export interface ReportFacts {
  title: string;
  file: string;
  params: readonly Parameter[];
  state: SmcState;
  budget: number;
  seed: number;
  /** The best-fitting particle, its run folders, and how its runs compare with each target. */
  best?: { particle: Particle; runDirs: string[]; results: TargetResult[] };
}

/** Where each parameter goes, in words. */
const place = (p: Parameter) => (p.input !== undefined ? `input \`${p.input}\`` : `\`${p.path}\``);

function priorText(p: Parameter): string {
  if (p.kind === 'discrete') return `values ${p.values.map(show).join(', ')}`;
  return `${p.prior} [${fmt(p.range[0])}, ${fmt(p.range[1])}]${p.prior === 'normal' && !Number.isFinite(p.lo) ? ' (its 90% interval)' : ''}`;
}

/** report.md, and a histogram SVG per parameter beside it. */
export function writeReport(dir: string, f: ReportFacts): void {
  const pop = currentPopulation(f.state);
  const lines = [`# Calibration: ${f.title}`, '', `SOP: \`${f.file}\`. Method: ABC-SMC. Seed ${f.seed}.`, ''];
  lines.push(
    `Runs spent: **${runsSpent(f.state)}** of a budget of ${f.budget}, over ${f.state.rounds.length} round${f.state.rounds.length === 1 ? '' : 's'}` +
      (f.state.stopped ? ` (stopped: ${stopText(f.state.stopped)}).` : ' (not finished: run the same command again to continue).'),
    '',
  );
  if (!pop) {
    lines.push('No population yet.', '');
    writeFileAtomic(join(dir, REPORT_FILE), lines.join('\n'));
    return;
  }
  lines.push(
    `## Posterior (round ${pop.round}: ${pop.particles.length} particles, effective sample size ${pop.ess.toFixed(1)}, tolerance ${pop.epsilon === null ? 'none' : fmt(pop.epsilon)})`,
    '',
    '| parameter | sets | prior | median | 90% interval | interval / prior width |',
    '|---|---|---|---|---|---|',
  );
  for (const p of f.params) {
    const s = summarise(p, pop.particles);
    const ratio =
      typeof s.lo90 === 'number' && typeof s.hi90 === 'number' && s.prior_width > 0 ? fmt((s.hi90 - s.lo90) / s.prior_width) : '-';
    lines.push(`| ${p.name} | ${place(p)} | ${priorText(p)} | ${show(s.median)} | ${show(s.lo90)} to ${show(s.hi90)} | ${ratio} |`);
  }
  for (const p of f.params) {
    const h = histogram(p, pop.particles);
    const svg = `hist-${p.name.replace(/[^A-Za-z0-9_.-]/g, '_')}.svg`;
    writeFileAtomic(join(dir, svg), svgHistogram(p.name, h, summarise(p, pop.particles)));
    lines.push('', `### ${p.name}`, '', `![${p.name}](${svg})`, '', '```', ...textHistogram(h), '```');
  }
  lines.push(
    '',
    '## Rounds',
    '',
    '| round | tolerance | proposed | runs | kept | acceptance | ESS |',
    '|---|---|---|---|---|---|---|',
    ...f.state.rounds.map(
      (r) =>
        `| ${r.round} | ${r.epsilon === null ? '-' : fmt(r.epsilon)} | ${r.proposed} | ${r.runs} | ${r.particles.length}${r.discarded ? ' (too few: not used)' : ''} | ${(100 * r.acceptance).toFixed(1)}% | ${r.ess.toFixed(1)} |`,
    ),
  );
  if (f.best) {
    const b = f.best;
    lines.push(
      '',
      '## Best-fitting particle',
      '',
      `Distance ${fmt(b.particle.distance)} (round ${b.particle.round}, proposal ${b.particle.index}): ${f.params.map((p) => `${p.name}=${show(b.particle.values[p.name])}`).join(', ')}.`,
      `Runs: ${b.runDirs.map((d) => `\`${d}\``).join(', ')}.`,
      '',
      '| target | measures | target figure | simulated | distance | passes |',
      '|---|---|---|---|---|---|',
      ...b.results.map(
        (r) =>
          `| ${r.name} | ${r.measure} | ${r.target} | ${r.sim ? fmt(r.sim.mean) : r.points ? `${r.points.filter((p) => p.within).length} of ${r.points.length} points within the band` : '-'} | ${fmt(r.distance)} | ${r.pass === null ? 'not evaluated' : r.pass ? 'yes' : 'no'} |`,
      ),
    );
    for (const r of b.results.filter((x) => x.points)) {
      lines.push('', `### ${r.name} (curve)`, '', '| step | target | simulated | band | within |', '|---|---|---|---|---|');
      for (const p of r.points!)
        lines.push(
          `| ${p.step} | ${fmt(p.target)} | ${p.mean === null ? '-' : fmt(p.mean)} | ${fmt(p.band)} | ${p.within ? 'yes' : 'no'} |`,
        );
    }
  }
  lines.push(
    '',
    `Files: \`${DB_FILE}\` (tables posterior and rounds), \`${PARQUET_FILE}\`, \`${STATE_FILE}\`, \`results.jsonl\`, \`runs/\`.`,
    '',
  );
  writeFileAtomic(join(dir, REPORT_FILE), lines.join('\n'));
}

export function stopText(reason: string): string {
  return reason === 'budget'
    ? 'the budget of runs is spent'
    : reason === 'acceptance'
      ? 'a round kept fewer than 1% of its proposals'
      : reason === 'converged'
        ? 'every particle fits as well as the tolerance allows'
        : reason;
}
