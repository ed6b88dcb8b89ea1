// A run with the built-in features plugged in: durability (the journal's effect ledger),
// actions and executors, the scientist's views, and the Agents 1.0 turn for imported SOPs.
// The loop itself (src/runtime/run.ts) knows none of them; each is a plugin (src/runtime/hooks.ts).
import { actionsPlugin } from '../actions/plugin.js';
import type { ActionOptions } from '../actions/runtime.js';
import { agentsV1Plugin } from '../compat/agents-v1/plugin.js';
import type { AgentsV1Options } from '../compat/agents-v1/turns.js';
import type { EffectIndex, RerunPolicy } from '../journal/effects.js';
import { durabilityPlugin } from '../journal/plugin.js';
import type { ResumeFrom } from '../journal/snapshot.js';
import type { RunHost, RunPlugin } from '../runtime/hooks.js';
import { RunLoop, type RunOptions as LoopOptions } from '../runtime/run.js';
import { scientistPlugin } from '../scientist/plugin.js';
import { budgetPlugin, type BudgetOptions } from '../cost/budget-plugin.js';
import { createRunHub, type McpRunOptions } from '../mcp/run-hub.js';
import type { McpHub } from '../mcp/hub.js';

export { resolveInputs, undeclaredInputs, type RunPosition, type RunResult, type RunStatus } from '../runtime/run.js';

export interface RunOptions extends Omit<LoopOptions, 'resume'> {
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
  /** Run folder, workspace and executor flags (--auto-run, --yes, --sandbox); see src/actions/runtime.ts. */
  actions?: ActionOptions;
  // cost (docs/cost.md)
  /** Run budgets of the command line (--budget-tokens, --budget-usd); a sub-flow gets its parent's accounts. */
  budget?: Omit<BudgetOptions, 'pricing'>;
  // mcp
  /** MCP servers: --sandbox (stdio servers under bubblewrap) and --bind SLOT=server/tool. */
  mcp?: McpRunOptions;
}

/** The built-in plugins of a run, in the order the loop consults them. */
export function builtinPlugins(options: RunOptions): (host: RunHost) => RunPlugin[] {
  return (host) => {
    const plugins: RunPlugin[] = [];
    plugins.push(
      durabilityPlugin(host, {
        index: options.resume?.effects ?? options.effectIndex,
        rerun: options.rerun,
        prefix: options.actions?.flow ? `${options.actions.flow}/` : '',
      }),
    );
    const budget = budgetPlugin(host, { ...options.budget, pricing: options.pricing }); // cost: budgets
    plugins.push(budget);
    // A sub-flow (sop executor) is a nested run with its own environment.
    const actions = actionsPlugin(host, options.actions, async (r) => {
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
    });
    plugins.push(actions, scientistPlugin(host, actions.runtime.memory));
    if (host.sop.agents_v1) {
      plugins.push(
        agentsV1Plugin(host, {
          workspace: options.actions?.workspace,
          ...(options.embedder ? { embedder: async () => options.embedder! } : {}),
          ...options.agentsV1,
        }),
      );
    }
    return plugins;
  };
}

/** A run of a SOP with every built-in feature; `options.plugins` adds more after them. */
export class Run extends RunLoop {
  /** mcp: the run's MCP servers (undefined when the SOP declares none); closed when the run ends. */
  readonly mcp: McpHub | undefined;
  constructor(options: RunOptions) {
    const mcp = createRunHub(options); // mcp: started lazily, one hub per (sub-)run
    if (mcp) options = { ...options, ...mcp.options };
    const builtin = builtinPlugins(options);
    const extra = options.plugins;
    super({
      workspace: options.actions?.workspace,
      toolExecutors: options.agentsV1?.toolExecutors,
      ...options,
      plugins: (host) => [...builtin(host), ...(extra?.(host) ?? [])],
    });
    this.mcp = mcp?.hub;
    if (mcp) mcp.effects.current = this.effects; // slot calls are journaled effects
  }

  override async run(): ReturnType<RunLoop['run']> {
    try {
      return await super.run();
    } finally {
      await this.mcp?.close(); // mcp: servers end with the run (Ctrl-C included)
    }
  }
}
