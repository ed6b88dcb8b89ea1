#!/usr/bin/env node
// Entry point of the `sop` binary.
import { ignoreClosedOutput } from './closed-output.js';
import { reportError } from './errors.js';
import { plainValidateFiles } from './plain-validate.js';

/** `sop validate FILE...`: what cli.ts's validate command does for it, without the argument parser. */
async function plainValidate(files: string[]): Promise<void> {
  const { validateCommand } = await import('./validate-command.js');
  process.exitCode = validateCommand(files, { quiet: false });
}

async function parseAndRun(): Promise<void> {
  const [{ hideBin }, { buildCli }] = await Promise.all([import('yargs/helpers'), import('./cli.js')]);
  await buildCli(hideBin(process.argv)).parseAsync();
}

ignoreClosedOutput();
// The arguments after `node main.js` (what hideBin gives outside Electron).
const files = process.versions.electron === undefined ? plainValidateFiles(process.argv.slice(2)) : undefined;
(files ? plainValidate(files) : parseAndRun()).catch((err: unknown) => {
  process.exitCode = reportError(err);
});
