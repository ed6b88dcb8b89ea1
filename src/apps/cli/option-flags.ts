// The flags of the option table (src/api/option-table.ts) for each command that takes them: their
// yargs declarations, and the options they give (by the table's names, in the API's units). No
// command declares a flag of the table by hand.
import type { Options } from 'yargs';
import { EngineError } from '../../shared/errors.js';
import { OPTIONS, type OptionCommand } from '../../api/option-table.js';
import { optionEntries, type FlagOptions } from '../../api/option-types.js';

/**
 * The yargs options of a command's flags from the table, in the table's order (typed as none: their
 * values are read by `tableArgs`, so the command's own options keep their types).
 */
export function tableFlags(command: OptionCommand): Record<never, Options> {
  const out: Record<string, Options> = {};
  for (const [, spec] of optionEntries()) {
    const use = spec.on?.[command];
    if (use === undefined || spec.flag === undefined) continue;
    const o: Options = { describe: typeof use === 'string' ? use : use.help };
    if (spec.type === 'array') Object.assign(o, { type: 'string', array: true });
    else if (spec.type !== undefined) o.type = spec.type;
    if (spec.choices) o.choices = [...spec.choices];
    if (typeof use === 'object') o.default = use.default;
    out[spec.flag] = o;
  }
  return out;
}

/** The options a command's flags give, by the table's names and in the API's units (--timeout 2: timeoutMs 2000). */
export function tableArgs(command: OptionCommand, a: Record<string, unknown>): FlagOptions {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of optionEntries()) {
    if (spec.on?.[command] === undefined || spec.flag === undefined) continue;
    const v = a[spec.flag];
    if (v === undefined) continue;
    if (spec.type === 'array') out[name] = (Array.isArray(v) ? v : [v]).map(String);
    else out[name] = spec.unit && typeof v === 'number' ? v * spec.unit.scale : v;
  }
  return out;
}

/** The flag of an option as a message names it (`--timeout`), or undefined for an option of the API only. */
export function flagOf(name: string): string | undefined {
  const flag = (OPTIONS as Record<string, { flag?: string }>)[name]?.flag;
  return flag === undefined ? undefined : `--${flag}`;
}

/** --local-threads: the threads of every local model this process loads (SOP_LOCAL_THREADS, which it sets). */
export function useLocalThreads(n: number | undefined): void {
  if (n === undefined) return;
  if (!Number.isInteger(n) || n < 1) throw new EngineError(`--local-threads must be a whole number above 0 (got ${String(n)})`, 'OPTION');
  process.env.SOP_LOCAL_THREADS = String(n);
}
