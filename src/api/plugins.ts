// Plugins: JavaScript modules a SOP names in "plugins" (paths relative to the SOP file) that
// register worlds, rule policies and metrics through `sop/extend` (docs/population.md#plugins).
// Loading a module runs its code as the user, so it needs the user's approval, as an MCP server's
// start does (src/features/mcp/approval.ts): --yes, a person at a terminal shown the module's
// absolute path, or an entry of the user's allow file ("plugins": [{"path": ABSOLUTE, "sha256"?:
// HEX}]). A worker (`sop worker`) loads only modules inside its --root folders. A refusal is one
// line; nothing of the module runs. A module is loaded once per process.
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync, statSync } from 'node:fs';
import { dirname, isAbsolute, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { EngineError } from '../shared/errors.js';
import { allowFile, allowFileEntries } from '../core/io/allow-file.js';
import type { Sop } from '../format/sop/types.js';
import { parseSopText, readSopText } from './loader/checked-load.js';
import { defineWorld, registerWorld } from '../features/population/worlds/index.js';
import { registerRulePolicy } from '../features/population/rules.js';
import { registerMetric } from '../features/population/metrics.js';
import { readRunStarted } from '../features/journal/reader.js';
import { definePlugin, type DefinedPlugin, type RunPlugin } from '../core/runtime/hooks.js';
import { addModuleRunPlugin } from './module-run-plugins.js';

export interface PluginApproval {
  /** --yes: load without asking. */
  unattended?: boolean;
  /** A person at a terminal: shown the module's path, says yes or no. */
  ask?: (text: string) => Promise<boolean>;
  /** The entries of the user's allow file (read when a module is first approved). */
  allow?: () => PluginAllowEntry[];
  /** A worker's --root folders: a module outside them is refused whatever else allows it. */
  roots?: readonly string[];
  /** The command, for the refusal's advice ("sop worker": start it with --yes). */
  command?: string;
}

export interface PluginAllowEntry {
  /** The module's absolute path. */
  path: string;
  /** When given, the module's content must hash to it (SHA-256, hex). */
  sha256?: string;
}

export class PluginError extends EngineError {
  constructor(message: string) {
    super(message, 'PLUGIN');
    this.name = 'PluginError';
  }
}

/** The module whose default export is running (addRunPlugin records its plugins under it). */
let loading: string | undefined;

/**
 * Adds a run plugin (definePlugin of `sop/extend`, with options of its own if it declares them) to
 * the runs of SOPs that name this module; only while the module's default export runs.
 */
function addRunPlugin(plugin: DefinedPlugin<RunPlugin>): void {
  if (loading === undefined) throw new PluginError('addRunPlugin is called by a plugin module while it loads (its default export)');
  if (typeof plugin !== 'function' || typeof plugin.pluginName !== 'string')
    throw new PluginError(`plugin ${loading}: addRunPlugin takes what definePlugin returns`);
  addModuleRunPlugin(loading, plugin);
}

/** What a module's default export, when it is a function, is called with. */
export const PLUGIN_API = Object.freeze({ defineWorld, registerWorld, registerRulePolicy, registerMetric, definePlugin, addRunPlugin });

const loaded = new Set<string>();

/** The entries of the "plugins" section of the user's allow file (none without a file). */
export function filePluginEntries(file = allowFile()): PluginAllowEntry[] {
  const error = (m: string) => new PluginError(m);
  return allowFileEntries('plugins', file, error, (raw, where) => {
    const r = raw as Record<string, unknown> | null;
    if (!r || typeof r !== 'object' || typeof r.path !== 'string' || !isAbsolute(r.path))
      throw new PluginError(`${where} must be {"path": ABSOLUTE PATH} (and "sha256" to pin its content)`);
    if (r.sha256 !== undefined && (typeof r.sha256 !== 'string' || !/^[0-9a-f]{64}$/i.test(r.sha256)))
      throw new PluginError(`${where}: "sha256" must be 64 hex digits`);
    return { path: resolve(r.path), ...(typeof r.sha256 === 'string' ? { sha256: r.sha256.toLowerCase() } : {}) };
  });
}

/** The modules a SOP names, as absolute paths (relative to the SOP file's folder). */
export function pluginPaths(sop: Pick<Sop, 'plugins'>, file: string): string[] {
  return (sop.plugins ?? []).map((p) => resolve(dirname(file), p));
}

const within = (path: string, root: string) => path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);

/** Approves and loads one module; PluginError (one line) when it is refused or cannot be loaded. */
async function loadOne(path: string, approval: PluginApproval): Promise<void> {
  let real: string | undefined;
  try {
    real = realpathSync(path);
  } catch {
    real = undefined;
  }
  if (real === undefined || !statSync(real).isFile()) throw new PluginError(`plugin ${path} was not loaded: there is no such file`);
  if (loaded.has(real)) return;
  if (approval.roots && !approval.roots.some((r) => within(real, r)))
    throw new PluginError(`plugin ${real} was not loaded: it is outside this worker's roots (${approval.roots.join(', ')})`);
  const allowedByFile = () => {
    const entries = approval.allow ? approval.allow() : [];
    const matching = entries.filter((e) => e.path === real || e.path === path);
    if (matching.length === 0) return false;
    const hash = createHash('sha256').update(readFileSync(real)).digest('hex');
    return matching.some((e) => e.sha256 === undefined || e.sha256 === hash);
  };
  let ok = approval.unattended === true || allowedByFile();
  if (!ok && approval.ask) {
    ok = await approval.ask(
      `The SOP names the plugin ${real}: a JavaScript module that runs as you, with your files and network. Load it?`,
    );
    if (!ok) throw new PluginError(`plugin ${real} was not loaded: you did not approve it`);
  }
  if (!ok) {
    const yes = approval.command === 'sop worker' ? 'start the worker with --yes' : 'give --yes';
    throw new PluginError(
      `plugin ${real} was not loaded: loading it runs its code, which needs your approval; ${yes}, or add {"path": ${JSON.stringify(real)}} to "plugins" in ${allowFile()} (docs/population.md#plugins)`,
    );
  }
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(real).href)) as { default?: unknown };
    loading = real;
    if (typeof module.default === 'function') await (module.default as (api: typeof PLUGIN_API) => unknown)(PLUGIN_API);
  } catch (err) {
    throw new PluginError(`plugin ${real} failed to load: ${(err as Error).message.split('\n')[0]}`);
  } finally {
    loading = undefined;
  }
  loaded.add(real);
}

/** Loads the modules a SOP names, each with the user's approval; the absolute paths loaded. */
export async function loadPlugins(sop: Pick<Sop, 'plugins'>, file: string, approval: PluginApproval): Promise<string[]> {
  const paths = pluginPaths(sop, file);
  for (const p of paths) await loadOne(p, approval);
  return paths;
}

/**
 * Loads the modules the SOP file names (read as JSON, before it is validated: the worlds and
 * policies they register are what its validation checks). Nothing when it names none, or when it
 * cannot be read or parsed (its loading reports that).
 */
export async function loadSopFilePlugins(file: string, approval: PluginApproval): Promise<string[]> {
  let doc: unknown;
  try {
    doc = parseSopText(readSopText(file), file);
  } catch {
    return [];
  }
  const plugins = (doc as { plugins?: unknown } | null)?.plugins;
  if (!Array.isArray(plugins)) return [];
  return loadPlugins({ plugins: plugins.filter((p): p is string => typeof p === 'string') }, file, approval);
}

/**
 * Loads the modules the SOP a run ran names (the document in its journal's run_started, read
 * alone), each with the user's approval, before `sop resume` or `sop fork` rebuilds the run's
 * state: the worlds, policies and metrics they register are what that state is made of. Their
 * paths are relative to the SOP file as the run named it. Nothing when the SOP names none, or
 * when the journal cannot be read (continuing reports that).
 */
export async function loadRunPlugins(dir: string, approval: PluginApproval): Promise<string[]> {
  let started;
  try {
    started = readRunStarted(dir);
  } catch {
    return [];
  }
  const plugins = (started.document as { plugins?: unknown } | undefined)?.plugins;
  if (!Array.isArray(plugins) || typeof started.file !== 'string') return [];
  return loadPlugins({ plugins: plugins.filter((p): p is string => typeof p === 'string') }, started.file, approval);
}
