// sop resume RUN_DIR: continue an interrupted or killed run from its last turn boundary, in the
// same run folder, with the same SOP, LLM choice and answers file unless told otherwise.
import type { FlagOptions } from '../../api/option-types.js';
import { keptOnResume } from '../../api/launch.js';
import { prepareResume, rewriteDerivedFiles, type Continuation } from '../../api/continue.js';
import { damageWarning, type RunRecord } from '../../features/journal/record.js';
import { REDACTED, configureSecrets, makeRedactor } from '../../shared/util/redact.js';
import { runCommand, type RunCommandOptions } from './run-command.js';
import { EngineError } from '../../shared/errors.js';
import { count } from '../../shared/util/plural.js';
import { approveRunPlugins } from './plugin-approval.js';

/** The options of `sop resume` (and `sop fork`): the option table's, by their names (src/api/option-table.ts). */
export type ResumeCommandOptions = FlagOptions & { dir: string; json: boolean; quiet: boolean };

export async function resumeCommand(o: ResumeCommandOptions): Promise<number> {
  await approveRunPlugins(o.dir, { yes: o.yes, command: 'sop resume' }); // the SOP's "plugins", before its state is rebuilt
  // the run folder's lock is taken before its journal is read: a second resume stops here
  const { record, continuation } = prepareResume(o.dir);
  try {
    return await resumeLocked(o, record, continuation);
  } finally {
    continuation.unlock?.(); // the run folder released it already if the run started (idempotent)
  }
}

async function resumeLocked(o: ResumeCommandOptions, record: RunRecord, continuation: Continuation): Promise<number> {
  configureSecrets({ names: redactedNames(o, continuation.launch), urls: [o.baseUrl] });
  const redact = makeRedactor();
  const err = (s: string) => process.stderr.write(redact(s));
  if (record.damage) err(`${damageWarning(record.damage)}\n`); // files: continue from the last good checkpoint
  for (const w of record.lineWarnings) err(`${w}\n`);
  if (record.status === 'finished') {
    rewriteDerivedFiles(record, redact);
    err(
      `${o.dir}: the run already finished (in state "${record.finished?.final_state}" after ${count(record.turns, 'turn')}); nothing to resume. Use sop fork to branch from an earlier turn.\n`,
    );
    return 0;
  }
  const maxTurns = o.maxTurns ?? continuation.settings.max_turns;
  if (record.status === 'max_turns' && maxTurns <= record.turns) {
    err(`${o.dir}: the run stopped at its turn limit (${record.turns}); give a larger --max-turns to continue it\n`);
    return 1;
  }
  if (record.torn && !o.json) err(`note: the journal's last line was cut off when the run was killed; it is dropped\n`);
  if (!o.json) {
    err(`Resuming run ${continuation.runId} (${record.status}) from turn ${continuation.fromTurn}.\n`);
  }
  return runCommand(
    {
      ...continuedRunOptions(o, record.started.file, continuation.launch),
      out: continuation.outDir,
      // durability: code a crash interrupted runs again with --auto-run, given now or at launch
      // (or --yes at launch), else only with approval at a terminal
      rerunAutoRun: o.autoRun === true || continuation.launch.auto_run === true || continuation.launch.yes === true,
    },
    continuation,
  );
}

/**
 * Options of a run continued from a journal (resume, fork): what is given now, else what the
 * run was launched with, for each option the table says a resume keeps (src/api/launch.ts).
 */
export function continuedRunOptions(o: ResumeCommandOptions, file: string, launch: Record<string, unknown>): RunCommandOptions {
  const { dir: _dir, ...given } = o;
  const kept = keptOnResume(given, launch) as FlagOptions;
  if (kept.baseUrl?.includes(REDACTED)) {
    throw new EngineError(
      `the run was launched (or last resumed) with a --base-url holding a credential, which the journal does not keep (${kept.baseUrl}); give --base-url again`,
      'OPTION',
    );
  }
  return { ...kept, file, out: '', inputs: [], json: o.json, quiet: o.quiet };
}

/** Names given with --redact now and at launch. */
export function redactedNames(o: ResumeCommandOptions, launch: Record<string, unknown>): string[] {
  return (keptOnResume({ redact: o.redact }, launch).redact as string[] | undefined) ?? [];
}
