// Plugins (docs/population.md#plugins): a module a SOP names runs only with the user's approval,
// and nothing of a refused module runs. src/api/plugins.ts, in this process.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPlugins, PluginError } from '../src/api/plugins.js';

/** A folder with a module that writes `ran` beside itself when it is imported. */
function moduleFolder(): { dir: string; module: string; marker: string } {
  const dir = mkdtempSync(join(tmpdir(), 'sop-plugin-'));
  const marker = join(dir, 'ran');
  const module = join(dir, 'mod.mjs');
  writeFileSync(module, `import { writeFileSync } from 'node:fs';\nwriteFileSync(${JSON.stringify(marker)}, 'yes');\n`);
  return { dir, module, marker };
}

const sopFile = (dir: string) => join(dir, 'x.sop.json');

describe('plugins need approval', () => {
  it('refuses a module in one line without approval, and runs none of it', async () => {
    const { dir, marker } = moduleFolder();
    const err = await loadPlugins({ plugins: ['./mod.mjs'] }, sopFile(dir), {}).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PluginError);
    expect((err as Error).message).toMatch(
      /^plugin .*mod\.mjs was not loaded: loading it runs its code, which needs your approval; give --yes/,
    );
    expect((err as Error).message).not.toContain('\n');
    expect(existsSync(marker)).toBe(false);
  });

  it('loads it unattended (--yes), once per process', async () => {
    const { dir, module, marker } = moduleFolder();
    expect(await loadPlugins({ plugins: ['./mod.mjs'] }, sopFile(dir), { unattended: true })).toEqual([module]);
    expect(existsSync(marker)).toBe(true);
  });

  it('asks a person, showing the absolute path; a no refuses', async () => {
    const { dir, module, marker } = moduleFolder();
    const asked: string[] = [];
    const err = await loadPlugins({ plugins: ['./mod.mjs'] }, sopFile(dir), {
      ask: async (text) => (asked.push(text), false),
    }).catch((e: unknown) => e);
    expect(asked[0]).toContain(module);
    expect((err as Error).message).toMatch(/you did not approve it/);
    expect(existsSync(marker)).toBe(false);
  });

  it('loads a module the allow list names, and refuses it when its pinned hash differs', async () => {
    const a = moduleFolder();
    const wrong = '0'.repeat(64);
    const err = await loadPlugins({ plugins: ['./mod.mjs'] }, sopFile(a.dir), { allow: () => [{ path: a.module, sha256: wrong }] }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PluginError);
    expect(existsSync(a.marker)).toBe(false);
    const { readFileSync } = await import('node:fs');
    const sha256 = createHash('sha256').update(readFileSync(a.module)).digest('hex');
    await loadPlugins({ plugins: ['./mod.mjs'] }, sopFile(a.dir), { allow: () => [{ path: a.module, sha256 }] });
    expect(existsSync(a.marker)).toBe(true);
  });

  it("refuses a module outside a worker's roots even with --yes", async () => {
    const { dir, marker } = moduleFolder();
    const root = mkdtempSync(join(tmpdir(), 'sop-root-'));
    mkdirSync(join(root, 'inside'));
    const err = await loadPlugins({ plugins: ['./mod.mjs'] }, sopFile(dir), { unattended: true, roots: [root] }).catch((e: unknown) => e);
    expect((err as Error).message).toMatch(/outside this worker's roots/);
    expect(existsSync(marker)).toBe(false);
  });

  it('names a missing module in one line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-plugin-'));
    await expect(loadPlugins({ plugins: ['./nope.mjs'] }, sopFile(dir), { unattended: true })).rejects.toThrow(
      /nope\.mjs was not loaded: there is no such file/,
    );
  });
});
