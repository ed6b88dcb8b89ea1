// npm run bench -- plan: `sop plan` at scale (docs/plan.md#large-populations).
//   1. The plan of 100,000 generated agents, 6 steps at 10% activation (an archetype tier and one
//      call per agent), as the CLI makes it (--llm mock --json): wall seconds of the command.
//   2. The plan of 20,000 agents, 3 steps, beside a mock run of the same SOP: predicted / realised
//      calls, prompt tokens and completion tokens (the plan dry-runs 1,000 of the agents).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './lib/engine.mjs';
import { populationSop } from './lib/population-sop.mjs';
import { round, row } from './lib/stats.mjs';

export const order = 75;
const TARGET_S = 10;
const CLI = join(ROOT, 'dist', 'src', 'apps', 'cli', 'main.js');

/** Agents into politics decide by archetype (one call per archetype acting), the others one call each. */
const TIERS = { cognition: [{ tier: 'archetype', where: "interest == 'politics'" }, { tier: 'per_agent' }] };

function sop(args) {
  const started = performance.now();
  const res = spawnSync(process.execPath, [CLI, ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (res.status !== 0) throw new Error(`sop ${args.join(' ')} failed (exit ${res.status}): ${res.stderr.slice(-1000)}`);
  return { stdout: res.stdout, seconds: (performance.now() - started) / 1000 };
}

export async function run() {
  const dir = mkdtempSync(join(tmpdir(), 'sop-bench-plan-'));
  const rows = [];
  const results = {};
  try {
    const big = join(dir, 'big.sop.json');
    writeFileSync(big, JSON.stringify(populationSop(100_000, 0.1, 6, TIERS)));
    const planned = sop(['plan', big, '--llm', 'mock', '--json']);
    const plan = JSON.parse(planned.stdout);
    results.agents_100k_plan_s = round(planned.seconds, 2);
    results.agents_100k_calls = plan.total.calls;
    rows.push(
      row(
        'sop plan, 100,000 agents, 6 steps: wall s (the command)',
        results.agents_100k_plan_s,
        `< ${TARGET_S}`,
        planned.seconds < TARGET_S,
      ),
    );
    rows.push(row('  calls predicted', plan.total.calls.toLocaleString('en-US')));

    const mid = join(dir, 'mid.sop.json');
    writeFileSync(mid, JSON.stringify(populationSop(20_000, 0.1, 3, TIERS)));
    const out = join(dir, 'runs');
    sop(['run', mid, '--llm', 'mock', '--out', out, '--quiet']);
    const compared = JSON.parse(sop(['plan', '--run', join(out, readdirSync(out)[0]), '--json']).stdout);
    for (const key of ['calls', 'prompt_tokens', 'completion_tokens']) {
      const ratio = compared.plan.total[key] / compared.realised.total[key];
      results[`agents_20k_${key}_ratio`] = round(ratio, 3);
      rows.push(
        row(
          `sop plan, 20,000 agents: predicted / realised ${key.replace('_', ' ')}`,
          round(ratio, 3),
          '0.85 to 1.15',
          Math.abs(ratio - 1) <= 0.15,
        ),
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: 'sop plan at scale',
    rows,
    results: { plan: results },
    notes: ["The plans dry-run 1,000 agents of each population (--sample) and count every step's calls over all of them."],
  };
}
