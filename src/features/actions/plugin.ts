// Actions as a plugin of a run (src/core/runtime/hooks.ts): in a state that declares commands the
// agent's reply must be a command, its executor runs once the command is recorded, the prompt
// lists the commands, memory files fill {{memory.NAME}}, and finish moves the state on. Active
// only in a SOP that has commands, tools, memory files or a memory_window.
import { MEMORY_FILES } from '../../core/workspace/memory-files.js';
import type { RunContext } from '../../core/runtime/context.js';
import type { RunPlugin } from '../../core/runtime/hooks.js';
import { having, transform, transformAsync } from '../../core/runtime/compose.js';
import { executorTable } from '../../core/commands/commands.js';
import { ACTION_EXECUTORS } from './executors/registry.js';
import type { Sop } from '../../format/sop/types.js';
import { limitToVisit } from './prompt.js';
import type { ActionOptions, SubRunOutcome, SubRunRequest } from './host.js';
import { ActionRuntime } from './runtime.js';

/**
 * Whether a SOP uses actions: commands or MCP tools in a state, memory files (the scientist's
 * memory types, mood and resource levels read them too), or a state's memory_window.
 */
export function usesActions(sop: Sop): boolean {
  if (sop.memory || sop.memory_dir || sop.memory_types || sop.mood || sop.resources) return true;
  return Object.values(sop.states).some((s) => s.commands !== undefined || s.tools !== undefined || s.memory_window !== undefined);
}

export type ActionsPlugin = RunPlugin & { runtime: ActionRuntime };

/** What the engine hands the actions: how a sub-flow (sop executor) runs as a nested run, and how its SOP file is loaded. */
export interface ActionEngine {
  subRun(request: SubRunRequest): Promise<SubRunOutcome>;
  /** Read, parse and check a SOP file with every check (src/api/loader/checked-load.ts). */
  loadSop(file: string): { sop: Sop; file: string };
}

/** The actions of a run (undefined for a SOP that uses none). */
export function actionsPlugin(ctx: RunContext, options: ActionOptions | undefined, engine: ActionEngine): ActionsPlugin | undefined {
  if (!usesActions(ctx.sop)) return undefined;
  const runtime = new ActionRuntime(
    {
      sop: ctx.sop,
      file: ctx.file,
      runId: ctx.runId,
      env: ctx.env,
      templates: ctx.templates,
      usage: ctx.usage,
      human: ctx.human,
      signal: ctx.signal,
      redact: ctx.redact,
      emit: (e) => ctx.emit(e),
      turn: () => ctx.turn(),
      baseContext: () => ctx.baseContext(),
      perform: (spec, fn) => ctx.perform(spec, fn),
      inputs: ctx.inputs,
      embedder: () => ctx.embedder(),
      vars: ctx.vars,
      executors: () => transform(ctx.plugins, 'commandExecutors', executorTable(ACTION_EXECUTORS)),
      stateCommands: (commands, state) => transformAsync(ctx.plugins, 'stateCommands', commands, state),
      contributesCommands: () => having(ctx.plugins, 'stateCommands').length > 0,
      subRun: (r) => engine.subRun(r),
      loadSop: (f) => engine.loadSop(f),
    },
    options,
  );
  ctx.vars.set(MEMORY_FILES, runtime.memory);
  return {
    name: 'actions',
    runtime,
    context: (c) => ({ ...c, memory: runtime.memorySnapshot() }),
    transit: (state, rt) => runtime.transit(state, rt),
    ready: () => runtime.compile(), // the commands, against the executors every feature contributes: a wrong one stops the run before it starts
    beforeTurn: () => runtime.giveNotices(), // a mission a new goal replaced (--memory-dir): said once the run has started
    speak: async ({ state, role, agent }, act) => {
      if (!runtime.declares(state)) return undefined;
      await runtime.prepareCommands(state); // what the run's features add (the tools the state grants)
      // The reply must be a command; its executor runs once the command is recorded.
      return runtime.commandTurn(state, role, agent, ctx.turn(), (extra) => act(extra));
    },
    // memory_window keeps only the last N messages of the state's visit
    view: (view, state, stateStart) => limitToVisit(view, state.def.memory_window, stateStart),
    agentPrompt: (a, state, base) => ({
      parts: [...a.parts, ...runtime.promptParts(state, base)],
      context: { ...a.context, commands: runtime.commandList(state) },
    }),
    agentCall: (spec, state) => ({ ...spec, meta: { ...spec.meta, ...runtime.callMeta(state, spec.settings) } }),
    checkpoint: () => runtime.checkpoint(),
    restoreCheckpoint: (state, context) => runtime.restoreCheckpoint(state, context),
    result: () => ({ result: runtime.result, summary: runtime.summary }),
    close: () => {
      runtime.giveNotices(); // a run that ended before any agent's turn
      runtime.close();
    },
  };
}
