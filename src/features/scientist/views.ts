// What templates see of the structured memories: {{task_board}}, {{world_model}} and {{mood}}.
// Each view carries its parts (for SOP prompts that lay them out themselves) and `text`, the
// view rendered with prompts/scientist/task_board.hbs or world_model.hbs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileTemplate, tidy } from '../../core/prompt/templates.js';
import type { Sop } from '../../format/sop/types.js';
import { schedule } from './taskboard/scheduler.js';
import type { Task } from './taskboard/task.js';
import { stepsAt } from './taskboard/routes.js';
import { packageRoot } from '../../shared/util/package-root.js';
import type { Statement } from './worldmodel/statement.js';
import { memoryTypes, readTaskBoard, readWorldModel, type TextStore } from './memory-types.js';
import { moodAt, type MoodView } from './mood.js';
import { resourcesFor, userAway, type TaskResources } from './resources.js';
import type { TaskBoard } from './taskboard/board.js';
import type { WorldModel } from './worldmodel/model.js';

/** How many entries of the current task's stream of consciousness a prompt shows. */
export const STREAM_SHOWN = 8;
export const THOUGHTS_SHOWN = 5;

const sources = new Map<string, string>();
function render(name: string, view: object): string {
  let src = sources.get(name);
  if (src === undefined) {
    src = readFileSync(join(packageRoot(), 'prompts', 'scientist', `${name}.hbs`), 'utf8');
    sources.set(name, src);
  }
  return tidy(compileTemplate(src, `prompts/scientist/${name}.hbs`)(view));
}

export interface RunFacts {
  seed: number;
  turn: number;
  inputs: Record<string, string>;
}

const line = (t: Task) => ({
  id: t.id,
  name: t.name,
  status: t.status,
  value: t.value,
  depth: t.depth ?? 0,
  requires: t.tasks_required.join(', '),
  answer: t.answer ?? '',
  origin: [...t.origin.thoughts.map((id) => `thought ${id}`), ...t.origin.tasks.map((id) => `task ${id}`)].join(', '),
});

/** What the task in progress may use, and its routes and latest thoughts. */
export function currentTaskView(t: Task, sop: Pick<Sop, 'resources'>, inputs: Record<string, string>) {
  const r: TaskResources = resourcesFor(t.value, t.resource_level, sop.resources, { userAway: userAway(sop.resources, inputs) });
  const used = stepsAt(t, r.level);
  return {
    ...line(t),
    description: t.description,
    proposed: t.answer ?? '',
    level: r.level,
    model: r.profile.model ?? '',
    max_steps: r.profile.max_steps,
    steps_used: used,
    steps_left: Math.max(0, r.profile.max_steps - used),
    may_ask_user: r.may_ask_user,
    ask_user_denied: r.ask_user_denied ?? '',
    may_create_framework: r.may_create_framework,
    framework_denied: r.framework_denied ?? '',
    next_level: r.next_level ?? '',
    routes: (t.routes ?? []).map((x) => ({ ...x, indent: '  '.repeat(x.depth - 1), score: x.score.toFixed(2) })),
    stream: t.stream_of_consciousness.slice(-STREAM_SHOWN),
  };
}

/** A free thought (one with no task) retrieved as relevant to what the agent works on now. */
export interface RelevantThought {
  id: number;
  name: string;
  content: string;
  score: number;
}

export function taskBoardView(
  board: TaskBoard,
  sop: Pick<Sop, 'resources'>,
  inputs: Record<string, string>,
  relevant: RelevantThought[] = [],
) {
  const s = schedule(board.tasks);
  const current = board.inProgress();
  const view = {
    tasks: board.tasks.map(line),
    offered: s.offered.map(line),
    blocked: s.blocked.map((b) => ({ ...line(b.task), failed: b.failed.join(', ') })),
    open: board.tasks.filter((t) => t.status === 'open').length,
    done: s.done,
    current: current ? currentTaskView(current, sop, inputs) : undefined,
    thoughts: board.thoughts.slice(-THOUGHTS_SHOWN),
    // self: free thoughts (no task) close in meaning to the task in progress, else the mission
    relevant_thoughts: relevant.map((r) => ({ ...r, score: r.score.toFixed(2) })),
  };
  return { ...view, text: render('task_board', view) };
}

const statementLine = (s: Statement) => ({
  id: s.id,
  text: s.text,
  status: s.status,
  reason: s.reason ?? '',
  task: s.task,
  triples: s.triples.map((t) => `(${t.subject}; ${t.predicate}; ${t.object})`).join(' '),
  predictions: s.predictions,
  tests: s.predictions
    .filter((p) => p.test)
    .map((p) => `${p.test!.method} ${p.test!.outcome}`)
    .join(', '),
});

export function worldModelView(model: WorldModel) {
  const view = {
    accepted: model.accepted.map(statementLine),
    hypotheses: model.hypotheses.map(statementLine),
    rejected: model.rejected.map(statementLine),
  };
  return { ...view, text: render('world_model', view) };
}

/** The template values of a SOP's structured memories and mood (empty when it has none). */
export function scientistContext(
  sop: Pick<Sop, 'memory_types' | 'resources' | 'mood'>,
  store: TextStore,
  run: RunFacts,
  relevant: RelevantThought[] = [],
): Record<string, unknown> {
  const types = memoryTypes(sop);
  const out: Record<string, unknown> = {};
  let board: TaskBoard | undefined;
  for (const [name, type] of Object.entries(types)) {
    if (!store.has(name)) continue;
    if (type === 'task_board' && out.task_board === undefined) {
      board = readTaskBoard(store, name);
      out.task_board = taskBoardView(board, sop, run.inputs, relevant);
    } else if (type === 'world_model' && out.world_model === undefined) {
      out.world_model = worldModelView(readWorldModel(store, name));
    }
  }
  const mood: MoodView | undefined = moodAt(
    sop.mood,
    run.seed,
    run.turn,
    (board?.thoughts ?? []).map((t) => ({ text: `${t.name}: ${t.content}`, turn: t.turn ?? 0 })),
  );
  if (mood) out.mood = mood;
  return out;
}

/** LLM settings of the task in progress's resource level, to lay over an agent call's settings. */
export function taskLlmProfile(
  sop: Pick<Sop, 'memory_types' | 'resources'>,
  store: TextStore,
  inputs: Record<string, string>,
): { model?: string; temperature?: number; max_tokens?: number } | undefined {
  if (!sop.resources) return undefined;
  for (const [name, type] of Object.entries(memoryTypes(sop))) {
    if (type !== 'task_board' || !store.has(name)) continue;
    const task = readTaskBoard(store, name).inProgress();
    if (!task) return undefined;
    const { profile } = resourcesFor(task.value, task.resource_level, sop.resources, { userAway: userAway(sop.resources, inputs) });
    const out: { model?: string; temperature?: number; max_tokens?: number } = {};
    if (profile.model !== undefined) out.model = profile.model;
    if (profile.temperature !== undefined) out.temperature = profile.temperature;
    if (profile.max_tokens !== undefined) out.max_tokens = profile.max_tokens;
    return out;
  }
  return undefined;
}
