// `sop check FILE [--runs N]` (docs/cost.md): dry-run a SOP N times with the mock, over seeds
// 1..N (the mock's walk takes a different judge path per seed), and tell what a run is expected
// to cost: LLM calls per purpose, prompt and completion tokens (min / median / max), the cost per
// model from the pricing table, and warnings (states left only at max_turns, runs that reach
// --max-turns, prompts larger than a model's context, a running summary that never fires).
import { rmSync } from 'node:fs';
import type { PricingTable } from '../core/llm/pricing.js';
import type { CallPurpose } from '../core/llm/types.js';
import type { RunEvent } from '../core/runtime/events.js';
import { resolveSop } from '../format/sop/resolved.js';
import { mcpServers } from '../features/mcp/config.js';
import type { Sop } from '../format/sop/types.js';
import { contextWindow } from '../features/cost/context-windows.js';
import { dryRun as dryRunEvents, paidOrDownloadedEmbedder } from './dry-run.js';

export interface CheckOptions {
  sop: Sop;
  file: string;
  runs: number;
  maxTurns?: number;
  pricing: PricingTable;
  inputs?: Record<string, string>;
  /** Code runs under bubblewrap (resolved by the caller, as for sop run). */
  sandbox?: boolean;
}

export interface Spread {
  min: number;
  median: number;
  max: number;
}

export interface CheckReport {
  runs: number;
  statuses: Record<string, number>;
  turns: Spread;
  calls: Partial<Record<CallPurpose, Spread>>;
  prompt_tokens: Spread;
  completion_tokens: Spread;
  /** The largest prompt of one call, in tokens. */
  largest_prompt: number;
  /** USD per run by model; `unknown` for a model without a price. */
  cost_by_model: Record<string, Spread | 'unknown'>;
  /** USD per run, when every model has a price. */
  cost?: Spread;
  warnings: string[];
}

function spread(values: number[]): Spread {
  const v = [...values].sort((a, b) => a - b);
  if (v.length === 0) return { min: 0, median: 0, max: 0 };
  const mid = Math.floor(v.length / 2);
  const median = v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  return { min: v[0]!, median, max: v[v.length - 1]! };
}

interface OneRun {
  status: string;
  turns: number;
  calls: Partial<Record<CallPurpose, number>>;
  prompt: number;
  completion: number;
  costByModel: Record<string, number | undefined>;
  events: RunEvent[];
  /** The folder of a dry run that failed (kept; its error may point into it). */
  dir?: string;
}

async function dryRun(o: CheckOptions, seed: number): Promise<OneRun> {
  const { status, turns, events, dir } = await dryRunEvents(o, seed);
  const one: OneRun = { status, turns, calls: {}, prompt: 0, completion: 0, costByModel: {}, events, ...(dir ? { dir } : {}) };
  const visit = (e: RunEvent) => {
    if (e.type === 'subflow') return visit(e.event);
    if (e.type !== 'llm_call') return;
    one.calls[e.purpose] = (one.calls[e.purpose] ?? 0) + 1;
    one.prompt += e.usage.promptTokens;
    one.completion += e.usage.completionTokens;
    const before = Object.hasOwn(one.costByModel, e.model) ? one.costByModel[e.model] : 0;
    one.costByModel[e.model] = before === undefined || e.cost_usd === undefined ? undefined : before + e.cost_usd;
  };
  events.forEach(visit);
  return one;
}

export async function checkSop(o: CheckOptions): Promise<CheckReport> {
  const runs: OneRun[] = [];
  for (let seed = 1; seed <= o.runs; seed++) runs.push(await dryRun(o, seed));
  // the first failed dry run's folder is kept (the warning names it), the others' are not
  for (const r of runs.filter((x) => x.dir !== undefined).slice(1)) rmSync(r.dir!, { recursive: true, force: true });
  const statuses: Record<string, number> = {};
  for (const r of runs) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
  const purposes = [...new Set(runs.flatMap((r) => Object.keys(r.calls) as CallPurpose[]))];
  const calls: CheckReport['calls'] = {};
  for (const p of purposes) calls[p] = spread(runs.map((r) => r.calls[p] ?? 0));
  const models = [...new Set(runs.flatMap((r) => Object.keys(r.costByModel)))];
  const costByModel: CheckReport['cost_by_model'] = {};
  for (const m of models) {
    const values = runs.map((r) => (Object.hasOwn(r.costByModel, m) ? r.costByModel[m] : 0));
    costByModel[m] = values.some((v) => v === undefined) ? 'unknown' : spread(values as number[]);
  }
  const totals = runs.map((r) =>
    Object.values(r.costByModel).reduce<number | undefined>((s, c) => (s === undefined || c === undefined ? undefined : s + c), 0),
  );
  const report: CheckReport = {
    runs: runs.length,
    statuses,
    turns: spread(runs.map((r) => r.turns)),
    calls,
    prompt_tokens: spread(runs.map((r) => r.prompt)),
    completion_tokens: spread(runs.map((r) => r.completion)),
    largest_prompt: 0,
    cost_by_model: costByModel,
    ...(totals.every((t) => t !== undefined) ? { cost: spread(totals) } : {}),
    warnings: warnings(o, runs),
  };
  for (const r of runs)
    for (const e of r.events) if (e.type === 'llm_call') report.largest_prompt = Math.max(report.largest_prompt, e.usage.promptTokens);
  return report;
}

function warnings(o: CheckOptions, runs: OneRun[]): string[] {
  const out: string[] = [];
  const servers = Object.keys(mcpServers(o.sop));
  if (servers.length > 0)
    out.push(
      `sop check starts no MCP servers (${servers.join(', ')}): their tools were offered by name only (those the SOP names, none for server/*) and never called, so real prompts and tool results make runs larger; sop validate --check-tools starts them, with your approval`,
    );
  const embedder = paidOrDownloadedEmbedder(o.sop);
  if (embedder)
    out.push(
      `sop check sends no embedding request and loads no model: the dry runs embedded with the local embedder in place of ${embedder}${embedder.startsWith('openai:') ? ", so the estimate leaves out a run's embedding calls" : ''}`,
    );
  const n = runs.length;
  const atMax = runs.filter((r) => r.status === 'max_turns').length;
  if (atMax > 0) out.push(`${atMax} of ${n} dry runs reached --max-turns without a final state`);
  const failed = runs.filter((r) => r.status === 'failed' || r.status === 'interrupted');
  if (failed.length > 0) {
    const why = failed[0]!.events.find((e) => e.type === 'run_finished');
    const error = why?.type === 'run_finished' ? why.error : undefined;
    out.push(
      `${failed.length} of ${n} dry runs did not finish (${failed[0]!.status}${error ? `: ${error}` : ''}; its folder is kept: ${failed[0]!.dir})`,
    );
  }
  // States whose every visit ended at its max_turns (a judge or a command never moved on).
  const exits = new Map<string, { maxTurns: number; other: number }>();
  for (const r of runs)
    for (const e of r.events) {
      if (e.type !== 'state_entered' || e.from === undefined) continue;
      const x = exits.get(e.from) ?? { maxTurns: 0, other: 0 };
      if (e.reason === 'max_turns') x.maxTurns++;
      else x.other++;
      exits.set(e.from, x);
    }
  for (const [state, x] of exits)
    if (x.maxTurns > 0 && x.other === 0)
      out.push(`state "${state}" ended only at its controller.max_turns in ${n} dry runs (${x.maxTurns} visits); nothing else moves it on`);
  // Prompts larger than the model's context.
  const over = new Map<string, { tokens: number; limit: number; state: string }>();
  for (const r of runs)
    for (const e of r.events) {
      if (e.type !== 'llm_call') continue;
      const limit = contextWindow(e.model);
      if (limit !== undefined && e.usage.promptTokens > limit && e.usage.promptTokens > (over.get(e.model)?.tokens ?? 0))
        over.set(e.model, { tokens: e.usage.promptTokens, limit, state: e.state });
    }
  for (const [model, x] of over)
    out.push(`a prompt of ${x.tokens} tokens (state "${x.state}") exceeds the ${x.limit}-token context of ${model}`);
  // A running summary that is enabled but never refreshed.
  const resolved = resolveSop(o.sop);
  const summarised = Object.values(resolved.states).filter((s) => !s.final && s.summary.enabled);
  const fired = runs.some((r) => r.events.some((e) => e.type === 'summary'));
  if (summarised.length > 0 && !fired && failed.length < n) {
    const every = Math.min(...summarised.map((s) => s.summary.every));
    out.push(
      `the running summary never fired in ${n} dry runs (every ${every} messages; runs took ${spread(runs.map((r) => r.turns)).max} turns at most` +
        (atMax > 0 ? `, cut short by --max-turns` : '') +
        `): set environment.summary.every lower, or "enabled": false`,
    );
  }
  return out;
}
