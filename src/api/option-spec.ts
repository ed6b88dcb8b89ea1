// The shape of an entry of the option table (./option-table.ts).
import type { RunSopOptions } from './options.js';

/** The commands whose flags come from the table. */
export type OptionCommand = 'run' | 'resume' | 'fork' | 'sweep';

/** A command's flag: its help text, or its help text and its yargs default. */
export type FlagUse = string | { help: string; default: string | boolean };

export interface OptionSpec {
  /** Where the value goes in RunSopOptions: its key, or [key, field] of an object option; false: the CLI's only. */
  api: keyof RunSopOptions | readonly [keyof RunSopOptions, string] | false;
  /** The flag (without --); absent: the API's only. */
  flag?: string;
  /** The flag's type: array is a repeatable string. */
  type?: 'string' | 'number' | 'boolean' | 'array';
  choices?: readonly string[];
  /** The flag's value times `scale` is the API's (seconds on the flag, milliseconds in the API). */
  unit?: { api: string; flag: string; scale: number };
  /** What follows the flag where a message names it (--answers FILE). */
  metavar?: string;
  /** The API's default, as the docs say it. */
  default?: string;
  /**
   * How a resume (and a fork) keeps it: the launch setting run_started records (key), and how a
   * value given now meets the recorded one: `given` wins (the default), `either` (a boolean: true
   * if either is), `union` (lists: both). Absent: a resume does not keep it.
   */
  resume?: { key: string; merge?: 'given' | 'either' | 'union'; sep?: ',' | ' '; absolute?: 'path' | 'llm' };
  /** Help text of the flag, per command that takes it. */
  on?: Partial<Record<OptionCommand, FlagUse>>;
  /** What the docs say of the API option. */
  doc?: string;
}

/** The same help text for resume and fork. */
export const both = (use: FlagUse) => ({ resume: use, fork: use });

/**
 * A repeatable flag whose values a resume (and a fork) adds to those the run started with: the
 * launch setting is the flag with `_` for `-`, joined by `sep`.
 */
export const unionList = <A extends OptionSpec['api']>(
  api: A,
  flag: string,
  sep: ',' | ' ',
  on: Partial<Record<OptionCommand, FlagUse>>,
  doc?: string,
) => ({
  api,
  flag,
  type: 'array' as const,
  resume: { key: flag.replaceAll('-', '_'), merge: 'union' as const, sep },
  on,
  ...(doc !== undefined ? { doc } : {}),
});
