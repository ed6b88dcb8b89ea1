// The options `sop check` and `sop plan` share: how their dry runs are made, and JSON output.
import type { Argv } from 'yargs';

export function withDryRunOptions<T>(y: Argv<T>) {
  return y
    .option('max-turns', { type: 'number', describe: 'Stop a dry run after this many turns (default 200)' })
    .option('pricing', { type: 'string', describe: 'Prices of models over the shipped pricing.json' })
    .option('input', { type: 'string', array: true, describe: 'An input of the SOP, as name=value (repeatable)' })
    .option('goal', { type: 'string', describe: 'Shorthand for --input goal=TEXT' })
    .option('json', { type: 'boolean', default: false, describe: 'Print the report as one JSON object' });
}
