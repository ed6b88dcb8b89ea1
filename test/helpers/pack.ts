// The replication packs of examples/models (issue 33): each pack's `sop sweep` over a few seeds,
// then `sop report OUT --check`, as a user would run them (no key, no --llm flag). The expected
// figures themselves are computed in each pack's test file, independently of the engine, and
// compared there with the targets the SOP states.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnCliAsync } from './cli.js';

export const MODELS_DIR = 'examples/models';

/** The SOP file of a pack. */
export const packSop = (model: string): string => `${MODELS_DIR}/${model}/${model}.sop.json`;

/** The `targets` block of a pack's SOP, as written in the file. */
export function packTargets(model: string): Record<string, Record<string, unknown>> {
  const doc = JSON.parse(readFileSync(packSop(model), 'utf8')) as { targets?: Record<string, Record<string, unknown>> };
  if (!doc.targets) throw new Error(`${packSop(model)} has no targets`);
  return doc.targets;
}

/** This process's environment without any key, with a config folder of its own. */
export function packEnv(): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/API_KEY|TOKEN|SECRET/i.test(k)) out[k] = v;
  return { ...out, SOP_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'sop-config-')) };
}

export interface PackCheck {
  out: string;
  sweep: { status: number | null; stdout: string; stderr: string };
  report: { status: number | null; stdout: string; stderr: string };
}

/** `sop sweep SOP --seeds SEEDS --out OUT`, then `sop report OUT --check`. */
export async function sweepAndReport(model: string, seeds: string, extra: readonly string[] = []): Promise<PackCheck> {
  const out = join(mkdtempSync(join(tmpdir(), `sop-pack-${model}-`)), 'sweep');
  const env = packEnv();
  const sweep = await spawnCliAsync(['sweep', packSop(model), '--seeds', seeds, '--out', out, ...extra], {
    env,
    timeout: 120_000,
  });
  const report = await spawnCliAsync(['report', out, '--check'], { env, timeout: 120_000 });
  return { out, sweep, report };
}
