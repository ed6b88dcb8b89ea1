// One dry run of a SOP through the real engine with a stand-in LLM (the mock, or a mock whose
// replies have a chosen size), nobody asked, no MCP server started, no paid embedder called:
// its events, for `sop check` (src/api/cost-check.ts) and `sop plan` (src/api/plan.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HumanInput } from '../core/io/human.js';
import { MockProvider } from '../core/llm/mock.js';
import type { PricingTable } from '../core/llm/pricing.js';
import type { LlmProvider } from '../core/llm/types.js';
import type { RunEvent } from '../core/runtime/events.js';
import type { Sop } from '../format/sop/types.js';
import { parseEmbedderSpec } from '../core/memory/create-embedder.js';
import { LocalEmbedder } from '../core/memory/local-embedder.js';

/** The SOP's embedder when it is not the local one: a dry run sends no request and downloads nothing. */
export function paidOrDownloadedEmbedder(sop: Sop): string | undefined {
  try {
    return parseEmbedderSpec(sop.environment?.embedder).kind === 'local' ? undefined : sop.environment!.embedder!.trim();
  } catch {
    return undefined; // an unknown spec fails the dry run as it fails a run
  }
}

/** People and questions get a placeholder answer (nobody is asked during a dry run). */
const placeholderHuman: HumanInput = {
  id: 'check',
  consumed: 0,
  ask: () => Promise.resolve('[check] a placeholder answer'),
};

export interface DryRunOptions {
  sop: Sop;
  file: string;
  maxTurns?: number;
  pricing?: PricingTable;
  inputs?: Record<string, string>;
  /** Code runs under bubblewrap (resolved by the caller, as for sop run). */
  sandbox?: boolean;
  /** The stand-in LLM (default: the mock). */
  llm?: LlmProvider;
}

export interface DryRun {
  status: string;
  turns: number;
  events: RunEvent[];
  /** The folder of a dry run that failed (kept; its error may point into it). */
  dir?: string;
}

export async function dryRun(o: DryRunOptions, seed: number): Promise<DryRun> {
  const dir = mkdtempSync(join(tmpdir(), 'sop-check-'));
  const events: RunEvent[] = [];
  let keep = false;
  try {
    const { Run } = await import('./engine/run-with-features.js'); // loaded on use, not by `import 'sop'`
    const result = await new Run({
      sop: o.sop,
      file: o.file,
      llm: o.llm ?? new MockProvider(),
      seed,
      maxTurns: o.maxTurns,
      inputs: o.inputs,
      human: placeholderHuman,
      stream: false,
      ...(o.pricing ? { pricing: o.pricing } : {}),
      listeners: [(e) => events.push(e)],
      // as a mock dry run of sop run: executor reviews and approvals are accepted
      actions: { runDir: dir, workspace: join(dir, 'workspace'), yes: true, sandbox: o.sandbox },
      // a dry run starts no MCP server: a SOP is someone else's input until the user approves a run of it
      mcp: { offline: true },
      // nor calls an embeddings server with the user's key, nor downloads a model: the local embedder stands in
      ...(paidOrDownloadedEmbedder(o.sop) ? { embedder: new LocalEmbedder() } : {}),
    }).run();
    keep = result.status === 'failed' || result.status === 'interrupted';
    return { status: result.status, turns: result.turns, events, ...(keep ? { dir } : {}) };
  } finally {
    // a dry run that failed keeps its folder: its error may point into it (an MCP server's stderr log)
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}
