// Running a SOP from code: runSop, resumeRun and forkRun return a RunHandle. They, and the CLI's
// run, resume and fork commands, start their runs through startRun (src/api/start.ts), which
// makes every choice of a run (src/api/choices.ts).
import { resolve } from 'node:path';
import { newRunId } from '../features/journal/run-folder.js';
import type { RunResult } from '../core/runtime/run-loop.js';
import { prepareFork, prepareResume } from './continue.js';
import { appliedSettings } from '../features/journal/applied-settings.js';
import { loadRunRecord } from '../features/journal/record.js';
import { JournalError } from '../features/journal/reader.js';
import type { Sop } from '../format/sop/types.js';
import { makeRedactor } from '../shared/util/redact.js';
import { apiOf, keptOnResume, launchOf as launchFromNamed, namedOf, type Launch } from './launch.js';
import type { RunHandle } from './handle.js';
import { loadSop } from './load-sop.js';
import { EngineError } from '../shared/errors.js';
import type { RunSopOptions } from './options.js';
import { startRun, type StartedRun } from './start.js';

export type { LlmChoice, RunSopOptions } from './options.js';
export { startRun, type StartedRun } from './start.js';

/** A handle whose result rejects (and whose iteration throws) when the run cannot start. */
function handleOf(start: () => Promise<StartedRun>, runId: string, dir: string | undefined): RunHandle {
  const started = start();
  started.catch(() => {});
  let stopped = false;
  const result = started.then((s) => s.handle.result);
  result.catch(() => {});
  return {
    runId,
    dir,
    result,
    stop: () => {
      stopped = true;
      void started.then(
        (s) => s.handle.stop(),
        () => {},
      );
    },
    async *[Symbol.asyncIterator]() {
      const s = await started;
      if (stopped) s.handle.stop();
      yield* s.handle;
    },
  };
}

/**
 * Run a SOP (an object from loadSop or defineSop, or a file, loaded at once: a bad one throws
 * SopError here). The run starts at once; iterate the handle for its events, await `result`.
 */
export function runSop(sop: Sop | string, options: RunSopOptions = {}): RunHandle {
  const loaded = typeof sop === 'string' ? loadSop(sop) : sop;
  const runId = options.runId ?? newRunId(loaded.name);
  const dir = options.out !== undefined ? resolve(options.out, runId) : undefined;
  return handleOf(() => startRun(loaded, { ...options, runId, launch: options.launch ?? launchOf(options) }), runId, dir);
}

/** What sop resume and resumeRun reuse of a run's options (the option table says which: ./launch.ts). */
const launchOf = (o: RunSopOptions): Launch => launchFromNamed(namedOf(o));

/** Continue an interrupted or killed run from its last checkpoint, in its own folder (a bad folder throws JournalError here). */
export function resumeRun(runDir: string, options: Omit<RunSopOptions, 'out' | 'runId' | 'inputs' | 'seed'> = {}): RunHandle {
  const { record, continuation } = prepareResume(runDir); // holds the run folder's lock
  const unlock = continuation.unlock ?? (() => {});
  try {
    if (record.status === 'finished')
      throw new JournalError(`${runDir}: the run already finished; nothing to resume (fork it from an earlier turn)`);
    const o = withLaunch(options, continuation.launch, record.started.file);
    // journaled on `resumed`: the run's command line with what is given now, for the next resume
    const launch = o.launch ?? { ...continuation.launch, ...launchOf(options) };
    const start = () =>
      startRun(continuation.sop, { ...o, launch }, continuation).catch((err: unknown) => {
        unlock(); // the run folder did not take the lock over (or has released it: idempotent)
        throw err;
      });
    return handleOf(start, continuation.runId, resolve(runDir));
  } catch (err) {
    unlock();
    throw err;
  }
}

/** A new run (a new folder, next to the original unless `out` is given) continuing from run `runDir` after `turn` turns. */
export function forkRun(runDir: string, turn: number, options: Omit<RunSopOptions, 'runId' | 'inputs' | 'seed'> = {}): RunHandle {
  if (!Number.isInteger(turn) || turn < 0) throw new EngineError(`turn must be a turn number (0 or more), got ${turn}`, 'OPTION');
  const original = loadRunRecord(runDir);
  const { launch, settings } = appliedSettings(original, turn); // as the run was at that turn
  if (options.maxTurns !== undefined) settings.max_turns = options.maxTurns;
  if (options.model !== undefined) settings.model = options.model;
  const llmSpec = typeof options.llm === 'string' ? (launchOf({ llm: options.llm }).llm as string) : undefined;
  const { continuation, folder } = prepareFork(runDir, {
    at: turn,
    out: options.out,
    newRunId: newRunId(original.started.sop),
    sameLlm: options.llm === undefined || llmSpec === launch.llm,
    settings,
    launch: { ...launch, ...(llmSpec !== undefined ? { llm: llmSpec } : {}) },
    redact: makeRedactor(),
  });
  const o = withLaunch({ ...options, out: undefined }, continuation.launch, original.started.file);
  return handleOf(() => startRun(continuation.sop, o, continuation), continuation.runId, folder);
}

/** What a continued run takes from the original's command line unless given now (./launch.ts). */
function withLaunch(o: RunSopOptions, launch: Record<string, unknown>, file: string): RunSopOptions {
  const kept = apiOf(keptOnResume(namedOf(o), launch));
  return {
    ...o,
    ...kept,
    llm: o.llm ?? kept.llm,
    file: o.file ?? file,
    rerun: o.rerun ?? { autoRun: o.autoRun === true },
  };
}

export type { RunResult };
