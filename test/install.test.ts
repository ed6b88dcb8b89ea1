// Issue 27 item 5: `sop` installed from the clone as the README says (`npm i -g .`, a link to the
// clone in npm's global folder; here a temporary --prefix, offline) runs a built-in SOP by name
// from an empty folder, and writes its run folder there.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { requireBuiltCli } from './helpers/cli.js';
import { scaled } from './helpers/time.js';

describe('sop installed from the clone with npm i -g .', () => {
  it('runs a built-in SOP by name from an empty folder', () => {
    requireBuiltCli();
    const prefix = mkdtempSync(join(tmpdir(), 'sop-prefix-'));
    const npm = spawnSync(
      'npm',
      ['install', '--global', '.', '--prefix', prefix, '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
      { encoding: 'utf8', timeout: scaled(180_000) },
    );
    expect(npm.status, npm.stderr).toBe(0);
    const bin = join(prefix, 'bin', 'sop');
    expect(existsSync(bin)).toBe(true);
    // the global package is a link to this clone, not a copy
    expect(realpathSync(join(prefix, 'lib', 'node_modules', 'sop'))).toBe(realpathSync(process.cwd()));

    const empty = mkdtempSync(join(tmpdir(), 'sop-empty-'));
    const env = { ...process.env, PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` };
    const list = spawnSync('sop', ['list'], { cwd: empty, env, encoding: 'utf8', timeout: scaled(60_000) });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^plan_writer\b/m);
    const run = spawnSync('sop', ['run', 'plan_writer', '--llm', 'mock', '--goal', 'tidy the shed', '--max-turns', '3', '--quiet'], {
      cwd: empty,
      env,
      encoding: 'utf8',
      timeout: scaled(60_000),
    });
    expect(run.status, run.stderr).toBe(0);
    expect(readdirSync(join(empty, 'runs'))).toHaveLength(1); // the run folder is in the folder it was started from
  });
});
