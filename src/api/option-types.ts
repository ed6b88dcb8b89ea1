// What is derived from the option table (./option-table.ts): the check that every option of
// RunSopOptions has its entry, the type of the options flags give, and the walk over its entries.
import { OPTIONS } from './option-table.js';
import type { OptionSpec } from './option-spec.js';
import type { RunSopOptions } from './options.js';

export type OptionName = keyof typeof OPTIONS;

/** Every option of RunSopOptions has its entry in the table (a compile error names the one missing). */
type ApiKey<S> = S extends { api: infer A } ? (A extends readonly [infer K, string] ? K : A extends string ? A : never) : never;
type Declared = ApiKey<(typeof OPTIONS)[OptionName]>;
type Undeclared = Exclude<keyof RunSopOptions, Declared>;
const everyOptionDeclared: [Undeclared] extends [never] ? true : { undeclared: Undeclared } = true;
void everyOptionDeclared;

/** The value of an option as a flag gives it (in the API's unit). */
type FlagValue<S> = S extends { choices: readonly (infer C)[] }
  ? C
  : S extends { type: 'number' }
    ? number
    : S extends { type: 'boolean' }
      ? boolean
      : S extends { type: 'array' }
        ? string[]
        : S extends { type: 'string' }
          ? string
          : never;

/** The options given by flags, by name, in the API's units (what the CLI's commands take). */
export type FlagOptions = {
  -readonly [K in OptionName as FlagValue<(typeof OPTIONS)[K]> extends never ? never : K]?: FlagValue<(typeof OPTIONS)[K]>;
};

/** The table's entry of an option. */
export const optionSpec = (name: string): OptionSpec | undefined => (OPTIONS as Record<string, OptionSpec>)[name];

/** Entries of the table, typed loosely (for code that walks it). */
export const optionEntries = (): Array<[string, OptionSpec]> => Object.entries(OPTIONS as Record<string, OptionSpec>);
