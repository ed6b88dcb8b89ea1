// The classic models of examples/models (issue 38): each validates and runs with `sop run` with
// no key and no --llm flag; the threshold cascade gives the published adopters through `sop
// query`; and a SOP naming a plugin module runs with --yes and is refused in one line without.
import { mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';

const MODELS = readdirSync('examples/models', { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

/** This process's environment without any key, with a config folder of its own (no allow file of the user's). */
function env(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/API_KEY|TOKEN|SECRET/i.test(k)) out[k] = v;
  return { ...out, SOP_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sop-config-')), ...extra };
}

const runFolder = (stderr: string) => /Run folder: (.*)/.exec(stderr)?.[1]?.trim();

beforeAll(() => requireBuiltCli());

describe('examples/models', () => {
  it('ships the seven models, each with a README', () => {
    expect(MODELS).toEqual(['beauty-contest', 'deffuant', 'public-goods', 'schelling', 'sir', 'threshold-cascade', 'zic-market']);
    for (const m of MODELS) expect(readdirSync(`examples/models/${m}`)).toEqual(expect.arrayContaining(['README.md', `${m}.sop.json`]));
  });

  it('validates every model', async () => {
    const r = await spawnCliAsync(['validate', ...MODELS.map((m) => `examples/models/${m}/${m}.sop.json`)], { env: env() });
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain(`${MODELS.length} of ${MODELS.length} files valid`);
    expect(r.status).toBe(0);
  });

  it.each(MODELS)(
    'runs %s with sop run, no key and no --llm flag',
    async (m) => {
      const out = mkdtempSync(join(tmpdir(), 'sop-models-'));
      const r = await spawnCliAsync(['run', `examples/models/${m}/${m}.sop.json`, '--out', out], { env: env(), timeout: 300_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Finished in state "\w+" after \d+ turns; 0 LLM calls/);
    },
    300_000,
  );

  it('gives 16, 22, 27, 29, 29, 29 adopters after steps 1 to 6 of the threshold cascade, through sop query', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sop-models-'));
    const run = await spawnCliAsync(
      ['run', 'examples/models/threshold-cascade/threshold-cascade.sop.json', '--input', 'theta=0.4', '--out', out],
      { env: env() },
    );
    expect(run.status, run.stderr).toBe(0);
    const q = await spawnCliAsync(
      ['query', runFolder(run.stderr)!, "select step, value from metrics where name = 'adopters' order by step", '--json'],
      {
        env: env(),
      },
    );
    expect(q.status, q.stderr).toBe(0);
    expect(JSON.parse(q.stdout)).toEqual([16, 22, 27, 29, 29, 29].map((value, i) => ({ step: i + 1, value })));
  });
});

describe('a SOP naming a plugin module (examples/plugin-world)', () => {
  const SOP = 'examples/plugin-world/lt-world.sop.json';
  const MODULE = resolve('examples/plugin-world/lt-world.mjs');

  it('is refused in one line without approval, by sop run and sop validate', async () => {
    const config = mkdtempSync(join(tmpdir(), 'sop-config-'));
    const run = await spawnCliAsync(['run', SOP, '--out', mkdtempSync(join(tmpdir(), 'sop-plugin-'))], {
      env: env({ SOP_CONFIG_DIR: config }),
    });
    expect(run.status).toBe(1);
    expect(run.stderr).toBe(
      `error: plugin ${MODULE} was not loaded: loading it runs its code, which needs your approval; give --yes, or add {"path": ${JSON.stringify(MODULE)}} to "plugins" in ${join(config, 'allow.json')} (docs/population.md#plugins)\n`,
    );
    const v = await spawnCliAsync(['validate', SOP], { env: env() });
    expect(v.status).toBe(1);
    expect(v.stderr.trim().split('\n')).toHaveLength(1);
    expect(v.stderr).toContain('was not loaded');
  });

  it('runs with --yes: its world, rule policy and metric do the cascade', async () => {
    const run = await spawnCliAsync(['run', SOP, '--yes', '--out', mkdtempSync(join(tmpdir(), 'sop-plugin-'))], { env: env() });
    expect(run.status, run.stderr).toBe(0);
    const q = await spawnCliAsync(
      [
        'query',
        runFolder(run.stderr)!,
        "select step, name, value from metrics where name in ('adopted', 'new_adopters') order by name, step",
        '--csv',
      ],
      { env: env() },
    );
    const rows = q.stdout.trim().split(/\r?\n/).slice(1);
    expect(rows).toEqual([
      ...[16, 22, 27, 29, 29, 29].map((v, i) => `${i + 1},adopted,${v}`),
      ...[14, 6, 5, 2, 0, 0].map((v, i) => `${i + 1},new_adopters,${v}`),
    ]);
  });

  it('runs without --yes when the allow file names the module', async () => {
    const config = mkdtempSync(join(tmpdir(), 'sop-config-'));
    writeFileSync(join(config, 'allow.json'), JSON.stringify({ plugins: [{ path: MODULE }] }));
    const run = await spawnCliAsync(['run', SOP, '--out', mkdtempSync(join(tmpdir(), 'sop-plugin-'))], {
      env: env({ SOP_CONFIG_DIR: config }),
    });
    expect(run.status, run.stderr).toBe(0);
  });
});
