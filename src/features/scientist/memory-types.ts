// Structured memory files (memory_types in a SOP): a task board or a world model kept as JSON in
// a memory file of the run, read and written whole by the executors that change them.
import type { Sop } from '../../format/sop/types.js';
import { TaskBoard } from './taskboard/board.js';
import { parseTaskBoard } from './taskboard/persist.js';
import { WorldModel } from './worldmodel/model.js';
import { parseWorldModel } from './worldmodel/persist.js';
import { TaskBoardError } from './taskboard/task.js';
import { WorldModelError } from './worldmodel/statement.js';
import { describeJsonProblem } from '../../shared/util/json-syntax.js';

export const MEMORY_TYPES = ['task_board', 'world_model'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

/** The store an executor reads and writes (MemoryFiles satisfies it). */
export interface TextStore {
  has(name: string): boolean;
  read(name: string): string;
  write(name: string, text: string): void;
}

export function memoryTypes(sop: Pick<Sop, 'memory_types'>): Record<string, MemoryType> {
  return sop.memory_types ?? {};
}

/** The memory file of a type: `wanted` when given (and of that type), else the only one. */
export function memoryNameOf(sop: Pick<Sop, 'memory_types'>, type: MemoryType, wanted?: string): string {
  const types = memoryTypes(sop);
  if (wanted !== undefined) {
    if (!Object.prototype.hasOwnProperty.call(types, wanted) || types[wanted] !== type) {
      throw new TaskBoardError(
        `memory file "${wanted}" is not declared as a ${type}; add "memory_types": {"${wanted}": "${type}"} to the SOP`,
      );
    }
    return wanted;
  }
  const names = Object.keys(types).filter((n) => types[n] === type);
  if (names.length === 0) throw new TaskBoardError(`this SOP declares no ${type} memory; add "memory_types": {"${type}": "${type}"}`);
  if (names.length > 1)
    throw new TaskBoardError(`this SOP declares several ${type} memories (${names.join(', ')}); name one in the command's "file" setting`);
  return names[0]!;
}

function parseText(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new TaskBoardError(`memory file ${what} is not valid JSON (${describeJsonProblem(text, err)})`);
  }
}

export function readTaskBoard(store: TextStore, name: string): TaskBoard {
  const text = store.read(name);
  return text.trim() === '' ? new TaskBoard() : parseTaskBoard(parseText(text, name), `memory file ${name}`);
}

export function writeTaskBoard(store: TextStore, name: string, board: TaskBoard): void {
  store.write(name, JSON.stringify(board.toJSON(), null, 2) + '\n');
}

export function readWorldModel(store: TextStore, name: string): WorldModel {
  const text = store.read(name);
  if (text.trim() === '') return new WorldModel();
  try {
    return parseWorldModel(JSON.parse(text), `memory file ${name}`);
  } catch (err) {
    if (err instanceof SyntaxError) throw new WorldModelError(`memory file ${name} is not valid JSON (${describeJsonProblem(text, err)})`);
    throw err;
  }
}

export function writeWorldModel(store: TextStore, name: string, model: WorldModel): void {
  store.write(name, JSON.stringify(model.toJSON(), null, 2) + '\n');
}
