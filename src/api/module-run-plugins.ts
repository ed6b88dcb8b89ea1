// The run plugins that plugin modules (a SOP's "plugins", src/api/plugins.ts) add with
// `addRunPlugin` while they load, by module. A run of a SOP gets those of the modules it names,
// after the built-in ones (src/api/engine/run-with-features.ts); their declared options come
// from --plugin-option / `pluginOptions` (src/core/runtime/plugin-options.ts).
import { realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { DefinedPlugin, RunPlugin } from '../core/runtime/hooks.js';
import type { RunContext } from '../core/runtime/context.js';
import type { Sop } from '../format/sop/types.js';

const byModule = new Map<string, DefinedPlugin<RunPlugin>[]>();

/** Records a run plugin of the module at `realPath` (called while the module loads). */
export function addModuleRunPlugin(realPath: string, plugin: DefinedPlugin<RunPlugin>): void {
  const list = byModule.get(realPath) ?? [];
  list.push(plugin);
  byModule.set(realPath, list);
}

const real = (path: string): string => {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
};

/** The run plugins of the modules a SOP names (those loaded in this process), in the SOP's order. */
export function moduleRunPlugins(sop: Pick<Sop, 'plugins'>, file: string | undefined): DefinedPlugin<RunPlugin>[] {
  if (!sop.plugins || sop.plugins.length === 0 || byModule.size === 0) return [];
  const base = file ? dirname(file) : process.cwd();
  return sop.plugins.flatMap((p) => byModule.get(real(resolve(base, p))) ?? []);
}

/** Makes them for a run (a plugin its SOP does not use is left out). */
export const makeModuleRunPlugins = (plugins: readonly DefinedPlugin<RunPlugin>[], ctx: RunContext): RunPlugin[] =>
  plugins.map((make) => make(ctx)).filter((p): p is RunPlugin => p !== undefined);
