// Start-up of `sop validate`: with only file names it runs without the argument parser (main.ts,
// plain-validate.ts) and without the modules of features the SOP does not use, and says exactly
// what the parser's path says, with the same exit code.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { plainValidateFiles } from '../src/apps/cli/plain-validate.js';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';
import { writeLoadLogHook } from './helpers/load-log.js';

const ROOT = join(import.meta.dirname, '..');
let dir: string;
let register: string;

beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-validate-startup-'));
  register = writeLoadLogHook(dir); // every ES module loaded, to $SOP_TEST_LOAD_LOG
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function sop(args: string[], loadLog?: string) {
  const r = await spawnCliAsync(args, {
    nodeArgs: loadLog ? ['--import', register] : [],
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, SOP_DEBUG: '', ...(loadLog ? { SOP_TEST_LOAD_LOG: loadLog } : {}) },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The ES modules `sop ARGS` loads (URLs relative to the project). */
async function modulesLoaded(args: string[]): Promise<string[]> {
  const log = join(dir, `loads-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(log, '');
  const r = await sop(args, log);
  expect(r.code, r.stderr).toBe(0);
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((u) => u.replace(pathToFileURL(ROOT).href + '/', ''));
}

describe('plainValidateFiles', () => {
  it('takes `validate FILE...` with nothing else', () => {
    expect(plainValidateFiles(['validate', 'a.sop.json'])).toEqual(['a.sop.json']);
    expect(plainValidateFiles(['validate', 'a.json', 'b c.json', '1e3'])).toEqual(['a.json', 'b c.json', '1e3']);
  });

  it('leaves everything else to the argument parser', () => {
    for (const args of [
      [],
      ['validate'],
      ['run', 'a.json'],
      ['validate', '--quiet', 'a.json'],
      ['validate', 'a.json', '-q'],
      ['validate', 'a.json', '--check-tools'],
      ['validate', '--', 'a.json'],
      ['validate', 'a.json', ''],
      ['validate', 'a.json', 'help'], // the parser takes a last `help` as --help
      ['Validate', 'a.json'],
    ])
      expect(plainValidateFiles(args), args.join(' ')).toBeUndefined();
  });
});

describe('sop validate FILE... without the argument parser', () => {
  it('prints and exits exactly as the parser path does', async () => {
    const bad = join(dir, 'bad.sop.json');
    writeFileSync(bad, JSON.stringify({ name: 't', agents: {}, root: 'nowhere', states: {} }));
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"name": x}');
    const cases = [
      ['sops/jarvis.sop.json'],
      ['sops/jarvis.sop.json', 'examples/debate/debate.sop.json', 'examples/debate/debate.cassette.json'],
      [bad],
      [broken, 'sops/jarvis.sop.json', join(dir, 'missing.json'), '1e3', dir],
      ['jarvis'], // a built-in SOP by name
    ];
    for (const files of cases) {
      const plain = await sop(['validate', ...files]);
      const parsed = await sop(['validate', '--no-quiet', ...files]); // an option: through yargs
      expect(plain, files.join(' ')).toEqual(parsed);
      expect(plain.stderr).not.toContain('    at ');
    }
    expect((await sop(['validate', 'sops/jarvis.sop.json'])).code).toBe(0);
    expect((await sop(['validate', bad])).code).toBe(1);
  });

  it('loads neither yargs nor the modules of features the SOP does not use', async () => {
    const plain = await modulesLoaded(['validate', 'sops/jarvis.sop.json']);
    expect(plain).toContain('dist/src/apps/cli/validate-command.js');
    // the task board and world model (the scientist's executors, imported at their first call)
    const unused = plain.filter((u) =>
      /node_modules\/(yargs|cliui|string-width)|dist\/src\/(features\/scientist\/taskboard\/(board|scheduler|persist)|features\/scientist\/worldmodel\/(model|persist)|features\/scientist\/(memory-types|views|text-index))\b/.test(
        u,
      ),
    );
    expect(unused).toEqual([]);
    // the template check loads Handlebars' parser and compiler, not the whole package (its runtime)
    expect(plain.filter((u) => /node_modules\/handlebars\/lib\/index\.js|dist\/src\/core\/prompt\/templates\.js/.test(u))).toEqual([]);
    // with an option, the parser is loaded as before
    expect((await modulesLoaded(['validate', '--quiet', 'sops/jarvis.sop.json'])).some((u) => u.includes('node_modules/yargs/'))).toBe(
      true,
    );
    const help = await sop(['validate', 'sops/jarvis.sop.json', 'help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('sop validate <files..>');
  });
});
