// A run with the built-in features plugged in: durability (the journal's effect ledger), budgets,
// actions and executors, MCP servers, the scientist's views, the Agents 1.0 turn for imported
// SOPs, population states and their batches. The loop itself (src/core/runtime/run-loop.ts) knows none of them; each is a plugin
// (src/core/runtime/hooks.ts), made only for a SOP that uses it.
import { actionsPlugin } from '../../features/actions/plugin.js';
import type { ActionOptions, SubRunOutcome, SubRunRequest } from '../../features/actions/host.js';
import { loadSopFile } from '../loader/checked-load.js';
import { agentsV1Plugin } from '../../features/agents-v1/compat/agents-v1/plugin.js';
import { semanticsFor } from '../../features/agents-v1/compat/agents-v1/semantics.js';
import type { AgentsV1Options } from '../../features/agents-v1/compat/agents-v1/turns.js';
import { budgetPlugin, type BudgetOptions } from '../../features/cost/budget-plugin.js';
import type { EffectIndex, RerunPolicy } from '../../features/journal/effects.js';
import { durabilityPlugin } from '../../features/journal/plugin.js';
import type { ResumeFrom } from '../../features/journal/snapshot.js';
import { mcpForRun, type McpRunOptions } from '../../features/mcp/run-hub.js';
import type { RunContext } from '../../core/runtime/context.js';
import type { RunPlugin } from '../../core/runtime/hooks.js';
import { RunLoop, type RunOptions as LoopOptions } from '../../core/runtime/run-loop.js';
import { scientistPlugin } from '../../features/scientist/plugin.js';
import { populationPlugin, type PopulationOptions } from '../../features/population/plugin.js';
import { shardsPlugin, type ShardOptions } from '../../features/shards/plugin.js';
import { batchPlugin, type BatchOptions } from '../../features/batch/plugin.js';
import { makeModuleRunPlugins, moduleRunPlugins } from '../module-run-plugins.js';

export { resolveInputs, undeclaredInputs, type RunPosition, type RunResult, type RunStatus } from '../../core/runtime/run-loop.js';
export { checkGivenInputs, checkInputNames, inputRequired } from '../../core/runtime/inputs.js';

export interface RunOptions extends Omit<LoopOptions, 'resume' | 'semantics' | 'settings'> {
  /** Reproduce Agents 1.0 quirks (re-entry without begin turn, " " begin message): src/features/agents-v1/compat/agents-v1/semantics.ts. */
  compat?: 'agents-v1';
  /** agents-v1: embedder, workspace and tool executors for SOPs with `agents_v1` (imported Agents 1.0 configs). */
  agentsV1?: AgentsV1Options;
  // durability
  /** Continue from a journaled checkpoint instead of starting afresh (sop resume, sop fork). */
  resume?: ResumeFrom;
  /** Side effects interrupted by a crash: perform again with --auto-run, or ask. */
  rerun?: RerunPolicy;
  /** A sub-flow of a resumed run: the journal's effect results (its keys are prefixed by the flow). */
  effectIndex?: EffectIndex;
  // actions
  /** Run folder, workspace and executor flags (--auto-run, --yes, --sandbox); see src/features/actions/host.ts. */
  actions?: ActionOptions;
  // cost (docs/cost.md)
  /** Run budgets of the command line (--budget-tokens, --budget-usd); a sub-flow gets its parent's accounts. */
  budget?: Omit<BudgetOptions, 'pricing'>;
  // mcp
  /** MCP servers: --sandbox (stdio servers under bubblewrap) and --bind SLOT=server/tool. */
  mcp?: McpRunOptions;
  // population
  /** Population states: LLM calls a step makes at once (--concurrency; default 64), and the worlds a SOP may name. */
  population?: PopulationOptions;
  // shards
  /** A population step's calls over `sop worker --shards` processes on Redis (--shard-over, --shard-size). */
  shards?: ShardOptions;
  // batch
  /** A step's calls as one batch file (--llm-mode batch, --batch-target): docs/population.md#batch-mode. */
  batch?: BatchOptions;
}

const present = (p: RunPlugin | undefined): p is RunPlugin => p !== undefined;

/** The built-in plugins of a run, in the order the loop consults them. */
export function builtinPlugins(options: RunOptions): (ctx: RunContext) => RunPlugin[] {
  return (ctx) => {
    const durability = durabilityPlugin(ctx, {
      index: options.resume?.effects ?? options.effectIndex,
      rerun: options.rerun,
      prefix: options.actions?.flow ? `${options.actions.flow}/` : '',
    });
    const budget = budgetPlugin(ctx, { ...options.budget, pricing: options.pricing });
    // each feature is handed only the options it declares (not the run's whole bag)
    const mcp = mcpForRun({ sop: options.sop, file: options.file, actions: options.actions, mcp: options.mcp }); // started lazily, one hub per (sub-)run
    const slots = mcp?.slots(ctx) ?? {};
    // A sub-flow (sop executor) is a nested run with its own environment.
    const subRun = async (r: SubRunRequest): Promise<SubRunOutcome> => {
      const res = await new Run({
        ...options,
        sop: r.sop,
        file: r.file,
        runId: r.runId,
        inputs: r.inputs,
        listeners: r.listeners,
        actions: r.actions,
        environment: undefined,
        resume: undefined,
        launch: undefined,
        effectIndex: options.resume?.effects ?? options.effectIndex, // replay a sub-flow's journaled effects
        serverLlm: options.serverLlm ?? options.sop.llm, // the provider's own server is the top-level SOP's
        budget: { inherited: budget.runAccounts() }, // sub-flows draw on the parent's budgets
      }).run();
      return { status: res.status, turns: res.turns, result: res.result, summary: res.summary, error: res.error, usage: res.usage };
    };
    const actions = actionsPlugin(ctx, options.actions, { subRun, loadSop: loadSopFile });
    const v1 = ctx.sop.agents_v1
      ? agentsV1Plugin(ctx, {
          workspace: options.actions?.workspace,
          ...(options.embedder ? { embedder: async () => options.embedder! } : {}),
          ...options.agentsV1,
          compat: options.compat === 'agents-v1',
          toolExecutors: { ...options.agentsV1?.toolExecutors, ...options.toolExecutors, ...slots },
        })
      : undefined;
    return [
      durability,
      budget,
      actions,
      scientistPlugin(ctx),
      v1,
      mcp?.plugin(slots),
      populationPlugin(options.population)(ctx),
      options.shards ? shardsPlugin(options.shards)(ctx) : undefined,
      batchPlugin(options.batch)(ctx),
    ].filter(present);
  };
}

/** A run of a SOP with every built-in feature; `options.plugins` adds more after them. */
export class Run extends RunLoop {
  constructor(options: RunOptions) {
    const builtin = builtinPlugins(options);
    const extra = options.plugins;
    const fromModules = moduleRunPlugins(options.sop, options.file); // run plugins of the modules the SOP names (src/api/plugins.ts)
    super({
      workspace: options.actions?.workspace,
      toolExecutors: options.agentsV1?.toolExecutors,
      ...options,
      semantics: semanticsFor(options.compat),
      settings: { compat: options.compat },
      plugins: (ctx) => [...builtin(ctx), ...makeModuleRunPlugins(fromModules, ctx), ...(extra?.(ctx) ?? [])],
    });
  }
}
