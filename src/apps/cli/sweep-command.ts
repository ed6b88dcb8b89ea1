// sop sweep FILE: run a SOP over a grid (seeds × input rows × models × repeats), in this process
// or on `sop worker` processes through a BullMQ queue, and gather OUT/results.jsonl and
// OUT/summary.md. Re-running the same sweep skips finished runs and continues the others from
// their journals (docs/sweep.md).
import { SWEEP_AGAIN } from '../../shared/io/disk-full.js';
import { existsSync } from 'node:fs';
import { setMaxListeners } from 'node:events';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { JOURNAL_FILE } from '../../features/journal/writer.js';
import { loadSopFile } from '../../api/loader/checked-load.js';
import { approveSopPlugins } from './plugin-approval.js';
import { checkInputNames, undeclaredInputs } from '../../api/engine/run-with-features.js';
import { formatDiagnostic } from '../../format/sop/diagnostics.js';
import type { LlmProvider } from '../../core/llm/types.js';
import { llmBlockSecrets } from '../../core/llm/endpoints.js';
import { configureSecrets, makeRedactor, urlCredentials } from '../../shared/util/redact.js';
import { expandGrid, parseSeeds, readInputRows, type GridPoint } from '../sweep/grid.js';
import { sweepLocal } from '../sweep/local.js';
import { writeSweepDb } from '../sweep/sweep-db.js';
import { computeProvenance, writeProvenance } from '../report/provenance.js';
import { armSop, commonRandomNumbers, experimentArms, independentSeed } from '../sweep/arms.js';
import { Progress } from '../sweep/progress.js';
import { ResultsFile, isDone } from '../sweep/results.js';
import { sharedProvider, sweepServer } from '../sweep/shared-provider.js';
import { sweepRunSettings, type SweepRunSettings } from '../sweep/run-point.js';
import { checkHumans, checkNumbers, checkOutFolder, checkPricing, checkRequiredInputs, checkSweepLlm } from '../sweep/preflight.js';
import { settingsChanges } from '../sweep/settings-file.js';
import { queueSecret } from '../../shared/util/job-signature.js';
import { lastValues } from './last-value.js';
import { parseInputs } from './run-command.js';
import { EngineError } from '../../shared/errors.js';

export interface SweepCommandOptions extends SweepRunSettings {
  file: string;
  out: string;
  seeds?: string;
  inputs?: string;
  input: string[];
  model?: string;
  repeat: number;
  /** Experiment arms on independent seeds instead of common random numbers (docs/validity.md#experiments). */
  independent?: boolean;
  concurrency?: number;
  /** Worker threads of an in-process sweep (default: one per core once there are at least 2 x concurrency runs). */
  threads?: number;
  queue?: string;
  detach?: boolean;
  collect?: boolean;
  /** Attempts of a queued run before it is recorded as failed (default 3). */
  attempts?: number;
  /** LLM servers the SOP names that its runs may call: URL (with OPENAI_API_KEY), URL=VAR (src/core/llm/consent.ts). */
  allowBaseUrl?: string[];
  allowBaseUrlEnv?: string[];
}

export const DEFAULT_SWEEP_CONCURRENCY = 8;

/**
 * The start of `sop sweep` and `sop calibrate`: the options (the last of a flag given twice, but
 * for the repeatable ones), the SOP file loaded once its "plugins" are approved (threads load them
 * too), its warnings told, and `err`, which writes to stderr with the secrets of the flags and of
 * the SOP redacted.
 */
export async function openSweepSop<
  O extends SweepRunSettings & { file: string; queue?: string; input: string[]; allowBaseUrl?: string[]; allowBaseUrlEnv?: string[] },
>(given: O, command: string) {
  const o = lastValues(given, ['input', 'allowBaseUrl', 'allowBaseUrlEnv']);
  configureSecrets({ urls: [o.baseUrl, o.queue] });
  let redact = makeRedactor();
  const err = (s: string) => process.stderr.write(redact(s));
  const file = resolve(o.file);
  await approveSopPlugins(file, { yes: o.yes, command });
  const { sop, warnings } = loadSopFile(file);
  configureSecrets({ urls: [sop.llm?.base_url] });
  configureSecrets(llmBlockSecrets(sop)); // the key variables and servers of its LLM blocks (llm.api_key_env, llm.base_url)
  redact = makeRedactor(); // with the SOP's secrets too
  for (const w of warnings) err(formatDiagnostic(w) + '\n');
  return { o, file, sop, err, redact };
}

export async function sweepCommand(given: SweepCommandOptions): Promise<number> {
  const { o, file, sop, err, redact } = await openSweepSop(given, 'sop sweep');
  if (!Number.isInteger(o.repeat) || o.repeat < 1) throw new EngineError('--repeat must be a whole number, at least 1', 'SWEEP_OPTION');
  const concurrency = o.concurrency ?? DEFAULT_SWEEP_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new EngineError('--concurrency must be a whole number of runs, at least 1', 'SWEEP_OPTION');
  checkNumbers(o);
  if (o.queue !== undefined) (await import('../sweep/queue.js')).parseRedisUrl(o.queue); // a bad URL is told before anything starts
  if ((o.detach || o.collect) && !o.queue)
    throw new EngineError(`--${o.detach ? 'detach' : 'collect'} needs --queue redis://HOST:PORT`, 'SWEEP_OPTION');
  if (o.detach && o.collect)
    throw new EngineError('--detach queues the runs and --collect gathers them: give one of the two', 'SWEEP_OPTION');
  checkHumans(sop, o.answers);
  // jobs are signed with the shared secret (a --collect queues nothing: it needs none)
  const secret = o.queue !== undefined && !o.collect ? queueSecret('sop sweep --queue') : undefined;

  const rows = o.inputs !== undefined ? readInputRows(o.inputs) : undefined;
  const models = o.model !== undefined ? o.model.split(',').map((m) => m.trim()) : [undefined];
  if (models.some((m) => m === '')) throw new EngineError(`--model "${o.model}": an empty model name`, 'SWEEP_OPTION');
  const fixed = parseInputs(o.input);
  checkInputNames(sop, Object.keys(fixed)); // a misspelt --input name is refused, with the name it is closest to
  const arms = experimentArms(sop); // every seed runs in each arm (docs/validity.md#experiments)
  if (o.independent && arms === undefined) err(`warning: --independent is for a SOP with experiment arms, and ${sop.name} has none\n`);
  for (const arm of arms ?? []) armSop(sop, file, arm.name); // an arm whose values make the SOP invalid is told now
  const points = expandGrid({
    seeds: o.seeds !== undefined ? parseSeeds(o.seeds) : [1],
    rows,
    models,
    repeat: o.repeat,
    fixed,
    ...(arms !== undefined ? { arms, ...(commonRandomNumbers(sop, o.independent) ? {} : { armSeed: independentSeed }) } : {}),
  });
  checkRequiredInputs(sop, points);
  const unknown = new Set(points.flatMap((p) => undeclaredInputs(sop, p.inputs)));
  for (const name of unknown)
    err(`warning: input "${name}" is not declared by ${sop.name}, so none of its templates reads it (declare it in "inputs")\n`);
  if (o.queue !== undefined && o.baseUrl !== undefined && urlCredentials(o.baseUrl).length > 0)
    err(
      `warning: --base-url holds a credential, and a queued job carries its --base-url to the workers through Redis; ` +
        `set OPENAI_BASE_URL on each worker instead and leave --base-url out\n`,
    );
  if (o.queue !== undefined && (o.concurrency !== undefined || o.threads !== undefined))
    err(`warning: --concurrency and --threads are for a sweep in this process; on a queue, give each sop worker its --concurrency\n`);
  checkPricing(o.pricing);
  // the servers the SOP names get calls only with the user's consent; on a queue the workers' flags decide
  const { cliAllow, consent, llm } = await checkSweepLlm(sop, o);

  const out = resolve(o.out);
  checkOutFolder(out, o.out);
  const runsDir = resolve(out, 'runs');
  const results = new ResultsFile(out);
  const todo = points.filter((p) => !isDone(results.byKey.get(p.key)?.status ?? ''));
  const skipped = points.length - todo.length;
  const changes = settingsChanges(out, {
    'the SOP file': file,
    '--llm': o.llm ?? sop.llm?.provider ?? 'openai',
    '--base-url': o.baseUrl ?? sop.llm?.base_url,
    '--max-turns': o.maxTurns,
    '--pricing': o.pricing !== undefined ? resolve(o.pricing) : undefined,
    '--budget-tokens': o.budgetTokens,
    '--budget-usd': o.budgetUsd,
    '--answers': o.answers !== undefined ? resolve(o.answers) : undefined,
  });
  // runs stopped or killed half-way: their folders hold a journal to continue from
  const continued = todo.filter((p) => existsSync(join(runsDir, p.key, JOURNAL_FILE))).length;
  if (changes.length > 0 && skipped + continued > 0)
    err(
      `warning: the runs in ${out} were made with ${changes.join(', ')}: ` +
        `${[...(skipped ? [`${skipped} already done are kept as they are`] : []), ...(continued ? [`${continued} stopped half-way continue with the new settings${keptOwn(changes)}`] : [])].join(' and ')} ` +
        `(give another --out to run them all with these settings)\n`,
    );
  const notes = [
    ...(skipped ? [`${skipped} already done, skipped`] : []),
    ...(continued ? [`${continued} to continue from their journals`] : []),
  ];
  err(
    `sweep ${sop.name}: ${points.length} run${points.length === 1 ? '' : 's'}${notes.length ? ` (${notes.join('; ')})` : ''}` +
      `${o.queue ? ` on queue ${redact(o.queue)}` : `, ${Math.min(concurrency, Math.max(1, todo.length))} at once`}; results in ${out}\n`,
  );

  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every run of the sweep listens to it
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (interrupts > 1) process.exit(130);
    err(
      o.queue
        ? '\nStopping: the queued runs go on on the workers; gather them with the same command and --collect (Ctrl-C again to quit at once).\n'
        : '\nStopping: runs in progress stop after their turn; run the same sweep again to continue them (Ctrl-C again to quit at once).\n',
    );
    stop.abort();
  };
  process.on('SIGINT', onSigint);
  const progress = new Progress({ total: points.length, skipped, out: process.stderr });
  const order = points.map((p) => p.key);
  try {
    if (o.queue) {
      const code = await sweepQueued(o, { file, runsDir, todo, results, progress, signal: stop.signal, err, secret });
      if (code !== undefined) return code;
    } else {
      const threads = o.threads ?? (todo.length >= 2 * concurrency ? availableParallelism() : 1);
      const providers = new Map<string, LlmProvider>();
      if (threads > 1) {
        const { sweepThreads } = await import('../sweep/threads.js');
        await sweepThreads(todo, {
          file,
          runsDir,
          ...sweepRunSettings(o),
          allow: [...cliAllow, ...consent.approved], // each thread reads the allow file itself
          signal: stop.signal,
          threads,
          concurrency,
          results,
          progress,
        });
      } else
        await sweepLocal(todo, {
          sop,
          file,
          runsDir,
          ...sweepRunSettings(o),
          provider: llm
            ? await sharedProvider(providers, o.llm ?? sop.llm?.provider, sweepServer(sop, o.baseUrl, consent), o.timeoutMs)
            : undefined,
          signal: stop.signal,
          concurrency,
          results,
          progress,
        });
    }
  } finally {
    progress.stop();
    process.off('SIGINT', onSigint);
    results.finish(order, sop.name);
  }
  const lines = order.flatMap((k) => {
    const r = results.byKey.get(k);
    return r ? [r] : [];
  });
  await writeSweepDb(out, lines); // OUT/sweep.duckdb: the runs and their final metrics as tables
  // OUT/provenance.json: the SOP's, data files' and model's hashes, the seeds, a Merkle root of the outcomes
  try {
    const runs = lines.filter((r) => r.run_dir !== undefined && existsSync(join(r.run_dir, JOURNAL_FILE)));
    writeProvenance(
      out,
      computeProvenance(
        'sweep',
        runs.map((r) => ({ key: r.key, seed: r.seed, ...(r.arm !== undefined ? { arm: r.arm } : {}), dir: r.run_dir! })),
        file,
      ),
    );
  } catch (e) {
    err(`warning: no ${out}/provenance.json: ${(e as Error).message.split('\n')[0]}\n`);
  }
  const done = lines.filter((r) => isDone(r.status)).length;
  const failed = lines.filter((r) => r.status === 'failed').length;
  const open = points.length - done - failed;
  const budget = lines.filter((r) => r.status === 'budget').length;
  err(
    `${done} of ${points.length} runs done${budget ? ` (${budget} stopped by a budget)` : ''}, ${failed} failed${open ? `, ${open} not finished (run the same sweep again to continue them)` : ''}; ` +
      `${out}/results.jsonl, ${out}/summary.md, ${out}/sweep.duckdb\n`,
  );
  // files: runs a full disk stopped are said once, with what to do
  const full = lines.filter((r) => r.error?.startsWith('disk full:')).length;
  if (full > 0) err(`disk full: ${full} of the runs could not be written under ${out}; free some space, then ${SWEEP_AGAIN}\n`);
  if (stop.signal.aborted) return 130;
  return failed > 0 || open > 0 ? 1 : 0;
}

/**
 * A run continued from its journal keeps the budgets and answers file it was started with when
 * none is given now (as `sop resume`): said of the changes that leave one out.
 */
function keptOwn(changes: readonly string[]): string {
  const left = changes.filter((c) => /^--(budget-tokens|budget-usd|answers) /.test(c) && c.endsWith('(now (default))'));
  return left.length > 0 ? ` (but keep their own ${left.map((c) => c.split(' ')[0]).join(', ')})` : '';
}

async function sweepQueued(
  o: SweepCommandOptions,
  c: {
    file: string;
    runsDir: string;
    todo: GridPoint[];
    results: ResultsFile;
    progress: Progress;
    signal: AbortSignal;
    err: (s: string) => void;
    secret: string | undefined;
  },
): Promise<number | undefined> {
  const { Queue } = await import('bullmq');
  const { QUEUE_NAME, collect, connectionOf, enqueue, reachRedis, sweepId } = await import('../sweep/queue.js');
  const queue = new Queue(QUEUE_NAME, { connection: connectionOf(o.queue!) });
  let lastError: string | undefined;
  let ready = false; // before that, the error is told once by reachRedis
  queue.on('error', (e) => {
    if (ready && e.message !== lastError) c.err(`queue: ${e.message}\n`); // once per kind of error, not at every reconnection
    lastError = e.message;
  });
  try {
    await reachRedis(queue.waitUntilReady(), o.queue!, () => lastError);
    ready = true;
    const sweep = sweepId(c.file, c.runsDir);
    if (!o.collect) {
      const attempts = o.attempts ?? 3;
      const added = await enqueue(
        queue,
        {
          sweep,
          file: c.file,
          runsDir: c.runsDir,
          ...sweepRunSettings(o),
        },
        c.todo,
        { attempts, secret: c.secret! },
      );
      c.err(`${added} runs queued${c.todo.length - added ? `, ${c.todo.length - added} were queued already` : ''}\n`);
      if (o.detach) {
        c.err(`Detached. Gather the results with the same command and --collect instead of --detach.\n`);
        return 0;
      }
    }
    const { missing } = await collect(queue, c.todo, {
      sweep,
      results: c.results,
      signal: c.signal,
      onLine: (r) => {
        c.progress.call(r.usage.prompt_tokens + r.usage.completion_tokens, r.usage.cost);
        c.progress.end(r);
      },
      onActive: (n) => {
        c.progress.running = n;
      },
    });
    if (missing.length > 0 && missing.length === c.todo.length)
      throw new EngineError(
        `--collect: none of the ${missing.length} runs to gather is on the queue; start the sweep without --collect to queue them`,
        'SWEEP_OPTION',
      );
    if (missing.length > 0) c.err(`${missing.length} runs of this sweep were never queued (run it without --collect to queue them)\n`);
    return undefined;
  } finally {
    await queue.close();
  }
}
