#!/usr/bin/env node
// Entry point of the `sop` binary. It imports the modules of the command line it is given, in one
// go: `sop validate FILE...` (nothing else) runs without the argument parser (plain-validate.ts).
import { plainValidateFiles } from './plain-validate.js';

// The arguments after `node main.js` (what yargs' hideBin gives outside Electron).
const files = process.versions.electron === undefined ? plainValidateFiles(process.argv.slice(2)) : undefined;

async function main(): Promise<void> {
  const [{ ignoreClosedOutput }, { reportError }, command] = await Promise.all([
    import('./closed-output.js'),
    import('./errors.js'),
    files
      ? import('./validate-command.js').then(({ validateWithPlugins }) => async () => {
          // what cli.ts's validate command does for it
          process.exitCode = await validateWithPlugins(files, { quiet: false });
        })
      : Promise.all([import('yargs/helpers'), import('./cli.js')]).then(([{ hideBin }, { buildCli }]) => async () => {
          await buildCli(hideBin(process.argv)).parseAsync();
        }),
  ]);
  ignoreClosedOutput();
  try {
    await command();
  } catch (err) {
    process.exitCode = reportError(err);
  }
}

void main();
