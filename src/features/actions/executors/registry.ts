// The executors a SOP command can name. Adding one: write src/features/actions/executors/NAME.ts exporting
// `executor` (see types.ts) and list it here.
import { executor as code } from './code.js';
import { executor as finish } from './finish.js';
import { executor as human } from './human.js';
import { knowledgeSpec } from '../../scientist/executors/knowledge-spec.js';
import { lazyExecutor } from '../../../core/commands/lazy.js';
import { executor as library } from './library.js';
import { executor as memory } from './memory.js';
import { executor as sop } from './sop.js';
import { taskBoardSpec } from '../../scientist/executors/task-board-spec.js';
import { worldModelSpec } from '../../scientist/executors/world-model-spec.js';
import { executorTable, type ExecutorTable } from '../../../core/commands/commands.js';

// The scientist's executors are declared here and imported at their first call (lazy.ts).
const taskBoard = lazyExecutor(taskBoardSpec, () => import('../../scientist/executors/task-board.js'));
const worldModel = lazyExecutor(worldModelSpec, () => import('../../scientist/executors/world-model.js'));
const knowledge = lazyExecutor(knowledgeSpec, () => import('../../scientist/executors/knowledge.js'));

export const EXECUTORS: ExecutorTable = executorTable([code, memory, library, human, sop, finish, taskBoard, worldModel, knowledge]);
