// sop fork RUN_DIR --at TURN: a new run that starts from the state of RUN_DIR after TURN turns
// (its journal up to that turn boundary is copied), to try another model, prompt or answers.
import { prepareFork } from '../../api/continue.js';
import { damageWarning, loadRunRecord } from '../../features/journal/record.js';
import { appliedSettings } from '../../features/journal/applied-settings.js';
import { newRunId } from '../../features/journal/run-folder.js';
import { configureSecrets, makeRedactor } from '../../shared/util/redact.js';
import { continuedRunOptions, redactedNames, type ResumeCommandOptions } from './resume-command.js';
import { launchSettings, runCommand, type RunCommandOptions } from './run-command.js';
import { EngineError } from '../../shared/errors.js';
import { approveRunPlugins } from './plugin-approval.js';

export type ForkCommandOptions = ResumeCommandOptions & {
  /** The turn to branch after; or `step` (a population state's step to branch before). */
  at?: number;
  step?: number;
  /** With `step`: the population state (default: the first one the run visited). */
  state?: string;
};

/** The turn before a population state's step (its first visit), from the run's journal. */
function turnBeforeStep(record: ReturnType<typeof loadRunRecord>, step: number, state?: string): number {
  if (!Number.isInteger(step) || step < 1) throw new EngineError(`--step must be a step number (1 or more), got ${step}`, 'OPTION');
  const steps = record.effective.filter(
    (e): e is Extract<typeof e, { type: 'population_step' }> => e.type === 'population_step' && (state === undefined || e.state === state),
  );
  if (steps.length === 0)
    throw new EngineError(state ? `the run took no step of population state "${state}"` : 'the run took no population step', 'OPTION');
  const first = steps[0]!;
  const found = steps.find((e) => e.state === first.state && e.visit === first.visit && e.step === step);
  if (!found) {
    const last = steps.filter((e) => e.state === first.state && e.visit === first.visit).at(-1)!;
    throw new EngineError(`state "${first.state}" took steps 1 to ${last.step}; --step ${step} is not one of them`, 'OPTION');
  }
  return found.turn - 1;
}

export async function forkCommand(o: ForkCommandOptions): Promise<number> {
  await approveRunPlugins(o.dir, { yes: o.yes, command: 'sop fork' }); // the SOP's "plugins", before its state is rebuilt
  const original = loadRunRecord(o.dir);
  const at = o.step !== undefined ? turnBeforeStep(original, o.step, o.state) : o.at;
  if (at === undefined || !Number.isInteger(at) || at < 0)
    throw new EngineError(`--at must be a turn number (0 or more), got ${at}`, 'OPTION');
  // the settings that applied at that turn: the launch's, or those of the resume that ran it
  const applied = appliedSettings(original, at);
  const launch = applied.launch;
  configureSecrets({ names: redactedNames(o, launch), urls: [o.baseUrl] });
  const redact = makeRedactor();
  if (original.damage) process.stderr.write(redact(`${damageWarning(original.damage)}\n`));
  for (const w of original.lineWarnings) process.stderr.write(redact(`${w}\n`));
  const settings = applied.settings;
  if (o.maxTurns !== undefined) settings.max_turns = o.maxTurns;
  if (o.model !== undefined) settings.model = o.model;
  const runOptions: RunCommandOptions = {
    ...continuedRunOptions(o, original.started.file, launch),
    model: settings.model,
    maxTurns: settings.max_turns,
  };
  const newLaunch = launchSettings(runOptions);
  const sop = original.started.sop;
  const { continuation, folder } = prepareFork(o.dir, {
    at,
    out: o.out,
    newRunId: newRunId(sop),
    sameLlm: newLaunch.llm === launch.llm,
    settings,
    launch: newLaunch,
    redact,
  });
  if (!o.json) process.stderr.write(redact(`Forking run ${original.started.run_id} at turn ${continuation.fromTurn} into ${folder}\n`));
  return runCommand({ ...runOptions, out: continuation.outDir }, continuation);
}
