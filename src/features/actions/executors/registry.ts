// The executors of the actions feature. Adding one: write src/features/actions/executors/NAME.ts
// exporting `executor` (see src/core/commands/executor.ts) and list it here. Other features
// contribute theirs through the commandExecutors hook (src/core/runtime/hooks.ts), as the scientist
// does (src/features/scientist/executors/index.ts).
import { executor as code } from './code.js';
import { executor as finish } from './finish.js';
import { executor as human } from './human.js';
import { executor as library } from './library.js';
import { executor as memory } from './memory.js';
import { executor as sop } from './sop.js';
import type { Executor } from '../../../core/commands/executor.js';

export const ACTION_EXECUTORS: readonly Executor[] = [code, memory, library, human, sop, finish];
