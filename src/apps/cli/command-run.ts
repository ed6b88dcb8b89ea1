// `sop run`: its options (the option table's, src/api/option-table.ts) and how they map to
// runCommand (./run-command.ts), imported only when it runs.
import type { Argv } from 'yargs';
import { tableArgs, tableFlags } from './option-flags.js';

export function withRunCommand<T>(y: Argv<T>): Argv<T> {
  return y.command(
    'run <file>',
    'Run a SOP (or an Agents 1.0 config) and write a run folder',
    (y) =>
      y
        .positional('file', {
          type: 'string',
          demandOption: true,
          describe: 'SOP file (.sop.json), or the name of a built-in SOP (sop list shows them)',
        })
        .options(tableFlags('run')),
    async (a) => {
      const { runCommand } = await import('./run-command.js');
      const o = tableArgs('run', a);
      process.exitCode = await runCommand({
        ...o,
        file: a.file,
        out: o.out ?? 'runs',
        inputs: o.inputs ?? [],
        json: o.json === true,
        quiet: o.quiet === true,
      });
    },
  );
}
