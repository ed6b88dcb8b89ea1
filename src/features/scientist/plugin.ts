// The scientist's task board, world model, resource levels and mood as a plugin of a run
// (src/core/runtime/hooks.ts): its executors (task_board, world_model, knowledge) for the SOP's
// commands, {{task_board}}, {{world_model}} and {{mood}} in every prompt, and the LLM profile of
// the resource level of the task in progress. They live in memory files.
// Before each turn, the free thoughts relevant to the task in progress are retrieved (free-thoughts.ts).
import { embedderLearns } from '../../core/components/knowledge-base.js';
import { createEmbedder } from '../../core/memory/create-embedder.js';
import type { RunContext } from '../../core/runtime/context.js';
import type { RunPlugin } from '../../core/runtime/hooks.js';
import type { Sop } from '../../format/sop/types.js';
import { MEMORY_FILES, MEMORY_REPLACED, type MemoryFiles } from '../../core/workspace/memory-files.js';
import { FreeThoughts } from './free-thoughts.js';
import { executorTable, type ExecutorTable } from '../../core/commands/commands.js';
import { namesScientistExecutor, SCIENTIST_EXECUTORS } from './executors/index.js';
import { memoryTypes, readTaskBoard, writeTaskBoard } from './memory-types.js';
import { scientistContext, taskLlmProfile, type RelevantThought } from './views.js';

/** Whether a SOP uses the scientist's views: memory types, a mood or resource levels. */
export function usesScientist(sop: Sop): boolean {
  return Boolean(sop.memory_types || sop.mood || sop.resources);
}

/** The scientist's executors and views (undefined for a SOP that uses none); the views read the memory files the actions plugin shares. */
export function scientistPlugin(host: RunContext): RunPlugin | undefined {
  const sop = host.sop;
  const memory = host.vars.get(MEMORY_FILES);
  const executors = namesScientistExecutor(sop)
    ? { commandExecutors: (given: ExecutorTable) => ({ ...given, ...executorTable(SCIENTIST_EXECUTORS) }) }
    : {};
  if (!usesScientist(sop) || !memory) return Object.keys(executors).length ? { name: 'scientist', ...executors } : undefined;
  const boardName = Object.entries(memoryTypes(sop)).find(([, type]) => type === 'task_board')?.[0];
  // the run's embedder, or a fresh one when it learns from what it embeds (see FreeThoughts)
  const free = new FreeThoughts(async () => {
    const e = await host.embedder();
    return embedderLearns(e) ? createEmbedder(sop.environment?.embedder) : e;
  });
  let relevant: RelevantThought[] = [];
  let archived = false;
  return {
    name: 'scientist',
    ...executors,
    ...(sop.memory_types || sop.mood
      ? {
          context: (c) => ({
            ...c,
            ...scientistContext(sop, memory, { seed: host.seed, turn: host.turn(), inputs: host.inputs }, relevant),
          }),
        }
      : {}),
    ...(boardName
      ? {
          beforeTurn: async () => {
            if (!memory.has(boardName)) return;
            if (!archived) {
              archived = true;
              const message = archiveOldMission(memory, boardName, host.vars.get(MEMORY_REPLACED));
              if (message) host.emit({ type: 'warning', message });
            }
            const mission = memory.has('mission') ? memory.read('mission') : (host.inputs.goal ?? '');
            relevant = await free.relevant(readTaskBoard(memory, boardName), mission);
          },
        }
      : {}),
    // while a task is in progress, its resource level's LLM profile applies
    ...(sop.resources
      ? { agentCall: (spec) => ({ ...spec, settings: { ...spec.settings, ...taskLlmProfile(sop, memory, host.inputs) } }) }
      : {}),
  };
}

/**
 * --memory-dir with a new --goal: the mission memory file was replaced, so the tasks still open or
 * in progress were for the old mission. They are archived (kept on the board, under their old
 * mission's notes, but never offered again nor needed to finish); the warning says which.
 */
function archiveOldMission(memory: MemoryFiles, boardName: string, replaced: string[] | undefined): string | undefined {
  if (!replaced?.includes('mission')) return undefined;
  const board = readTaskBoard(memory, boardName);
  const tasks = board.archiveUnfinished('Archived: a new mission replaced the one this task was for.');
  if (tasks.length === 0) return undefined;
  writeTaskBoard(memory, boardName, board);
  const list = tasks.map((t) => `${t.id} "${t.name}"`).join(', ');
  return `new mission: ${tasks.length === 1 ? 'the open task' : `${tasks.length} open tasks`} of the previous mission (${list}) archived on the task board; they are not offered again`;
}
