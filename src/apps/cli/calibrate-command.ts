// sop calibrate FILE --budget N --out DIR: fit the SOP's `calibrate.parameters` to its targets by
// ABC-SMC (src/features/calibrate/), its runs made by the sweep engine in this process or on
// `sop worker` processes (--queue). The state is saved after every completed round, so the same
// command continues a calibration that was stopped or killed (docs/calibrate.md).
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, resolve, sep } from 'node:path';
import { checkInputNames } from '../../api/engine/run-with-features.js';
import { setProblem } from '../../format/sop/set-pointer.js';
import type { LlmProvider } from '../../core/llm/types.js';
import { queueSecret } from '../../shared/util/job-signature.js';
import { CalibrateError, parameterOf, type Parameter } from '../../features/calibrate/priors.js';
import {
  currentPopulation,
  defaultPopulation,
  runSmc,
  runsSpent,
  type Candidate,
  type SmcConfig,
  type SmcState,
} from '../../features/calibrate/smc.js';
import { fmt } from '../../features/calibrate/summary.js';
import { checkHumans, checkNumbers, checkOutFolder, checkPricing, checkSweepLlm } from '../sweep/preflight.js';
import { sharedProvider, sweepServer } from '../sweep/shared-provider.js';
import { sweepRunSettings, type SweepRunSettings } from '../sweep/run-point.js';
import { ResultsFile, isDone } from '../sweep/results.js';
import { calibrationTargets, forgetRuns, particleFit, type ParticleRun } from '../calibrate/measure.js';
import { candidatePoints, makeRunner } from '../calibrate/runs.js';
import { readSaved, stopText, summaries, writeReport, writeSaved, writeTables } from '../calibrate/outputs.js';
import { parseInputs } from './run-command.js';
import { openSweepSop } from './sweep-command.js';

export interface CalibrateCommandOptions extends SweepRunSettings {
  file: string;
  out: string;
  budget: number;
  seed?: number;
  population?: number;
  input: string[];
  json?: boolean;
  keepRuns?: boolean;
  concurrency?: number;
  threads?: number;
  queue?: string;
  attempts?: number;
  allowBaseUrl?: string[];
  allowBaseUrlEnv?: string[];
}

/** The calibration's parameters, each checked (a path is one a value can be set at). */
export function calibrationParameters(sop: import('../../format/sop/types.js').Sop): Parameter[] {
  if (!sop.calibrate)
    throw new CalibrateError(`${sop.name} has no "calibrate" block: name the parameters to fit and the targets (docs/calibrate.md)`);
  return Object.entries(sop.calibrate.parameters).map(([name, spec]) => {
    if (spec.path !== undefined) {
      const problem = setProblem(sop, spec.path);
      if (problem) throw new CalibrateError(`parameter "${name}": ${problem}`);
    }
    return parameterOf(name, spec as Parameters<typeof parameterOf>[1]);
  });
}

export async function calibrateCommand(given: CalibrateCommandOptions): Promise<number> {
  const { o, file, sop, err } = await openSweepSop(given, 'sop calibrate');
  if (!Number.isInteger(o.budget) || o.budget < 1) throw new CalibrateError('--budget must be a whole number of runs, at least 1');
  const seed = o.seed ?? 1;
  if (!Number.isSafeInteger(seed)) throw new CalibrateError('--seed must be a whole number');
  const params = calibrationParameters(sop);
  const targets = calibrationTargets(sop);
  const k = sop.calibrate!.seeds_per_particle ?? 1;
  const population = o.population ?? defaultPopulation(o.budget, k);
  if (!Number.isInteger(population) || population < 2)
    throw new CalibrateError('--population must be a whole number of particles, at least 2');
  const concurrency = o.concurrency ?? 8;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new CalibrateError('--concurrency must be a whole number of runs, at least 1');
  checkNumbers(o);
  const fixed = parseInputs(o.input);
  checkInputNames(sop, Object.keys(fixed));
  for (const p of params)
    if (p.input !== undefined && p.input in fixed)
      throw new CalibrateError(`--input ${p.input}: parameter "${p.name}" sets that input; leave it out`);
  checkHumans(sop, o.answers);
  checkPricing(o.pricing);
  if (o.queue !== undefined) (await import('../sweep/queue.js')).parseRedisUrl(o.queue);
  const secret = o.queue !== undefined ? queueSecret('sop calibrate --queue') : undefined;
  const { cliAllow, consent, llm } = await checkSweepLlm(sop, o);

  const out = resolve(o.out);
  checkOutFolder(out, o.out);
  mkdirSync(out, { recursive: true });
  const runsDir = join(out, 'runs');
  const cfg: SmcConfig = { parameters: params, populationSize: population, seedsPerParticle: k, budget: o.budget, seed };
  // what the runs depend on: a folder made with other settings is not continued with these
  const fingerprint = createHash('sha256')
    .update(JSON.stringify([readFileSync(file, 'utf8'), seed, population, Object.entries(fixed).sort(), o.llm ?? null, o.maxTurns ?? null]))
    .digest('hex');
  let state: SmcState = readSaved(out, fingerprint) ?? { rounds: [] };
  const results = new ResultsFile(out);
  err(
    `calibrate ${sop.name}: ${params.map((p) => p.name).join(', ')} against ${Object.keys(targets).join(', ')}; budget ${o.budget} runs, ` +
      `population ${population}, ${k} seed${k > 1 ? 's' : ''} per particle, seed ${seed}` +
      `${state.rounds.length ? `; continuing after round ${state.rounds[state.rounds.length - 1]!.round} (${runsSpent(state)} runs spent)` : ''}; ${out}\n`,
  );

  const stop = new AbortController();
  setMaxListeners(0, stop.signal);
  let interrupts = 0;
  const onSigint = () => {
    if (++interrupts > 1) process.exit(130);
    err('\nStopping: the runs in progress stop after their turn; run the same command again to continue from the last completed round.\n');
    stop.abort();
  };
  process.on('SIGINT', onSigint);
  const threads = o.threads ?? availableParallelism();
  const providers = new Map<string, LlmProvider>();
  const provider: LlmProvider | undefined =
    o.queue === undefined && llm
      ? await sharedProvider(providers, o.llm ?? sop.llm?.provider, sweepServer(sop, o.baseUrl, consent), o.timeoutMs)
      : undefined;
  const runner = await makeRunner({
    sop,
    file,
    runsDir,
    settings: sweepRunSettings(o),
    results,
    concurrency,
    threads,
    ...(provider ? { provider } : {}),
    allow: [...cliAllow, ...consent.approved],
    signal: stop.signal,
    ...(o.queue !== undefined ? { queue: { url: o.queue, secret: secret!, attempts: o.attempts ?? 3, onError: err } } : {}),
  });
  const keysOf = (c: Candidate) => candidatePoints(c, cfg, fixed).map((p) => p.key);
  const scored = new Map<string, ParticleRun>();
  const runOf = (key: string): ParticleRun => {
    const line = results.byKey.get(key);
    const run = { key, seed: line?.seed ?? 0, dir: line?.run_dir ?? join(runsDir, key) };
    scored.set(key, run);
    return run;
  };
  const fit = (keys: readonly string[]) => particleFit(keys.map(runOf), sop, file, targets);
  const t0 = Date.now();
  let final: SmcState;
  try {
    final = await runSmc(cfg, state, {
      signal: stop.signal,
      score: async (cands) => {
        const points = cands.flatMap((c) => candidatePoints(c, cfg, fixed));
        await runner.run(points);
        if (stop.signal.aborted) return cands.map(() => Infinity);
        const failed = points.filter((p) => !isDone(results.byKey.get(p.key)?.status ?? ''));
        if (failed.length === points.length) {
          const first = results.byKey.get(failed[0]!.key);
          throw new CalibrateError(
            `every run of the batch failed (${first?.status ?? 'not run'}: ${first?.error ?? 'no error recorded'}); nothing to fit`,
          );
        }
        return Promise.all(
          cands.map(async (c) => {
            const keys = keysOf(c);
            if (keys.some((key) => !isDone(results.byKey.get(key)?.status ?? ''))) return Infinity;
            return (await fit(keys)).distance;
          }),
        );
      },
      saved: (s) => {
        writeSaved(out, file, fingerprint, s);
        state = s;
        const r = s.rounds[s.rounds.length - 1]!;
        if (s.stopped) return;
        const pop = currentPopulation(s);
        const sums = summaries(params, s);
        err(
          `round ${r.round}: tolerance ${r.epsilon === null ? 'none' : fmt(r.epsilon)}, ${r.runs} runs, kept ${r.particles.length}` +
            `${r.discarded ? ' (too few: not used)' : ''} (${(100 * r.acceptance).toFixed(1)}%), ESS ${r.ess.toFixed(1)}; ` +
            `${params.map((p) => `${p.name} ${show(sums[p.name]?.median)} [${show(sums[p.name]?.lo90)}, ${show(sums[p.name]?.hi90)}]`).join(', ')}; ` +
            `${runsSpent(s)} of ${o.budget} runs, ${((Date.now() - t0) / 1000).toFixed(0)} s\n`,
        );
        if (!o.keepRuns && pop) pruneRuns(runsDir, results, new Set(pop.particles.flatMap(keysOf)));
        forgetRuns([...scored.values()]);
        scored.clear();
      },
    });
  } finally {
    process.off('SIGINT', onSigint);
    results.finish([...results.byKey.keys()], sop.name);
    await runner.close();
  }
  if (stop.signal.aborted) {
    err(`Stopped after ${runsSpent(state)} runs; run the same command again to continue from the last completed round.\n`);
    return 130;
  }
  const pop = currentPopulation(final);
  if (!pop) throw new CalibrateError('no population was kept: every run failed or the budget was too small');
  const bestParticle = pop.particles.reduce((a, b) => (b.distance < a.distance ? b : a));
  const bestKeys = keysOf(bestParticle);
  const runDirs = bestKeys.map((key) => results.byKey.get(key)?.run_dir ?? join(runsDir, key));
  const best = { particle: bestParticle, runDirs, results: (await fit(bestKeys)).results };
  await writeTables(out, params, final, keysOf);
  writeReport(out, { title: sop.name, file, params, state: final, budget: o.budget, seed, best });
  const sums = summaries(params, final);
  const runs = runsSpent(final);
  if (o.json) {
    process.stdout.write(JSON.stringify({ parameters: sums, runs }) + '\n');
  } else {
    const width = Math.max(...params.map((p) => p.name.length));
    for (const p of params) {
      const s = sums[p.name]!;
      process.stdout.write(
        `${p.name.padEnd(width)}  median ${show(s.median)}  90% interval ${show(s.lo90)} to ${show(s.hi90)}  (prior width ${fmt(s.prior_width)})\n`,
      );
    }
    process.stdout.write(`runs: ${runs}\n`);
  }
  err(`${stopText(final.stopped ?? '')}; ${runs} runs in ${((Date.now() - t0) / 1000).toFixed(0)} s; ${join(out, 'report.md')}\n`);
  return 0;
}

const show = (v: unknown): string => (typeof v === 'number' ? fmt(v) : v === undefined ? '-' : String(v));

/** Delete the folders of runs no longer in the population (their lines stay in results.jsonl). */
function pruneRuns(runsDir: string, results: ResultsFile, keep: ReadonlySet<string>): void {
  for (const [key, line] of results.byKey) {
    if (keep.has(key) || !isDone(line.status) || !line.run_dir) continue;
    const dir = resolve(line.run_dir);
    if (dir !== join(runsDir, key) || !dir.startsWith(runsDir + sep)) continue; // only our own folders
    rmSync(dir, { recursive: true, force: true });
  }
}
