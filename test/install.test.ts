// Issue 27 item 5: `sop` installed from the clone as the README says (`npm i -g .`, a link to the
// clone in npm's global folder; here a temporary --prefix, offline) runs a built-in SOP by name
// from an empty folder, and writes its run folder there.
// Issue 39 item 4: the packed tarball (`npm pack`, then `npm i -g --prefix P sop-*.tgz` in an
// empty folder, offline from the cache `npm ci` filled) installs at most 250 MB without the
// optional packages, and its `sop` replays the debate example it ships.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { cp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { requireBuiltPackage, requireBuiltCli } from './helpers/cli.js';
import { execAsync } from './helpers/exec.js';
import { scaled } from './helpers/time.js';

describe('sop installed from the clone with npm i -g .', () => {
  it('runs a built-in SOP by name from an empty folder', async () => {
    requireBuiltCli();
    const prefix = mkdtempSync(join(tmpdir(), 'sop-prefix-'));
    const npm = await execAsync(
      'npm',
      ['install', '--global', '.', '--prefix', prefix, '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
      { encoding: 'utf8', timeout: 180_000 },
    );
    expect(npm.status, npm.stderr).toBe(0);
    const bin = join(prefix, 'bin', 'sop');
    expect(existsSync(bin)).toBe(true);
    // the global package is a link to this clone, not a copy
    expect(realpathSync(join(prefix, 'lib', 'node_modules', 'sop'))).toBe(realpathSync(process.cwd()));

    const empty = mkdtempSync(join(tmpdir(), 'sop-empty-'));
    const env = { ...process.env, PATH: `${join(prefix, 'bin')}:${process.env.PATH ?? ''}` };
    const list = await execAsync('sop', ['list'], { cwd: empty, env, encoding: 'utf8', timeout: 60_000 });
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/^plan_writer\b/m);
    const run = await execAsync('sop', ['run', 'plan_writer', '--llm', 'mock', '--goal', 'tidy the shed', '--max-turns', '3', '--quiet'], {
      cwd: empty,
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    expect(readdirSync(join(empty, 'runs'))).toHaveLength(1); // the run folder is in the folder it was started from
  });
});

/** A command as a child process, awaited (an install takes minutes on a busy machine); killed at `timeout` (scaled). */
const run = (cmd: string, args: string[], o: { cwd?: string; timeout?: number } = {}) =>
  execAsync(cmd, args, { cwd: o.cwd, stdin: 'ignore', timeout: o.timeout ?? 60_000, killSignal: 'SIGKILL' });

/** What `npm pack` takes from the clone: package.json's "files", the lock its prepack script ships, and that script. */
const PACKED = [
  'package.json',
  'package-lock.json',
  'README.md',
  'scripts/shrinkwrap.mjs',
  'dist',
  'schemas',
  'prompts',
  'sops',
  'examples',
  'pricing.json',
  'src/features/actions/executors/session',
];

describe('sop installed from its packed tarball with npm i -g', () => {
  const made: string[] = [];
  afterAll(async () => {
    for (const dir of made) await rm(dir, { recursive: true, force: true }); // the install is 220 MB
  });

  it(
    'installs offline, at most 250 MB without the optional packages, and replays the debate',
    async () => {
      requireBuiltPackage();
      // a copy of the packed files: the tarball is made from it as `npm pack` makes it, but with the
      // build already done (a build here would rewrite the dist/ that other test files run)
      const stage = mkdtempSync(join(tmpdir(), 'sop-pack-'));
      made.push(stage);
      for (const p of PACKED) await cp(join(process.cwd(), p), join(stage, p), { recursive: true });
      const npmIn = (cwd: string, args: string[]) => run('npm', [...args, '--no-audit', '--no-fund'], { cwd, timeout: 300_000 });
      const prepack = await npmIn(stage, ['run', 'prepack']);
      expect(prepack.status, prepack.stderr).toBe(0);
      const pack = await npmIn(stage, ['pack', '--ignore-scripts', '--json']);
      expect(pack.status, pack.stderr).toBe(0);
      const packed = (JSON.parse(pack.stdout) as Array<{ filename: string; files: Array<{ path: string }> }>)[0]!;
      const paths = packed.files.map((f) => f.path);
      expect(paths).toContain('dist/src/apps/cli/main.js'); // nothing to build at install time
      expect(paths).toContain('npm-shrinkwrap.json'); // the tested tree, at its versions

      const prefix = mkdtempSync(join(tmpdir(), 'sop-prefix-'));
      const empty = mkdtempSync(join(tmpdir(), 'sop-empty-'));
      made.push(prefix, empty);
      const install = await npmIn(empty, ['install', '--global', '--prefix', prefix, '--offline', join(stage, packed.filename)]);
      expect(install.status, install.stderr).toBe(0);
      const modules = join(prefix, 'lib', 'node_modules', 'sop', 'node_modules');
      for (const optional of ['node-llama-cpp', '@node-llama-cpp', '@huggingface', 'onnxruntime-node', 'onnxruntime-web', 'mermaid'])
        expect(existsSync(join(modules, optional)), optional).toBe(false);
      const du = await run('du', ['-sk', prefix]);
      expect(du.status, du.stderr).toBe(0);
      const mb = Number(du.stdout.split(/\s/)[0]) / 1024;
      expect(mb).toBeLessThanOrEqual(250);

      // the debate the package ships, replayed from its cassette, from an empty folder
      const sop = join(prefix, 'bin', 'sop');
      const example = join(prefix, 'lib', 'node_modules', 'sop', 'examples', 'debate');
      const replay = await run(sop, ['run', join(example, 'debate.sop.json'), '--llm', `replay:${join(example, 'debate.cassette.json')}`], {
        cwd: empty,
        timeout: 120_000,
      });
      expect(replay.status, replay.stderr).toBe(0);
      expect(replay.stdout + replay.stderr).toMatch(/Finished in state "end"/);
      expect(readdirSync(join(empty, 'runs'))).toHaveLength(1);

      // an optional package asked for: one line naming the command that adds it to this install
      mkdirSync(join(empty, 'models'));
      writeFileSync(join(empty, 'models', 'tiny.gguf'), '');
      const local = await run(sop, ['run', join(example, 'debate.sop.json'), '--llm', 'local:models/tiny.gguf', '--quiet'], {
        cwd: empty,
        timeout: 120_000,
      });
      expect(local.status).not.toBe(0);
      expect(local.stderr.trim().split('\n')).toHaveLength(1);
      expect(local.stderr).toContain(`add it with: npm install -g --prefix ${realpathSync(prefix)} --ignore-scripts node-llama-cpp@3.21.1`);
    },
    scaled(600_000),
  );
});
