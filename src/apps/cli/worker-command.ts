// sop worker --queue redis://HOST:PORT: run the runs of sweeps queued on Redis (docs/sweep.md).
// A run's folder goes to the sweep's --out when this machine shares it, else under this
// worker's --out. A job given to this worker after another one died (BullMQ's stalled-job
// recovery) continues the run from its journal when the folder is there, else starts it again.
// A job is input from whoever can write to the Redis: each is checked (its SOP_QUEUE_SECRET
// signature, its shape, this worker's --root folders and allowances: src/apps/sweep/job-policy.ts)
// before anything runs, and a job refused is failed at once with the reason.
import { serveWorker } from './serve-worker.js';
import { setMaxListeners } from 'node:events';
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import { loadSopFile } from '../../api/loader/checked-load.js';
import { PluginError } from '../../api/plugins.js';
import { approveSopPlugins } from './plugin-approval.js';
import { MAX_SOP_BYTES } from '../../format/sop/sop-file.js';
import { readInputFile } from '../../shared/io/read-input-file.js';
import type { LlmProvider } from '../../core/llm/types.js';
import { configureSecrets, makeRedactor, redactedProcessor } from '../../shared/util/redact.js';
import type { Sop } from '../../format/sop/types.js';
import { QUEUE_NAME, connectionOf, parseRedisUrl, type JobData } from '../sweep/queue.js';
import { pointSop, runPoint, workerName } from '../sweep/run-point.js';
import {
  JobRefused,
  checkJob,
  checkSopFiles,
  checkSopLocalModels,
  normaliseUrl,
  realRoots,
  type WorkerPolicy,
} from '../sweep/job-policy.js';
import { queueSecret } from '../../shared/util/job-signature.js';
import { terminalSafe } from '../../shared/util/terminal-text.js';
import type { ResultLine } from '../sweep/results.js';
import { needsLlm, sharedProvider, sweepServer } from '../sweep/shared-provider.js';
import { LlmConsent, LlmConsentError, cliLlmAllowEntries, fileLlmAllowEntries } from '../../core/llm/consent.js';
import { lastValues } from './last-value.js';
import { EngineError } from '../../shared/errors.js';
import { count } from '../../shared/util/plural.js';
import { RedisLimits } from '../sweep/shared-limit.js';
import type { ThrottleChoice } from '../../core/llm/factory.js';
import { DEFAULT_CONCURRENCY } from '../../features/population/plugin.js';

export interface WorkerCommandOptions {
  queue: string;
  concurrency: number;
  /** LLM calls at once to each server, shared through the --queue Redis by the workers given it (src/apps/sweep/shared-limit.ts). */
  sharedLimit?: number;
  /** Keep run folders here (under a folder per sweep) instead of the sweep's --out. */
  out?: string;
  /** Milliseconds a job's lock lasts without renewal before the job counts as stalled (default 10000). */
  lockMs?: number;
  /** Folders every path a job names must be in (default: the worker's current folder). */
  root?: string[];
  /** Jobs may run agents' code without asking (a job's autoRun). */
  autoRun?: boolean;
  /** Jobs may accept every approval without asking (a job's yes). */
  yes?: boolean;
  /** LLM servers a job may name (a job's baseUrl), and its SOP may name, with OPENAI_API_KEY. */
  allowBaseUrl?: string[];
  /** Servers its SOP may name, with the key in VAR: URL=VAR. */
  allowBaseUrlEnv?: string[];
  allowAnswers?: boolean;
  allowPricing?: boolean;
  allowReplay?: boolean;
  // shards (./shard-worker-command.ts)
  /** Answer the shard jobs of `sop run --shard-over` instead of running sweeps' runs. */
  shards?: boolean;
  llm?: string;
  baseUrl?: string;
  model?: string;
  allowModel?: string[];
  shardConcurrency?: number;
}

export async function workerCommand(given: WorkerCommandOptions): Promise<number> {
  const o = lastValues(given, ['root', 'allowBaseUrl', 'allowBaseUrlEnv', 'allowModel']);
  if (o.shards) {
    const { shardWorkerCommand } = await import('./shard-worker-command.js');
    return shardWorkerCommand({
      queue: o.queue,
      llm: o.llm,
      baseUrl: o.baseUrl,
      model: o.model,
      allowModel: o.allowModel,
      callsAtOnce: o.shardConcurrency,
      lockMs: o.lockMs,
      ...(o.sharedLimit !== undefined ? { sharedLimit: o.sharedLimit } : {}),
    });
  }
  const shardOnly = (['llm', 'baseUrl', 'model', 'allowModel', 'shardConcurrency'] as const).find((k) =>
    Array.isArray(o[k]) ? (o[k] as unknown[]).length > 0 : o[k] !== undefined,
  );
  if (shardOnly)
    throw new EngineError(
      `--${shardOnly.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} is for shard workers (with --shards); a sweep's runs take their LLM settings from the sweep`,
      'OPTION',
    );
  if (!Number.isInteger(o.concurrency) || o.concurrency < 1)
    throw new EngineError(`--concurrency must be a whole number of runs, at least 1`, 'OPTION');
  if (o.lockMs !== undefined && !(Number.isInteger(o.lockMs) && o.lockMs >= 1000))
    throw new EngineError(`--lock-ms must be a whole number of milliseconds, at least 1000 (got ${o.lockMs})`, 'OPTION');
  if (o.sharedLimit !== undefined && !(Number.isInteger(o.sharedLimit) && o.sharedLimit >= 1))
    throw new EngineError(`--shared-limit must be a whole number of LLM calls, at least 1 (got ${o.sharedLimit})`, 'OPTION');
  parseRedisUrl(o.queue); // a bad URL is told before connecting
  const secret = queueSecret('sop worker'); // no secret, no work: told before connecting
  // the same flags allow a job's base URL and the servers its SOP names (src/core/llm/consent.ts)
  const cliAllow = cliLlmAllowEntries(o.allowBaseUrl, o.allowBaseUrlEnv); // a bad URL is told now
  const consent = new LlmConsent({ allow: () => [...cliAllow, ...fileLlmAllowEntries()] });
  const policy: WorkerPolicy = {
    roots: realRoots(o.root && o.root.length > 0 ? o.root : [process.cwd()]),
    autoRun: o.autoRun === true,
    yes: o.yes === true,
    baseUrls: (o.allowBaseUrl ?? []).map(normaliseUrl),
    baseUrlEnv: o.allowBaseUrlEnv ?? [],
    answers: o.allowAnswers === true,
    pricing: o.allowPricing === true,
    replay: o.allowReplay === true,
  };
  configureSecrets({ urls: [o.queue, ...(o.allowBaseUrl ?? [])] });
  const redact = makeRedactor();
  const err = (s: string) => process.stderr.write(redact(s));
  const sops = new Map<string, Sop>();
  const providers = new Map<string, LlmProvider>();
  const stop = new AbortController();
  setMaxListeners(0, stop.signal); // every run (and its LLM calls) listens to it
  const lockDuration = o.lockMs ?? 10_000;
  // the limit shared with other workers goes through this worker's own Redis, never one a job names
  const limits =
    o.sharedLimit !== undefined
      ? new RedisLimits({ redis: o.queue, maxConcurrent: o.sharedLimit, onError: (e) => err(`shared limit: ${e.message}\n`) })
      : undefined;
  // calls at once to each server adapt to its answers (docs/scale.md#adaptive-concurrency), up to
  // the population default for each run at once, and within the shared limit
  const throttle: ThrottleChoice = {
    ceiling: o.sharedLimit ?? o.concurrency * DEFAULT_CONCURRENCY,
    onChange: (c) => err(`LLM calls at once to ${c.endpoint}: ${c.limit} (was ${c.previous}: ${c.reason})\n`),
    ...(limits ? { shared: (endpoint: string, expirationMs: number) => limits.forEndpoint(endpoint, expirationMs) } : {}),
  };

  const processor = async (job: Job<JobData, ResultLine>): Promise<ResultLine> => {
    let d: JobData;
    try {
      d = checkJob(secret, job.id ?? '', job.data, policy, o.out);
    } catch (e) {
      // refused: failed at once (no retry), with the reason; nothing of it ran
      const reason = e instanceof JobRefused ? e.message : `the job could not be checked: ${(e as Error).message}`;
      throw new UnrecoverableError(`refused: ${reason}`);
    }
    // a SOP file edited between two sweeps is read again (its size or time changed)
    const st = statSync(d.file, { throwIfNoEntry: false });
    const version = `${d.file}\u0000${st?.mtimeMs ?? ''}\u0000${st?.size ?? ''}`;
    let sop = sops.get(version);
    if (!sop) {
      // the files it names are checked before it is loaded: loading reads a population file's first row
      refuseOutside(() => checkSopFiles(rawSop(d.file), d.file, policy.roots, d.point.inputs));
      try {
        // its "plugins": with the worker's --yes or the allow file, and only inside its roots
        await approveSopPlugins(d.file, { yes: policy.yes, command: 'sop worker', roots: policy.roots });
      } catch (e) {
        if (e instanceof PluginError) throw new UnrecoverableError(`refused: ${e.message}`);
        throw e;
      }
      sop = loadSopFile(d.file).sop;
      sops.set(version, sop);
    }
    // a point's values set at JSON pointers (a calibration's particle): the SOP as the run will
    // have it is what is checked (never /plugins: src/format/sop/set-pointer.ts)
    let own: Sop;
    try {
      own = pointSop(sop, d.point, d.file);
    } catch (e) {
      throw new UnrecoverableError(`refused: the job's point.set: ${(e as Error).message.split('\n')[0]}`);
    }
    refuseOutside(() => {
      checkSopLocalModels(own, d.file, d.point, d.llm, policy.roots);
      checkSopFiles(own, d.file, policy.roots, d.point.inputs); // its population, edge-list, knowledge and sub-flow files
    });
    const runsDir = o.out !== undefined ? resolve(o.out, d.sweep) : d.runsDir;
    err(`run ${d.point.key} started (attempt ${job.attemptsStarted})\n`);
    configureSecrets({ urls: [d.baseUrl] });
    let provider: LlmProvider | undefined;
    try {
      if (needsLlm(own, d.llm))
        provider = await sharedProvider(providers, d.llm ?? own.llm?.provider, sweepServer(own, d.baseUrl, consent), d.timeoutMs, throttle);
    } catch (e) {
      // a server the SOP names that this worker does not allow: refused, nothing sent, no retry
      if (e instanceof LlmConsentError) throw new UnrecoverableError(`refused: ${e.message.replace(/, or give --base-url/, '')}`);
      throw e;
    }
    const line = await runPoint(d.point, {
      command: 'sop worker',
      sop,
      file: d.file,
      runsDir,
      llm: d.llm,
      provider,
      baseUrl: d.baseUrl,
      maxTurns: d.maxTurns,
      timeoutMs: d.timeoutMs,
      // explicit: a run continued from its journal does not take these from its first launch
      yes: d.yes === true,
      autoRun: d.autoRun === true,
      pricing: d.pricing,
      budgetTokens: d.budgetTokens,
      budgetUsd: d.budgetUsd,
      answers: d.answers,
      signal: stop.signal,
    });
    // stopped with the worker: the job goes back to the queue (its run continues from its journal)
    if (line.status === 'interrupted' && stop.signal.aborted)
      throw new EngineError(`worker ${workerName()} stopped during the run`, 'WORKER_STOPPED');
    err(
      `run ${d.point.key} ${line.status} after ${count(line.turns, 'turn')}${line.error ? `: ${line.error.replace(/\s+/g, ' ').slice(0, 300)}` : ''}\n`,
    );
    return line;
  };

  // what BullMQ stores of a job (its result line, its failed reason and stack trace) is redacted
  // with the secrets of this moment (a job's --base-url adds its credentials)
  const worker = new Worker<JobData, ResultLine>(
    QUEUE_NAME,
    (job: Job<JobData, ResultLine>) => {
      let r: ((t: string) => string) | undefined; // made once the job is done
      return redactedProcessor(processor, (t) => (r ??= makeRedactor())(t))(job);
    },
    {
      connection: connectionOf(o.queue),
      concurrency: o.concurrency,
      lockDuration,
      stalledInterval: Math.max(1000, Math.round(lockDuration / 2)),
      maxStalledCount: 2,
      autorun: false,
    },
  );
  return serveWorker(worker, {
    queue: redact(o.queue),
    say: 'the runs in progress stop after their turn and go back to the queue',
    stop,
    err,
    // a refused job's data is not to be trusted: it is named by its id, made safe for a terminal
    jobName: (job, e) =>
      e instanceof UnrecoverableError || e.name === 'UnrecoverableError'
        ? `job ${terminalSafe(String(job.id ?? '?')).slice(0, 200)}`
        : `run ${terminalSafe(String(job.data?.point?.key))}`,
    ...(limits ? { limits } : {}),
    readyLine: () =>
      `worker ${workerName()} ready: queue ${QUEUE_NAME} on ${redact(o.queue)}, ${o.concurrency} at once; ` +
      `jobs signed with SOP_QUEUE_SECRET, inside ${policy.roots.join(', ')}${allowances(policy)}` +
      `${o.sharedLimit !== undefined ? `; LLM calls at once to each server shared with other workers: ${o.sharedLimit}` : ''}\n`,
  });
}

/** A JobRefused fails the job at once (no retry), with the reason. */
function refuseOutside(check: () => void): void {
  try {
    check();
  } catch (e) {
    if (e instanceof JobRefused) throw new UnrecoverableError(`refused: ${e.message}`);
    throw e;
  }
}

/** The SOP file's JSON as written (undefined when it is not JSON: loading it says why). */
function rawSop(file: string): unknown {
  try {
    return JSON.parse(readInputFile(file, { maxBytes: MAX_SOP_BYTES, what: 'a SOP file' }));
  } catch {
    return undefined;
  }
}

/** What this worker lets jobs do beyond its roots, as said when it is ready. */
function allowances(p: WorkerPolicy): string {
  const a = [
    ...(p.autoRun ? ['--auto-run'] : []),
    ...(p.yes ? ['--yes'] : []),
    ...p.baseUrls.map((u) => `base URL ${u}`),
    ...(p.baseUrlEnv ?? []).map((u) => `base URL ${u}`),
    ...(p.answers ? ['answers files'] : []),
    ...(p.pricing ? ['pricing files'] : []),
    ...(p.replay ? ['replay cassettes'] : []),
  ];
  return a.length > 0 ? `; allowing ${a.join(', ')}` : '';
}
