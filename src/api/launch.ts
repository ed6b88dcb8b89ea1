// The launch settings of a run, made from the option table (./option-table.ts): what run_started
// records of its options (and `resumed` of a resume's), and what resumeRun, forkRun, sop resume
// and sop fork take back from them unless given again. An option a resume keeps says so in the
// table (`resume`); nothing here names one.
import { resolve } from 'node:path';
import { absoluteLlmSpec } from '../core/llm/factory.js';
import { parseBindings } from '../features/mcp/slots.js';
import { parsePluginOptionPairs, pluginOptionPairs, type GivenPluginOptions } from '../core/runtime/plugin-options.js';
import { REDACTED } from '../shared/util/redact.js';
import type { OptionSpec } from './option-table.js';
import { optionEntries } from './option-types.js';
import type { RunSopOptions } from './options.js';

/** Launch settings, as run_started records them. */
export type Launch = Record<string, string | number | boolean>;

/** Options by their names in the table (the CLI's commands take them so; the API's are made from them). */
export type NamedOptions = Record<string, unknown>;

/** The options of RunSopOptions by their names in the table (an object option's fields each on its own). */
export function namedOf(o: RunSopOptions): NamedOptions {
  const out: NamedOptions = {};
  const bag = o as Record<string, unknown>;
  for (const [name, spec] of optionEntries()) {
    if (spec.api === false) continue;
    const v = typeof spec.api === 'string' ? bag[spec.api] : (bag[spec.api[0]] as Record<string, unknown> | undefined)?.[spec.api[1]];
    if (v === undefined) continue;
    // a record of KEY=VALUE pairs (bind, pluginOptions) is a list of them on the flag
    out[name] =
      name === 'bind' && typeof v === 'object'
        ? Object.entries(v as Record<string, string>).map(([k, t]) => `${k}=${t}`)
        : name === 'pluginOptions' && typeof v === 'object'
          ? pluginOptionPairs(v as GivenPluginOptions)
          : v;
  }
  return out;
}

/** RunSopOptions of options by their names (inputs are the caller's: the CLI parses its --input pairs). */
export function apiOf(named: NamedOptions): RunSopOptions {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of optionEntries()) {
    const v = named[name];
    if (spec.api === false || v === undefined || name === 'inputs') continue;
    if (typeof spec.api === 'string')
      out[spec.api] =
        name === 'bind' && Array.isArray(v)
          ? parseBindings(v.map(String))
          : name === 'pluginOptions' && Array.isArray(v)
            ? parsePluginOptionPairs(v.map(String))
            : v;
    else out[spec.api[0]] = { ...(out[spec.api[0]] as object | undefined), [spec.api[1]]: v };
  }
  return out;
}

/** The launch setting of one value (undefined: nothing recorded). */
function recorded(spec: OptionSpec, v: unknown): string | number | boolean | undefined {
  const r = spec.resume!;
  if (typeof v === 'boolean') return v || spec.default !== 'false' ? v : undefined; // false is recorded only when it is no default
  if (typeof v === 'number') return v;
  if (Array.isArray(v)) return v.length > 0 ? v.map(String).join(r.sep ?? ',') : undefined;
  if (typeof v !== 'string' || v === '') return undefined; // a provider, an embedder or answers of your own are not recorded
  return r.absolute === 'path' ? resolve(v) : r.absolute === 'llm' ? absoluteLlmSpec(v) : v;
}

/** What a resume keeps of these options (paths made absolute; names and URLs, never secret values). */
export function launchOf(named: NamedOptions): Launch {
  const out: Launch = {};
  for (const [name, spec] of optionEntries()) {
    if (!spec.resume) continue;
    const v = recorded(spec, named[name]);
    if (v !== undefined) out[spec.resume.key] = v;
  }
  return out;
}

/** An option's value read back from launch settings (of the flag's type; what the journal redacted left out). */
function launched(spec: OptionSpec, raw: unknown): unknown {
  if (raw === undefined) return undefined;
  if (spec.type === 'array') {
    const words = typeof raw === 'string' ? raw.split(spec.resume?.sep ?? ',') : [];
    return words.filter((w) => w !== '' && !w.includes(REDACTED));
  }
  if (spec.type === 'boolean') return typeof raw === 'boolean' ? raw : undefined;
  if (spec.type === 'number') return typeof raw === 'number' ? raw : undefined;
  if (typeof raw !== 'string') return undefined;
  return spec.choices && !spec.choices.includes(raw) ? undefined : raw;
}

/**
 * The options of a continued run (resume, fork): each option a resume keeps is the one given now,
 * else the launch's (`either`: true if either is; `union`: the launch's and those given now).
 */
export function keptOnResume(given: NamedOptions, launch: Record<string, unknown>): NamedOptions {
  const out: NamedOptions = { ...given };
  for (const [name, spec] of optionEntries()) {
    if (!spec.resume) continue;
    const was = launched(spec, launch[spec.resume.key]);
    const now = given[name];
    const merge = spec.resume.merge ?? 'given';
    const v =
      merge === 'union'
        ? [...((was as string[] | undefined) ?? []), ...((now as string[] | undefined) ?? [])]
        : merge === 'either'
          ? now === true || was === true
          : (now ?? was);
    if (v !== undefined) out[name] = v;
  }
  return out;
}
