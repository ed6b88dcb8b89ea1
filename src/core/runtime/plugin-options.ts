// Options a plugin of one's own declares (definePlugin's `options`: a name, a type, a default and
// a help text). A run is given them by plugin name (RunSopOptions.pluginOptions, the CLI's
// --plugin-option PLUGIN.OPTION=VALUE); each plugin is handed only the options it declares, with
// their defaults, in their types. The values reach it through this module, not the run context,
// so no other plugin reads them. A value for an option no plugin declares is refused in one line.
import { EngineError, opt, say } from '../../shared/errors.js';

/** An option a plugin declares. */
export interface PluginOptionSpec {
  type: 'string' | 'number' | 'boolean';
  default?: string | number | boolean;
  /** One line: what it does (the CLI's --plugin-option error lists it). */
  help: string;
}

/** A plugin's declared options. */
export type PluginOptionSpecs = Readonly<Record<string, PluginOptionSpec>>;

/** The values a plugin is handed: its declared options, each given or its default. */
export type PluginOptionValues = Readonly<Record<string, string | number | boolean | undefined>>;

/** What a run is given: options by plugin name, then by option name (strings are read in the declared type). */
export type GivenPluginOptions = Readonly<Record<string, Readonly<Record<string, unknown>>>>;

export class PluginOptionError extends EngineError {
  constructor(message: ConstructorParameters<typeof EngineError>[0]) {
    super(message, 'OPTION');
    this.name = 'PluginOptionError';
  }
}

interface RunPluginOptions {
  given: GivenPluginOptions;
  /** The plugins that declared options in this run, with what they declare. */
  declared: Map<string, PluginOptionSpecs>;
}

const byRun = new WeakMap<object, RunPluginOptions>();

/** The run (its context) is given these plugin options (src/core/runtime/context.ts, before its plugins are made). */
export function givePluginOptions(ctx: object, given: GivenPluginOptions | undefined): void {
  byRun.set(ctx, { given: given ?? {}, declared: new Map() });
}

/** How an option is listed: `clock.tick_ms (number, default 1000): what it does`. */
export const describePluginOption = (plugin: string, name: string, s: PluginOptionSpec): string =>
  `${plugin}.${name} (${s.type}${s.default !== undefined ? `, default ${String(s.default)}` : ''}): ${s.help}`;

function valueOf(plugin: string, name: string, spec: PluginOptionSpec, v: unknown): string | number | boolean {
  const key = `${plugin}.${name}`;
  if (spec.type === 'string' && typeof v === 'string') return v;
  if (spec.type === 'number') {
    const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (typeof n === 'number' && Number.isFinite(n)) return n;
  }
  if (spec.type === 'boolean') {
    if (typeof v === 'boolean') return v;
    if (v === 'true' || v === 'false') return v === 'true';
  }
  throw new PluginOptionError(say`${opt('pluginOptions', { key })} must be a ${spec.type} (got ${JSON.stringify(v) ?? String(v)})`);
}

/** The options a plugin declares, as its run gives them (defaults filled in); refuses a value it does not declare. */
export function pluginOptionsFor(ctx: object, plugin: string, specs: PluginOptionSpecs): PluginOptionValues {
  const run = byRun.get(ctx);
  run?.declared.set(plugin, specs);
  const given = run?.given[plugin] ?? {};
  for (const name of Object.keys(given)) if (!Object.hasOwn(specs, name)) throw unknownOption(plugin, name, specs);
  const out: Record<string, string | number | boolean | undefined> = {};
  for (const [name, spec] of Object.entries(specs)) {
    const v = given[name];
    out[name] = v === undefined ? spec.default : valueOf(plugin, name, spec, v);
  }
  return Object.freeze(out);
}

function unknownOption(plugin: string, name: string, specs: PluginOptionSpecs): PluginOptionError {
  const list = Object.entries(specs).map(([n, s]) => describePluginOption(plugin, n, s));
  return new PluginOptionError(
    say`${opt('pluginOptions', { key: `${plugin}.${name}` })}: plugin "${plugin}" declares no option "${name}" (${list.length > 0 ? `it declares ${list.join('; ')}` : 'it declares none'})`,
  );
}

/** After the run's plugins are made: options given to a plugin that declared none in this run are refused. */
export function checkPluginOptionsTaken(ctx: object): void {
  const run = byRun.get(ctx);
  if (!run) return;
  for (const [plugin, values] of Object.entries(run.given)) {
    if (run.declared.has(plugin)) continue;
    const name = Object.keys(values)[0];
    if (name === undefined) continue;
    throw new PluginOptionError(
      say`${opt('pluginOptions', { key: `${plugin}.${name}` })}: no plugin of this run is named "${plugin}" or declares options${run.declared.size > 0 ? ` (those that do: ${[...run.declared.keys()].join(', ')})` : ''}`,
    );
  }
}

/** `--plugin-option PLUGIN.OPTION=VALUE` pairs as options by plugin name (values stay strings: each is read in its declared type). */
export function parsePluginOptionPairs(pairs: readonly string[]): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const pair of pairs) {
    const m = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)=(.*)$/s.exec(pair);
    if (!m) throw new PluginOptionError(say`${opt('pluginOptions', { arg: true })} "${pair}" must look like PLUGIN.OPTION=VALUE`);
    (out[m[1]!] ??= {})[m[2]!] = m[3]!;
  }
  return out;
}

/** Options by plugin name as `PLUGIN.OPTION=VALUE` pairs (what the flag says of them). */
export const pluginOptionPairs = (given: GivenPluginOptions): string[] =>
  Object.entries(given).flatMap(([plugin, values]) => Object.entries(values).map(([name, v]) => `${plugin}.${name}=${String(v)}`));
