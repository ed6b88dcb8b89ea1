// The scientist's executors: task_board, world_model and knowledge. Each is declared up front
// (NAME-spec.ts) and its work imported at its first call (src/core/commands/lazy.ts), so loading
// and validating a SOP does not load it. The scientist's plugin contributes them to a run
// (commandExecutors); the loader checks commands against them (src/api/loader/executors.ts).
import { lazyExecutor } from '../../../core/commands/lazy.js';
import type { Executor } from '../../../core/commands/executor.js';
import type { Sop } from '../../../format/sop/types.js';
import { knowledgeSpec } from './knowledge-spec.js';
import { taskBoardSpec } from './task-board-spec.js';
import { worldModelSpec } from './world-model-spec.js';

export const SCIENTIST_EXECUTORS: readonly Executor[] = [
  lazyExecutor(taskBoardSpec, () => import('./task-board.js')),
  lazyExecutor(worldModelSpec, () => import('./world-model.js')),
  lazyExecutor(knowledgeSpec, () => import('./knowledge.js')),
];

const NAMES = new Set(SCIENTIST_EXECUTORS.map((e) => e.name));

/** Whether a SOP's commands name one of the scientist's executors. */
export function namesScientistExecutor(sop: Sop): boolean {
  return Object.values(sop.states).some((s) => Object.values(s.commands ?? {}).some((c) => NAMES.has(c.executor)));
}
