// `sop resume` and `sop fork` (src/features/journal, docs/durability.md): their shared options, whose
// defaults come from the journaled run.
import type { Argv } from 'yargs';
import { tableArgs, tableFlags } from './option-flags.js';

export function withContinueCommands<T>(y: Argv<T>): Argv<T> {
  return y
    .command(
      'resume <dir>',
      'Continue an interrupted or killed run from its last turn boundary (options not given: as its last resume, else its start, had them)',
      (y) => continueOptions(y.positional('dir', { type: 'string', demandOption: true, describe: 'Run folder' }), 'resume'),
      async (a) => {
        const { resumeCommand } = await import('./resume-command.js');
        process.exitCode = await resumeCommand({ ...continueArgs('resume', a), dir: a.dir });
      },
    )
    .command(
      'fork <dir>',
      'Start a new run from the state of a run after a given turn (e.g. to try another model; options not given: as at that turn)',
      (y) =>
        continueOptions(y.positional('dir', { type: 'string', demandOption: true, describe: 'Run folder' }), 'fork') // --at, --step, --state too
          .check((a) => (a.at === undefined) !== (a.step === undefined) || 'give one of --at TURN or --step STEP'),
      async (a) => {
        const { forkCommand } = await import('./fork-command.js');
        process.exitCode = await forkCommand({ ...continueArgs('fork', a), dir: a.dir });
      },
    );
}

/** Options of resume and fork (defaults come from the journaled run): the option table's (src/api/option-table.ts). */
function continueOptions<T>(y: Argv<T>, command: 'resume' | 'fork') {
  return y.options(tableFlags(command));
}

/** The options resume and fork were given (by the table's names; --json and --quiet always). */
function continueArgs(command: 'resume' | 'fork', a: object) {
  const o = tableArgs(command, a as Record<string, unknown>);
  return { ...o, json: o.json === true, quiet: o.quiet === true };
}
