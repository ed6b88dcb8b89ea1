// What `sop sweep` checks before it starts anything (no folder made, no line written): the
// numbers of its options, the --llm choice and its cassette, the pricing file, the --out
// folder, and that every run of the grid has the SOP's required inputs. A mistake here
// would otherwise fail every run of the sweep one by one with the same message.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { AnswersFileInput, askYesNo } from '../../core/io/human.js';
import { LlmConsent, cliLlmAllowEntries, fileLlmAllowEntries, type LlmAllowEntry } from '../../core/llm/consent.js';
import { createProvider, type ProviderChoice } from '../../core/llm/factory.js';
import { loadPricing } from '../../core/llm/pricing.js';
import type { Sop } from '../../format/sop/types.js';
import type { GridPoint } from './grid.js';
import { EngineError } from '../../shared/errors.js';
import { inputRequired } from '../../api/engine/run-with-features.js';
import { needsLlm, sweepServer } from './shared-provider.js';

export class SweepOptionError extends EngineError {
  constructor(message: string) {
    super(message, 'SWEEP_OPTION');
  }
}

const whole = (n: number | undefined, min: number) => n === undefined || (Number.isInteger(n) && n >= min);

/** Whole-number options: one clear line for the first that is wrong. */
export function checkNumbers(o: {
  maxTurns?: number;
  threads?: number;
  attempts?: number;
  timeoutMs?: number;
  budgetTokens?: number;
  budgetUsd?: number;
}): void {
  if (!whole(o.maxTurns, 1)) throw new SweepOptionError(`--max-turns must be a whole number of turns, at least 1 (got ${o.maxTurns})`);
  if (!whole(o.threads, 1)) throw new SweepOptionError(`--threads must be a whole number, at least 1 (got ${o.threads})`);
  if (!whole(o.attempts, 1)) throw new SweepOptionError(`--attempts must be a whole number, at least 1 (got ${o.attempts})`);
  if (o.timeoutMs !== undefined && !(Number.isFinite(o.timeoutMs) && o.timeoutMs >= 1))
    throw new SweepOptionError(`--timeout must be a number of seconds above 0 (got ${o.timeoutMs / 1000})`);
  for (const [flag, v] of [
    ['--budget-tokens', o.budgetTokens],
    ['--budget-usd', o.budgetUsd],
  ] as const)
    if (v !== undefined && !(Number.isFinite(v) && v > 0))
      throw new SweepOptionError(`${flag} must be a number above 0, the budget of each run (got ${String(v)})`);
}

/** --out must be a folder (or not exist yet). */
export function checkOutFolder(out: string, given: string): void {
  let isDir: boolean | undefined;
  try {
    isDir = statSync(out).isDirectory();
  } catch {
    return; // made when the sweep starts
  }
  if (!isDir) throw new SweepOptionError(`--out ${given}: is a file, not a folder (give a folder for results.jsonl, summary.md and runs/)`);
}

/**
 * The LLM choice: an unknown --llm, a cassette that cannot be read, a --timeout out of range or
 * (in this process) a missing API key fail here once. On a queue the openai provider is made by
 * the workers (they hold the keys), so it is not made here, nor a local model loaded (the
 * workers load the file at its path; local:hf: is refused: a worker never downloads).
 */
export async function checkLlm(
  spec: string | undefined,
  server: Pick<ProviderChoice, 'baseURL' | 'apiKeyEnv' | 'baseURLFixed' | 'consent' | 'endpoints'>,
  timeoutMs: number | undefined,
  queued: boolean,
): Promise<void> {
  const s = spec ?? 'openai';
  if (queued && s === 'openai') return;
  if (queued && s.startsWith('local:')) {
    // a worker runs the model file it has at this path (inside its --root); it never downloads one
    const model = s.slice('local:'.length);
    if (model.startsWith('hf:'))
      throw new SweepOptionError(
        `--llm ${s} on a queue: a worker never downloads a model; fetch it once (sop run --llm ${s}) and give ` +
          '--llm local:PATH of the .gguf file, at the same path on every worker',
      );
    if (model === '') throw new SweepOptionError('--llm local:MODEL needs a .gguf file: --llm local:PATH');
    return;
  }
  await createProvider({ spec: s, ...server, timeoutMs });
}

/**
 * The consent of a sweep's runs to the LLM servers the SOP names: the --allow-base-url entries, the
 * user's allow file and, on a terminal in this process, a question (on a queue the workers' flags
 * decide). With whether the runs need an LLM (rule agents only: no key, no server) and, if they
 * do, the LLM choice checked now (checkLlm).
 */
export async function checkSweepLlm(
  sop: Sop,
  o: { llm?: string; baseUrl?: string; timeoutMs?: number; queue?: string; allowBaseUrl?: string[]; allowBaseUrlEnv?: string[] },
): Promise<{ cliAllow: LlmAllowEntry[]; consent: LlmConsent; llm: boolean }> {
  const cliAllow = cliLlmAllowEntries(o.allowBaseUrl, o.allowBaseUrlEnv);
  const consent = new LlmConsent({
    allow: () => [...cliAllow, ...fileLlmAllowEntries()],
    ...(process.stdin.isTTY && o.queue === undefined ? { ask: askYesNo } : {}),
  });
  const llm = needsLlm(sop, o.llm);
  if (llm) await checkLlm(o.llm ?? sop.llm?.provider, sweepServer(sop, o.baseUrl, consent), o.timeoutMs, o.queue !== undefined);
  return { cliAllow, consent, llm };
}

export function checkPricing(file: string | undefined): void {
  if (file !== undefined) loadPricing(file);
}

/** A required input of the SOP that some run of the grid has no value for. */
export function checkRequiredInputs(sop: Sop, points: readonly GridPoint[]): void {
  for (const [name, def] of Object.entries(sop.inputs ?? {})) {
    if (!inputRequired(sop, name, def)) continue;
    const without = points.filter((p) => !Object.hasOwn(p.inputs, name));
    if (without.length === 0) continue;
    throw new SweepOptionError(
      `input "${name}" is required${def.description ? ` (${def.description})` : ''} and ${without.length} of ${points.length} runs have none: ` +
        `give --input ${name}=VALUE or a "${name}" column in --inputs`,
    );
  }
}

/**
 * People's roles: every run reads its turns from the same --answers file (from its start), which
 * must be readable; without one, a sweep with a human role cannot run unattended.
 */
export function checkHumans(sop: Sop, answers: string | undefined): void {
  const humans = Object.entries(sop.agents)
    .filter(([, a]) => a.human)
    .map(([n]) => n);
  if (answers !== undefined) {
    new AnswersFileInput(resolve(answers)); // read now: a missing or malformed file is told once
    return;
  }
  if (humans.length > 0)
    throw new SweepOptionError(
      `${humans.join(', ')} ${humans.length > 1 ? 'are' : 'is'} played by a person; a sweep runs unattended: ` +
        `give their turns with --answers FILE (a JSON list of strings, or one answer per line), read from its start by every run`,
    );
}
