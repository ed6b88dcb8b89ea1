#!/usr/bin/env node
// Entry point of the `sop` binary.
import { hideBin } from 'yargs/helpers';
import { buildCli } from './cli.js';
import { reportError } from './errors.js';

buildCli(hideBin(process.argv))
  .parseAsync()
  .catch((err: unknown) => {
    process.exitCode = reportError(err);
  });
