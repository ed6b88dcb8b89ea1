// The executors a SOP's commands may name, as every built-in feature contributes them: what a
// loaded SOP's commands are checked against. A run gets the same ones through its plugins'
// commandExecutors hook (src/core/runtime/hooks.ts).
import { EXECUTORS } from '../../features/actions/executors/registry.js';
import type { ExecutorTable } from '../../core/commands/commands.js';

export const BUILTIN_EXECUTORS: ExecutorTable = EXECUTORS;
