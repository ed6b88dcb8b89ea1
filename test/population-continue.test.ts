// Continuing population runs from the CLI (issue 38): `sop resume` and `sop fork` of a SOP that
// names plugin modules load them with the approval `sop run` asks (refused in one line without
// it), `sop fork --step N` rebuilds the state before step N from the journal with no LLM call and
// goes on to the same steps, and how often a visit is saved whole is the state's `snapshots`
// field or the --snapshot-steps flag, checked like everything else.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';
import { zicMarketSop } from './helpers/zic-market-sop.js';

const PLUGIN_SOP = 'examples/plugin-world/lt-world.sop.json';
const MODULE = resolve('examples/plugin-world/lt-world.mjs');
const ADOPTED = [16, 22, 27, 29, 29, 29];
let root: string;

/** This process's environment with a config folder of its own (no allow file of the user's). */
const env = (config = mkdtempSync(join(root, 'config-'))): NodeJS.ProcessEnv => ({ ...process.env, SOP_CONFIG_DIR: config });
const sop = (args: string[], e: NodeJS.ProcessEnv = env()) => spawnCliAsync(args, { env: e });
const runFolder = (stderr: string) => /Run folder: (.*)/.exec(stderr)?.[1]?.trim();
const onlyDir = (out: string) => join(out, readdirSync(out).filter((d) => !d.startsWith('.'))[0]!);
async function metric(dir: string, name: string): Promise<number[]> {
  const q = await sop(['query', dir, `select value from metrics where name = '${name}' order by step`, '--json']);
  expect(q.status, q.stderr).toBe(0);
  return (JSON.parse(q.stdout) as Array<{ value: number }>).map((r) => r.value);
}
const journal = (dir: string) =>
  readFileSync(join(dir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

beforeAll(() => {
  requireBuiltCli();
  root = mkdtempSync(join(tmpdir(), 'sop-pop-continue-'));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('sop resume and sop fork of a SOP naming a plugin module', () => {
  let stopped: string;
  beforeAll(async () => {
    const r = await sop(['run', PLUGIN_SOP, '--yes', '--max-turns', '3', '--out', join(root, 'plugin')]);
    expect(r.status, r.stderr).toBe(0);
    stopped = runFolder(r.stderr)!;
  });

  it('are refused in one line without approval, before anything is rebuilt', async () => {
    const config = mkdtempSync(join(root, 'config-'));
    const refusal = `error: plugin ${MODULE} was not loaded: loading it runs its code, which needs your approval; give --yes, or add {"path": ${JSON.stringify(MODULE)}} to "plugins" in ${join(config, 'allow.json')} (docs/population.md#plugins)\n`;
    const resumed = await sop(['resume', stopped, '--max-turns', '10'], env(config));
    expect(resumed.status).toBe(1);
    expect(resumed.stderr).toBe(refusal);
    const forked = await sop(['fork', stopped, '--at', '2', '--out', join(root, 'refused-fork')], env(config));
    expect(forked.status).toBe(1);
    expect(forked.stderr).toBe(refusal);
    expect(await metric(stopped, 'adopted')).toEqual(ADOPTED.slice(0, 3)); // the run is as it was
  });

  it('resume with --yes to the cascade of an uninterrupted run', async () => {
    const r = await sop(['resume', stopped, '--yes', '--max-turns', '10']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('unknown world');
    expect(await metric(stopped, 'adopted')).toEqual(ADOPTED);
  });

  it('fork --step with the module in the allow file: the state before the step rebuilt with no call, the same steps after it', async () => {
    const config = mkdtempSync(join(root, 'config-'));
    writeFileSync(join(config, 'allow.json'), JSON.stringify({ plugins: [{ path: MODULE }] }));
    const out = join(root, 'fork-step');
    const r = await sop(['fork', stopped, '--step', '4', '--max-turns', '10', '--out', out], env(config));
    expect(r.status, r.stderr).toBe(0);
    const dir = onlyDir(out);
    expect(await metric(dir, 'adopted')).toEqual(ADOPTED);
    const events = journal(dir);
    expect(events.find((e) => e.type === 'resumed')).toMatchObject({ mode: 'fork', from_turn: 3 });
    expect(events.filter((e) => e.type === 'llm_call' || e.type === 'llm_call_started')).toEqual([]);
  });
});

describe('sop fork --step', () => {
  it('is a flag of the option table, with its help', async () => {
    const h = await sop(['fork', '--help']);
    expect(h.stdout).toMatch(/--step\s+Population states: branch before this step/);
    expect(h.stdout).toMatch(/--at\s+Turn to branch after/);
    const both = await sop(['fork', join(root, 'nowhere'), '--at', '1', '--step', '2']);
    expect(both.status).not.toBe(0);
    expect(both.stderr).toContain('give one of --at TURN or --step STEP');
  });
});

describe('whole saves of a population visit', () => {
  const STEPS = 24;
  const market = (snapshots?: object) => zicMarketSop({ name: 'market-saves', n: 40, steps: STEPS, snapshots });
  /** The steps whose checkpoint saved the visit whole. */
  const saves = (dir: string) =>
    journal(dir)
      .filter((e) => e.type === 'checkpoint')
      .map((e) => (e as { snapshot: { extensions?: { population?: { trading?: { world?: unknown; step: number } } } } }).snapshot)
      .map((s) => s.extensions?.population?.trading)
      .filter((v) => v?.world !== undefined && v.step > 0)
      .map((v) => v!.step);
  const write = (name: string, doc: object) => {
    const file = join(root, name);
    writeFileSync(file, JSON.stringify(doc));
    return file;
  };

  it('follow the state\'s "snapshots", and --snapshot-steps over it; a resume from one gives the same steps', async () => {
    const file = write('saves.sop.json', market({ steps: 5 }));
    const out = join(root, 'saves');
    const r = await sop(['run', file, '--seed', '3', '--out', out, '--quiet']);
    expect(r.status, r.stderr).toBe(0);
    const dir = onlyDir(out);
    // 24 actions a step for 40 traders: twice the population's size takes 4 steps, so every 5 steps
    expect(saves(dir)).toEqual([5, 10, 15, 20]);
    const flagged = join(root, 'saves-flag');
    const f = await sop(['run', file, '--seed', '3', '--snapshot-steps', '10', '--out', flagged, '--quiet']);
    expect(f.status, f.stderr).toBe(0);
    expect(saves(onlyDir(flagged))).toEqual([10, 20]);
    // the same steps, whichever steps were saved whole
    const all = 'select step, seq, agent, name, args, ok from actions order by step, seq';
    const rows = async (d: string) => (await sop(['query', d, all, '--json'])).stdout;
    expect(await rows(onlyDir(flagged))).toBe(await rows(dir));
    // a fork before step 13 rebuilds the visit from the whole save of step 10 and the steps since
    const forked = join(root, 'saves-fork');
    const k = await sop(['fork', dir, '--step', '13', '--out', forked, '--quiet']);
    expect(k.status, k.stderr).toBe(0);
    expect(await rows(onlyDir(forked))).toBe(await rows(dir));
  });

  it('refuse a bad threshold in one line: the flag and the SOP field', async () => {
    const file = write('ok.sop.json', market());
    const flag = await sop(['run', file, '--snapshot-steps', '0', '--out', join(root, 'bad-flag')]);
    expect(flag.status).not.toBe(0);
    expect(flag.stderr).toBe('error: --snapshot-steps must be a whole number, at least 1 (got 0)\n');
    const bad = write('bad.sop.json', market({ steps: 2.5 }));
    const v = await sop(['validate', bad]);
    expect(v.status).toBe(1);
    expect(v.stderr).toContain('/states/trading/snapshots/steps');
    const unknown = write('unknown.sop.json', market({ every: 3 }));
    const u = await sop(['validate', unknown]);
    expect(u.status).toBe(1);
    expect(u.stderr).toContain('/states/trading/snapshots');
  });
});
