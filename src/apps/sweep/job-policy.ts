// A queued job is input from whoever can write to the Redis: `sop worker` checks each one before
// anything runs, in this order: its signature (SOP_QUEUE_SECRET), its shape
// (schemas/queue-job.schema.json), then this worker's own limits: every path it names inside the
// worker's --root folders (symlinks resolved), a run key with no path parts, and the settings
// only the worker's flags allow (--auto-run, --yes, --allow-base-url, --allow-answers,
// --allow-pricing, --allow-replay). A local model (llm local:/PATH.gguf) must be a file this
// worker has, inside its roots. Every file its SOP names (population and edge-list files,
// knowledge files, sub-flow SOPs and theirs: src/format/sop/named-files.ts) is inside the roots
// too. A job that fails any of them is refused with the reason.
import { EngineError } from '../../shared/errors.js';
import { serverKey } from '../../core/llm/consent.js';
import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';
import type { ErrorObject } from 'ajv';
import { appliedSettings } from '../../features/journal/applied-settings.js';
import { loadRunRecord } from '../../features/journal/record.js';
import { JOURNAL_FILE } from '../../features/journal/writer.js';
import validateJob from './job-validator.generated.js';
import { signatureProblem } from '../../shared/util/job-signature.js';
import type { JobData } from './queue.js';
import { namedFiles } from '../../format/sop/named-files.js';
import { readInputFile } from '../../shared/io/read-input-file.js';
import { MAX_SOP_BYTES } from '../../format/sop/sop-file.js';

export class JobRefused extends EngineError {
  constructor(message: string) {
    super(message, 'JOB_REFUSED');
    this.name = 'JobRefused';
  }
}

/** What this worker lets a job do (its flags). */
export interface WorkerPolicy {
  /** Real paths (symlinks resolved) of the folders a job's files and run folders must be in. */
  roots: string[];
  autoRun: boolean;
  yes: boolean;
  /** LLM servers a job may name as its baseUrl (normalised: no trailing slash). */
  baseUrls: string[];
  /** URL=VAR: servers its SOPs name that may be sent the key in VAR (--allow-base-url-env; for the ready line). */
  baseUrlEnv?: string[];
  answers: boolean;
  pricing: boolean;
  replay: boolean;
}

/**
 * A URL as compared with --allow-base-url: parsed and printed again, without credentials or a
 * trailing slash, as the same flag's consent to a server a SOP names is compared (src/core/llm/consent.ts).
 */
export const normaliseUrl = serverKey;

/** The real paths of the --root folders (each must be a folder that exists). */
export function realRoots(roots: readonly string[]): string[] {
  return roots.map((r) => {
    let real: string;
    try {
      real = realpathSync(resolve(r));
    } catch {
      throw new JobRefused(`--root ${r}: no such folder`);
    }
    return real;
  });
}

/**
 * Where a path really is: the real path of its nearest existing folder (or of itself), with the
 * rest appended, so a path to be made (a run folder) is judged by where it would be made.
 */
export function realLocation(path: string): string {
  let p = resolve(path);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(p), ...rest.reverse());
    } catch {
      const up = dirname(p);
      if (up === p) return join(p, ...rest.reverse());
      rest.push(basename(p));
      p = up;
    }
  }
}

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
const shown = (s: string) => JSON.stringify(s.length > 300 ? `${s.slice(0, 300)}...` : s);

function checkInRoots(what: string, path: string, roots: readonly string[]): void {
  if (!isAbsolute(path)) throw new JobRefused(`${what} ${shown(path)} is not an absolute path`);
  const real = realLocation(path);
  if (!roots.some((r) => within(real, r)))
    throw new JobRefused(
      `${what} ${shown(path)}${real !== resolve(path) ? ` (really ${shown(real)})` : ''} is outside this worker's --root ` +
        `(${roots.join(', ')}); start the worker with --root covering it`,
    );
}

/** A run key names one folder: no separator, no `..`, no control character. */
export function keyProblem(key: string): string | undefined {
  // eslint-disable-next-line no-control-regex
  if (/[/\\]|^\.\.?$|\.\.|[\u0000-\u001f\u007f]/.test(key)) return `point.key ${shown(key)} has path parts; a run key names one folder`;
  return undefined;
}

function firstSchemaError(errors: ErrorObject[] | null | undefined): string {
  const e = errors?.[0];
  if (!e) return 'does not match the job schema';
  const where = e.instancePath || '(the job)';
  const extra =
    e.keyword === 'additionalProperties'
      ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
      : e.keyword === 'const' || e.keyword === 'enum'
        ? ` (${JSON.stringify((e.params as { allowedValue?: unknown; allowedValues?: unknown }).allowedValue ?? (e.params as { allowedValues?: unknown }).allowedValues)})`
        : '';
  return `${where} ${e.message ?? `fails ${e.keyword}`}${extra}`;
}

/** The launch settings a run folder's journal continues with (a job that continues a run continues with them). */
function journalLaunch(runDir: string): Record<string, unknown> | undefined {
  if (!existsSync(join(runDir, JOURNAL_FILE))) return undefined;
  try {
    return appliedSettings(loadRunRecord(runDir)).launch;
  } catch {
    return undefined; // unreadable: the run starts again, with the job's settings
  }
}

interface Asked {
  autoRun?: boolean;
  yes?: boolean;
  baseUrl?: string;
  answers?: string;
  pricing?: string;
  llm?: string;
}

/** The settings only the worker's flags allow, and the files they name inside the roots. */
function checkAsked(a: Asked, p: WorkerPolicy, whose: string): void {
  if (a.autoRun && !p.autoRun)
    throw new JobRefused(`${whose} asks to run agents' code without asking (autoRun); this worker allows it only with --auto-run`);
  if (a.yes && !p.yes) throw new JobRefused(`${whose} asks to accept every approval (yes); this worker allows it only with --yes`);
  if (a.baseUrl !== undefined && !p.baseUrls.includes(normaliseUrl(a.baseUrl)))
    throw new JobRefused(
      `${whose} sends the LLM calls (and this worker's API key) to ${shown(a.baseUrl)}; this worker allows a job's base URL only with --allow-base-url URL`,
    );
  const files: Array<[string, string | undefined, boolean, string]> = [
    ['answers file', a.answers, p.answers, '--allow-answers'],
    ['pricing file', a.pricing, p.pricing, '--allow-pricing'],
    ['replay cassette', a.llm?.startsWith('replay:') ? a.llm.slice('replay:'.length) : undefined, p.replay, '--allow-replay'],
  ];
  for (const [what, path, allowed, flag] of files) {
    if (path === undefined) continue;
    if (!allowed) throw new JobRefused(`${whose} reads the ${what} ${shown(path)}; this worker allows that only with ${flag}`);
    checkInRoots(`the ${what}`, path, p.roots);
  }
  // a local model (local:/ABSOLUTE.gguf): a file this worker has, inside its roots; never a download
  const model = a.llm?.startsWith('local:') ? a.llm.slice('local:'.length) : undefined;
  if (model !== undefined) {
    if (!isAbsolute(model))
      throw new JobRefused(
        `${whose} names the local model ${shown(model)}, not a .gguf file by its absolute path (a worker never downloads one)`,
      );
    checkInRoots('the local model', model, p.roots);
    if (!existsSync(model))
      throw new JobRefused(`the local model ${shown(model)} is not on this worker; put the file at that path on every worker`);
  }
}

/**
 * A run on the SOP's own local models (its llm.provider is local and the job names no --llm):
 * every model its LLM blocks name (llm.model at any level, relative to the SOP's folder) and the
 * grid point's --model are files inside the roots, as a job's own files are. An hf: model is read
 * from this worker's models folder only (a SOP never downloads one).
 */
export function checkSopLocalModels(
  sop: unknown,
  file: string,
  point: Pick<JobData['point'], 'model'>,
  llm: string | undefined,
  roots: readonly string[],
): void {
  if ((llm ?? (sop as { llm?: { provider?: unknown } } | undefined)?.llm?.provider) !== 'local') return;
  const models = new Set<string>(point.model !== undefined ? [point.model] : []);
  const visit = (v: unknown, key: string): void => {
    if (typeof v !== 'object' || v === null) return;
    if (Array.isArray(v)) return v.forEach((x) => visit(x, ''));
    const o = v as Record<string, unknown>;
    if (key === 'llm' && typeof o.model === 'string') models.add(o.model);
    for (const [k, x] of Object.entries(o)) visit(x, k);
  };
  visit(sop, '');
  for (const m of models) if (!m.startsWith('hf:')) checkInRoots("the SOP's local model", resolve(dirname(file), m), roots);
}

/**
 * Every file the SOP (read from `file`) names, and those its sub-flow SOPs name, is inside the
 * roots: a signed job whose SOP lies inside the root may still name `"source": {"file":
 * "/elsewhere/secret.csv"}`, which would reach the prompts. JobRefused names the file and where
 * the SOP names it. A sub-flow SOP that cannot be read is left to the run, which refuses it.
 */
export function checkSopFiles(sop: unknown, file: string, roots: readonly string[], inputs?: Readonly<Record<string, string>>): void {
  const seen = new Set<string>();
  const visit = (doc: unknown, from: string, whose: string): void => {
    if (seen.has(resolve(from))) return;
    seen.add(resolve(from));
    // the run's inputs render the top SOP's paths that name them ({{inputs.NAME}})
    for (const f of namedFiles(doc, dirname(resolve(from)), doc === sop ? inputs : undefined)) {
      checkInRoots(`${whose}'s ${f.what} at ${f.pointer}`, f.resolved, roots);
      if (!f.subflow) continue;
      let sub: unknown;
      try {
        sub = JSON.parse(readInputFile(f.resolved, { maxBytes: MAX_SOP_BYTES, what: 'a SOP file' }));
      } catch {
        continue;
      }
      visit(sub, f.resolved, `the sub-flow ${basename(f.resolved)}`);
    }
  };
  visit(sop, file, 'the SOP');
}

/**
 * The job's data once it passed every check, or a JobRefused with the reason. `runsDir` is where
 * this worker will write the run's folder (its --out, else the job's runsDir).
 */
export function checkJob(secret: string, jobId: string, data: unknown, p: WorkerPolicy, ownOut: string | undefined): JobData {
  const unsigned = signatureProblem(secret, jobId, data);
  if (unsigned) throw new JobRefused(unsigned);
  if (!validateJob(data)) throw new JobRefused(`the job is not a valid sop job: ${firstSchemaError(validateJob.errors)}`);
  const d = data as JobData;
  const key = keyProblem(d.point.key);
  if (key) throw new JobRefused(key);
  if (jobId !== `${d.sweep}-${d.point.key}`) throw new JobRefused(`the job id ${shown(jobId)} is not its sweep and key`);
  checkInRoots('the SOP file', d.file, p.roots);
  const runsDir = ownOut !== undefined ? resolve(ownOut, d.sweep) : d.runsDir;
  if (ownOut === undefined) checkInRoots('the runs folder', d.runsDir, p.roots);
  checkInRoots('the run folder', join(runsDir, d.point.key), p.roots);
  checkAsked(d, p, 'the job');
  // a run continued from its journal keeps what it was started with (its LLM server, answers, ...):
  // the same limits hold for them
  const launch = journalLaunch(join(runsDir, d.point.key));
  if (launch) {
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    checkAsked(
      {
        baseUrl: d.baseUrl === undefined ? str(launch.base_url) : undefined,
        answers: d.answers === undefined ? str(launch.answers) : undefined,
        pricing: d.pricing === undefined ? str(launch.pricing) : undefined,
        llm: d.llm === undefined ? str(launch.llm) : undefined,
      },
      p,
      'the run it continues',
    );
    const memory = str(launch.memory_dir);
    if (memory !== undefined) checkInRoots("the continued run's memory folder", memory, p.roots);
  }
  return d;
}
