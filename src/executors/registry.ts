// The executors a SOP command can name. Adding one: write src/executors/NAME.ts exporting
// `executor` (see types.ts) and list it here.
import { executor as code } from './code.js';
import { executor as finish } from './finish.js';
import { executor as human } from './human.js';
import { executor as knowledge } from './knowledge.js';
import { executor as library } from './library.js';
import { executor as memory } from './memory.js';
import { executor as sop } from './sop.js';
import { executor as taskBoard } from './task-board.js';
import { executor as worldModel } from './world-model.js';
import type { Executor } from './types.js';

const EXECUTORS: readonly Executor[] = [code, memory, library, human, sop, finish, taskBoard, worldModel, knowledge];

const byName = new Map(EXECUTORS.map((e) => [e.name, e]));

export function getExecutor(name: string): Executor | undefined {
  return byName.get(name);
}

export function executorNames(): string[] {
  return [...byName.keys()];
}
