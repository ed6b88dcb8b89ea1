// The executors a SOP's commands may name, as the built-in features contribute them: what a
// loaded SOP's commands are checked against. A run gets the same ones through its plugins'
// commandExecutors hook (src/core/runtime/hooks.ts).
import { executorTable, type ExecutorTable } from '../../core/commands/commands.js';
import { ACTION_EXECUTORS } from '../../features/actions/executors/registry.js';
import { SCIENTIST_EXECUTORS } from '../../features/scientist/executors/index.js';

export const BUILTIN_EXECUTORS: ExecutorTable = executorTable([...ACTION_EXECUTORS, ...SCIENTIST_EXECUTORS]);
