#!/usr/bin/env node
// Entry point of the `sop` binary.
import { hideBin } from 'yargs/helpers';
import { buildCli } from './cli.js';
import { ignoreClosedOutput } from './closed-output.js';
import { reportError } from './errors.js';

ignoreClosedOutput();
buildCli(hideBin(process.argv))
  .parseAsync()
  .catch((err: unknown) => {
    process.exitCode = reportError(err);
  });
