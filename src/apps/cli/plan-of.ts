// The plan of a SOP for `sop plan` (./plan-command.ts) and `sop run --plan` (./run-command.ts):
// the flags' throughput profile, prices, reply size and sample, and a plan kept in a run folder.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_PLAN_SAMPLE, DEFAULT_REPLY_TOKENS, planSop, type PlanReport } from '../../api/plan.js';
import { throughputProfile } from '../../api/plan-time.js';
import { PLAN_FILE } from '../../features/journal/predicted.js';
import type { RunRecord } from '../../features/journal/record.js';
import { loadPricing } from '../../core/llm/pricing.js';
import type { Sop } from '../../format/sop/types.js';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';

/** The flags a plan is made with. */
export interface PlanFlags {
  replyTokens?: number;
  sample?: number;
  pricing?: string;
  concurrency?: number;
  latency?: string;
  tokensPerSecond?: number;
}

/** What a plan is of. */
export interface Planned {
  sop: Sop;
  file: string;
  inputs: Record<string, string>;
  seed?: number;
  maxTurns?: number;
  mock: boolean;
  record?: RunRecord;
}

/** The plan of a SOP with the profile, prices, reply size and sample of the flags. */
export async function planFor(t: Planned, o: PlanFlags): Promise<PlanReport> {
  const profile = throughputProfile(o);
  const pricing = loadPricing(o.pricing);
  const { resolveSandbox, sopRunsCode } = await import('../../features/actions/executors/sandbox-mode.js');
  return planSop({
    sop: t.sop,
    file: t.file,
    pricing,
    profile,
    replies: t.mock ? 'mock' : (o.replyTokens ?? DEFAULT_REPLY_TOKENS),
    inputs: t.inputs,
    maxTurns: t.maxTurns,
    seed: t.seed,
    sample: o.sample ?? DEFAULT_PLAN_SAMPLE,
    sandbox: resolveSandbox(undefined, sopRunsCode(t.sop)).sandbox,
  });
}

/** `sop run --plan`: the plan of the run about to start, kept in its folder (RUN/plan.json) before it starts. */
export async function writeRunPlan(dir: string, t: Planned, o: PlanFlags): Promise<void> {
  const report = await planFor(t, o);
  mkdirSync(dir, { recursive: true });
  keepPlan(dir, report);
}

/** RUN/plan.json: the plan as `sop plan --json` prints it. */
export function keepPlan(dir: string, report: PlanReport): void {
  writeFileAtomic(join(dir, PLAN_FILE), JSON.stringify(report, null, 2) + '\n');
}
