// The Agents 1.0 turn as a plugin of a run (src/core/runtime/hooks.ts), for SOPs with `agents_v1`
// (imported configs): concise mode on every call, an observation into the agent's private memory
// before each turn, the agent's prompt built from that memory, and one summary for the run.
import type { RunContext } from '../../../../core/runtime/context.js';
import type { RunPlugin } from '../../../../core/runtime/hooks.js';
import { withConcise } from './concise.js';
import { AgentsV1Turns, type AgentsV1Options } from './turns.js';

export function agentsV1Plugin(host: RunContext, options: AgentsV1Options & { compat: boolean }): RunPlugin & { turns: AgentsV1Turns } {
  const turns = new AgentsV1Turns(
    {
      sop: host.sop,
      resolved: host.resolved,
      file: host.file,
      env: host.env,
      compat: options.compat,
      emit: (e) => host.emit(e),
      turn: () => host.turn(),
    },
    options,
  );
  return {
    name: 'v1',
    turns,
    // one summary for the whole run, read by every judge
    semantics: (s) => ({ ...s, keepSummaryOnEntry: true, componentMemoryInCheckpoints: false, summaryChunks: false }),
    llm: (llm) =>
      withConcise(llm, AgentsV1Turns.conciseSentence(host.sop), (s) =>
        Boolean(host.resolved.states[s]?.def.controller?.judge?.last_prompt),
      ),
    beforeTurn: ({ state, role, agent }) => turns.observe(state, role, agent),
    speak: async (_step, act) => ({ content: await act(undefined, turns.privateMemory()) }),
    afterMessage: (message) => turns.recorded(message), // the sender's private memory
    checkpoint: () => turns.checkpoint(),
    restoreCheckpoint: (state) => turns.restoreCheckpoint(state),
  };
}
