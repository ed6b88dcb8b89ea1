// sop runs [--out DIR]: the run folders under DIR with their status, calls, tokens and cost, read from
// their journals, and what `sop plan --run` predicted for them (RUN/plan.json).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadRunRecord, type RunStatusName } from '../../features/journal/record.js';
import { JOURNAL_FILE } from '../../features/journal/writer.js';
import { readPredicted, type PredictedTotals } from '../../features/journal/predicted.js';
import { cachedShare, type UsageTotals } from '../../core/runtime/usage.js';
import { textTable } from './text-table.js';

export interface RunSummary {
  dir: string;
  run_id: string;
  sop: string;
  status: RunStatusName | 'damaged';
  turns: number;
  started: string;
  forked_from?: string;
  error?: string;
  /** USD of the run so far; absent when unknown (a model without a price) or not priced (the mock). */
  cost_usd?: number;
  /** Models without a price (the cost is unknown). */
  unpriced_models?: string[];
  /** LLM calls and tokens (prompt + completion) so far. */
  calls?: number;
  tokens?: number;
  /** Prompt tokens served from the provider's prompt cache, as a share of prompt tokens, when the provider reported them. */
  cached_share?: number;
  /** The same per state (usage.json by_state). */
  cached_share_by_state?: Record<string, number>;
  /** What `sop plan --run` predicted for the run (RUN/plan.json). */
  predicted?: PredictedTotals;
}

/** The run's cached shares, when its provider reported cached tokens (a state's calls in usage.by_state, or some cached tokens). */
function cachedShares(usage: UsageTotals | undefined): Pick<RunSummary, 'cached_share' | 'cached_share_by_state'> {
  if (!usage || (usage.by_state === undefined && !usage.cached_tokens)) return {};
  const share = cachedShare(usage);
  const byState: Record<string, number> = {};
  for (const [state, b] of Object.entries(usage.by_state ?? {})) {
    const s = cachedShare(b);
    if (s !== undefined) byState[state] = s;
  }
  return {
    ...(share !== undefined ? { cached_share: share } : {}),
    ...(Object.keys(byState).length > 0 ? { cached_share_by_state: byState } : {}),
  };
}

/** The run's latest usage totals: its run_finished, else its last checkpoint. */
function latestUsage(events: readonly { type: string }[], finished?: { usage: UsageTotals }): UsageTotals | undefined {
  if (finished) return finished.usage;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i] as { type: string; snapshot?: { usage?: UsageTotals } };
    if (e.type === 'checkpoint') return e.snapshot?.usage;
  }
  return undefined;
}

function withPlan(dir: string): { predicted?: PredictedTotals } {
  const predicted = readPredicted(dir);
  return predicted ? { predicted } : {};
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const usd = (n: number) => `$${n.toFixed(4)}`;

/** "18 calls, 3,771 tokens, $0.0006": a plan's prediction in one cell. */
const planned = (p: PredictedTotals) =>
  `${int(p.calls)} calls, ${int(p.prompt_tokens + p.completion_tokens)} tokens${p.cost !== undefined ? `, ${usd(p.cost)}` : ''}`;

export function listRuns(outDir: string): RunSummary[] {
  if (!existsSync(outDir)) return [];
  const out: RunSummary[] = [];
  for (const entry of readdirSync(outDir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const dir = join(outDir, entry.name);
    if (!existsSync(join(dir, JOURNAL_FILE))) continue;
    try {
      const r = loadRunRecord(dir, { stepsOnDisk: true }); // a summary: no step's actions held
      const usage = latestUsage(r.effective, r.finished);
      out.push({
        dir,
        run_id: r.started.run_id,
        sop: r.started.sop,
        status: r.status,
        turns: r.turns,
        started: r.started.time,
        ...(r.started.forked_from ? { forked_from: `${r.started.forked_from.run_id}@${r.started.forked_from.turn}` } : {}),
        ...(r.finished?.error ? { error: r.finished.error } : {}),
        ...(typeof usage?.cost === 'number' ? { cost_usd: usage.cost } : {}),
        ...(usage?.unpriced_models?.length ? { unpriced_models: usage.unpriced_models } : {}),
        ...cachedShares(usage),
        ...(usage ? { calls: usage.calls, tokens: usage.prompt_tokens + usage.completion_tokens } : {}),
        ...withPlan(dir),
      });
    } catch (err) {
      out.push({ dir, run_id: entry.name, sop: '?', status: 'damaged', turns: 0, started: '', error: (err as Error).message });
    }
  }
  return out.sort((a, b) => (a.started < b.started ? -1 : a.started > b.started ? 1 : a.run_id.localeCompare(b.run_id)));
}

export function runsCommand(o: { out: string; json: boolean }): number {
  const runs = listRuns(o.out);
  if (o.json) {
    for (const r of runs) process.stdout.write(JSON.stringify(r) + '\n');
    return 0;
  }
  if (runs.length === 0) {
    process.stdout.write(`No runs in ${o.out}.\n`);
    return 0;
  }
  const cost = (r: RunSummary) => (r.cost_usd !== undefined ? usd(r.cost_usd) : r.unpriced_models ? 'unknown' : '-');
  const cached = (r: RunSummary) => (r.cached_share !== undefined ? `${Math.round(r.cached_share * 1000) / 10}%` : '-');
  // beside the realised calls, tokens and cost: what sop plan predicted, for runs it was asked about
  const plans = runs.some((r) => r.predicted);
  const rows = runs.map((r) => [
    r.run_id,
    r.status,
    String(r.turns),
    r.calls !== undefined ? int(r.calls) : '-',
    r.tokens !== undefined ? int(r.tokens) : '-',
    cost(r),
    cached(r),
    ...(plans ? [r.predicted ? planned(r.predicted) : '-'] : []),
    r.sop,
    r.started.replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
  ]);
  const head = ['RUN', 'STATUS', 'TURNS', 'CALLS', 'TOKENS', 'COST', 'CACHED', ...(plans ? ['PLANNED (sop plan)'] : []), 'SOP', 'STARTED'];
  process.stdout.write(textTable(head, rows));
  const resumable = runs.filter((r) => r.status === 'interrupted' || r.status === 'killed').length;
  if (resumable > 0)
    process.stdout.write(`\n${resumable} run${resumable > 1 ? 's' : ''} can be continued with: sop resume ${join(o.out, 'RUN')}\n`);
  return 0;
}
