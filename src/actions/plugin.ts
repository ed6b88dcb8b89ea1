// Actions as a plugin of a run (src/runtime/hooks.ts): in a state that declares commands the
// agent's reply must be a command, its executor runs once the command is recorded, the prompt
// lists the commands, memory files fill {{memory.NAME}}, and finish moves the state on.
import { limitToVisit } from './prompt.js';
import { ActionRuntime, type ActionOptions, type SubRunOutcome, type SubRunRequest } from './runtime.js';
import type { RunHost, RunPlugin } from '../runtime/hooks.js';

/** The actions of a run; `subRun` runs a sub-flow (sop executor) as a nested run with its own environment. */
export function actionsPlugin(
  host: RunHost,
  options: ActionOptions | undefined,
  subRun: (request: SubRunRequest) => Promise<SubRunOutcome>,
): RunPlugin & { runtime: ActionRuntime } {
  const runtime = new ActionRuntime(
    {
      sop: host.sop,
      file: host.file,
      runId: host.runId,
      env: host.env,
      templates: host.templates,
      usage: host.usage,
      human: host.human,
      signal: host.signal,
      redact: host.redact,
      emit: (e) => host.emit(e),
      turn: () => host.turn(),
      baseContext: () => host.baseContext(),
      perform: (spec, fn) => host.perform(spec, fn),
      inputs: host.inputs,
      embedder: () => host.embedder(),
      subRun,
    },
    options,
  );
  return {
    name: 'actions',
    runtime,
    context: () => ({ memory: runtime.memorySnapshot() }),
    transit: (state, rt) => runtime.transit(state, rt),
    speak: async ({ state, role, agent }, act) => {
      if (!runtime.declares(state)) return undefined;
      await runtime.prepareTools(state); // mcp: the tools the state grants join its commands
      // The reply must be a command; its executor runs once the command is recorded.
      return runtime.commandTurn(state, role, agent, host.turn(), (extra) => act(extra));
    },
    // memory_window keeps only the last N messages of the state's visit
    view: (view, state, stateStart) => limitToVisit(view, state.def.memory_window, stateStart),
    agentPrompt: (state, base) => ({ parts: runtime.promptParts(state, base), context: { commands: runtime.commandList(state) } }),
    agentCall: (state, _agent, _role, settings) => ({ meta: runtime.callMeta(state, settings) }),
    checkpoint: () => runtime.checkpoint(),
    restoreCheckpoint: (state, context) => runtime.restoreCheckpoint(state, context),
    result: () => ({ result: runtime.result, summary: runtime.summary }),
    close: () => runtime.close(),
  };
}
