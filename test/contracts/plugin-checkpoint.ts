// The contract of a plugin's state (RunPlugin.checkpoint / restoreCheckpoint, src/core/runtime/hooks.ts):
// what a run's checkpoint journals is JSON, says something after a run that a fresh run's does not,
// and restoring it into the plugin of a fresh run gives back an equal checkpoint.
import { describe, expect, it } from 'vitest';
import type { Run, RunPlugin } from '../../src/extend.js';

export interface CheckpointScenario {
  /** The plugin's name (the key of its state in a checkpoint's extensions). */
  plugin: string;
  /** What the run does. */
  about: string;
  /** A run, not started; each call makes a fresh one with the same options. */
  make(): Run;
}

/** The plugin of a run, by name (fails naming the plugins there are). */
export function pluginOf(run: Run, name: string): RunPlugin & Required<Pick<RunPlugin, 'checkpoint' | 'restoreCheckpoint'>> {
  const p = run.ctx.plugins.find((x) => x.name === name);
  if (!p?.checkpoint || !p.restoreCheckpoint)
    throw new Error(
      `no plugin "${name}" with checkpoint and restoreCheckpoint (plugins: ${run.ctx.plugins.map((x) => x.name).join(', ')})`,
    );
  return p as ReturnType<typeof pluginOf>;
}

/** The plugins of a run that keep state of their own in checkpoints. */
export function checkpointingPlugins(run: Run): string[] {
  return run.ctx.plugins.filter((p) => p.checkpoint !== undefined && p.restoreCheckpoint !== undefined).map((p) => p.name);
}

const json = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

export function pluginCheckpointContract(s: CheckpointScenario): void {
  describe(`plugin "${s.plugin}" checkpoint (${s.about})`, () => {
    it('journals JSON that a fresh run restores to an equal checkpoint', async () => {
      const played = s.make();
      const result = await played.run();
      expect(result.error).toBeUndefined();
      const saved = pluginOf(played, s.plugin).checkpoint();
      expect(json(saved), 'a checkpoint survives the journal (JSON) unchanged').toEqual(saved);

      const fresh = pluginOf(s.make(), s.plugin);
      expect(json(fresh.checkpoint()), 'the run changed what the plugin keeps').not.toEqual(json(saved));
      await fresh.restoreCheckpoint(json(saved), { files: {}, events: [] });
      expect(json(fresh.checkpoint())).toEqual(json(saved));
    });
  });
}
