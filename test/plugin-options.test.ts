// Options a plugin of one's own declares (src/core/runtime/plugin-options.ts): given by plugin name
// (`pluginOptions`, `--plugin-option PLUGIN.OPTION=VALUE`), each plugin is handed only those it
// declares, in their types and with their defaults; a wrong one is refused in one line that lists
// what the plugin declares. A plugin module a SOP names adds its run plugin with addRunPlugin.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { runSop } from '../src/api/run-sop.js';
import { loadPlugins } from '../src/api/plugins.js';
import { apiOf, namedOf } from '../src/api/launch.js';
import { tableArgs, tableFlags } from '../src/apps/cli/option-flags.js';
import { cliMessage } from '../src/apps/cli/errors.js';
import { definePlugin, type RunPlugin } from '../src/extend.js';
import type { PluginOptionValues } from '../src/core/runtime/plugin-options.js';
import { EngineError } from '../src/shared/errors.js';

const DEBATE = resolve('examples/debate/debate.sop.json');

/** Two plugins, each recording the options it was handed. */
function plugins() {
  const seen: Record<string, PluginOptionValues> = {};
  const clock = definePlugin<RunPlugin>({
    name: 'clock',
    options: {
      tick_ms: { type: 'number', default: 1000, help: 'how often it ticks' },
      label: { type: 'string', default: 'tick', help: 'what a tick says' },
    },
    make: (_ctx, options) => ((seen.clock = options), {}),
  });
  const quiet = definePlugin<RunPlugin>({
    name: 'quiet',
    options: { verbose: { type: 'boolean', help: 'say more' } },
    make: (_ctx, options) => ((seen.quiet = options), {}),
  });
  return { seen, factory: (ctx: Parameters<typeof clock>[0]) => [clock(ctx)!, quiet(ctx)!] };
}

async function run(pluginOptions: Record<string, Record<string, unknown>>) {
  const { seen, factory } = plugins();
  const out = mkdtempSync(join(tmpdir(), 'sop-plugin-options-'));
  const handle = runSop(DEBATE, { llm: 'mock', maxTurns: 1, out, plugins: factory, pluginOptions });
  const result = await handle.result.catch((e: unknown) => ({ status: 'thrown', error: e as Error }));
  return { seen, result };
}

describe('options a plugin declares', () => {
  it('each plugin is handed only the options it declares: given ones in their type, the rest their defaults', async () => {
    const { seen, result } = await run({ clock: { tick_ms: '250' }, quiet: { verbose: true } });
    expect(result.error).toBeUndefined();
    expect(seen.clock).toEqual({ tick_ms: 250, label: 'tick' });
    expect(seen.quiet).toEqual({ verbose: true });
    expect(Object.isFrozen(seen.clock)).toBe(true);
  });

  it('an option the plugin does not declare is refused in one line that lists those it does, naming the flag on the CLI', async () => {
    const { result } = await run({ clock: { tick: 5 } });
    const err = result.error as EngineError;
    expect(err).toBeInstanceOf(EngineError);
    expect(err.code).toBe('OPTION');
    expect(err.option).toBe('pluginOptions');
    expect(err.message).toBe(
      'options.pluginOptions.clock.tick: plugin "clock" declares no option "tick" (it declares clock.tick_ms (number, default 1000): how often it ticks; clock.label (string, default tick): what a tick says)',
    );
    expect(cliMessage(err)).toMatch(/^--plugin-option clock\.tick=VALUE: plugin "clock" declares no option "tick"/);
  });

  it('a value of the wrong type, and options for a plugin the run does not have, are refused', async () => {
    const wrong = await run({ clock: { tick_ms: 'soon' } });
    expect((wrong.result.error as Error).message).toBe('options.pluginOptions.clock.tick_ms must be a number (got "soon")');
    const none = await run({ clocks: { tick_ms: 1 } });
    expect((none.result.error as Error).message).toMatch(
      /^options\.pluginOptions\.clocks\.tick_ms: no plugin of this run is named "clocks"/,
    );
  });

  it('--plugin-option PLUGIN.OPTION=VALUE is a flag of sop run, and gives the API its options by plugin name', async () => {
    expect(Object.keys(tableFlags('run'))).toContain('plugin-option');
    const a = await yargs([])
      .options(tableFlags('run'))
      .parse(['--plugin-option', 'clock.tick_ms=5', '--plugin-option', 'clock.label=a=b']);
    const api = apiOf(tableArgs('run', a));
    expect(api.pluginOptions).toEqual({ clock: { tick_ms: '5', label: 'a=b' } });
    expect(namedOf(api).pluginOptions).toEqual(['clock.tick_ms=5', 'clock.label=a=b']);
    expect(() => apiOf(tableArgs('run', { 'plugin-option': ['tick_ms=5'] }))).toThrow(/"tick_ms=5" must look like PLUGIN\.OPTION=VALUE/);
  });

  it('a plugin module the SOP names adds its run plugin with addRunPlugin, and it gets its options', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-plugin-module-'));
    const sop = { ...JSON.parse(readFileSync(DEBATE, 'utf8')), plugins: ['./clock.mjs'] } as Record<string, unknown>;
    delete sop.$schema;
    const file = join(dir, 'debate.sop.json');
    writeFileSync(file, JSON.stringify(sop));
    writeFileSync(
      join(dir, 'clock.mjs'),
      `export default (api) => api.addRunPlugin(api.definePlugin({
        name: 'module_clock',
        options: { tick_ms: { type: 'number', default: 1000, help: 'how often it ticks' } },
        make: (_ctx, options) => { globalThis.moduleClockSeen = options; return {}; },
      }));\n`,
    );
    await loadPlugins({ plugins: ['./clock.mjs'] }, file, { unattended: true });
    const r = await runSop(file, { llm: 'mock', maxTurns: 1, out: join(dir, 'runs'), pluginOptions: { module_clock: { tick_ms: '40' } } })
      .result;
    expect(r.error).toBeUndefined();
    expect((globalThis as { moduleClockSeen?: unknown }).moduleClockSeen).toEqual({ tick_ms: 40 });
  });
});
