// The scientist's task board, world model, resource levels and mood as a plugin of a run
// (src/runtime/hooks.ts): {{task_board}}, {{world_model}} and {{mood}} in every prompt, and the
// LLM profile of the resource level of the task in progress. They live in memory files.
import type { RunHost, RunPlugin } from '../runtime/hooks.js';
import type { MemoryFiles } from '../workspace/memory-files.js';
import { scientistContext, taskLlmProfile } from './views.js';

export function scientistPlugin(host: RunHost, memory: MemoryFiles): RunPlugin {
  const sop = host.sop;
  return {
    name: 'scientist',
    ...(sop.memory_types || sop.mood
      ? { context: () => scientistContext(sop, memory, { seed: host.seed, turn: host.turn(), inputs: host.inputs }) }
      : {}),
    // while a task is in progress, its resource level's LLM profile applies
    ...(sop.resources ? { agentCall: () => ({ settings: taskLlmProfile(sop, memory, host.inputs) }) } : {}),
  };
}
