// sop fork RUN_DIR --at TURN: a new run that starts from the state of RUN_DIR after TURN turns
// (its journal up to that turn boundary is copied), to try another model, prompt or answers.
import { prepareFork } from '../api/continue.js';
import { damageWarning, loadRunRecord } from '../journal/record.js';
import { appliedSettings } from '../journal/applied-settings.js';
import { newRunId } from '../io/run-folder.js';
import { configureSecrets, makeRedactor } from '../util/redact.js';
import { continuedRunOptions, redactedNames, type ResumeCommandOptions } from './resume-command.js';
import { launchSettings, runCommand, type RunCommandOptions } from './run-command.js';
import { EngineError } from '../errors.js';

export interface ForkCommandOptions extends ResumeCommandOptions {
  at: number;
  out?: string;
}

export async function forkCommand(o: ForkCommandOptions): Promise<number> {
  if (!Number.isInteger(o.at) || o.at < 0) throw new EngineError(`--at must be a turn number (0 or more), got ${o.at}`, 'OPTION');
  const original = loadRunRecord(o.dir);
  // the settings that applied at that turn: the launch's, or those of the resume that ran it
  const applied = appliedSettings(original, o.at);
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
    ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
  };
  const newLaunch = launchSettings(runOptions);
  const sop = original.started.sop;
  const { continuation, folder } = prepareFork(o.dir, {
    at: o.at,
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
