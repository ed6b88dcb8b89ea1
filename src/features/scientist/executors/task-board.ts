// The `task_board` executor: the working memory of seed 003. Creates, decomposes, starts,
// closes, fails and annotates tasks; records thoughts and searches them by embedding; keeps the
// scored routes of the task in progress (tried depth-first); escalates its resource level; asks
// the user or creates a framework when the task's value allows it. The board is a memory file
// (memory_types: {"NAME": "task_board"}), read and written whole at every command.
import { ArgumentError, parseIds, parseRoutes, parseSubtasks } from '../args.js';
import { memoryNameOf, readTaskBoard, writeTaskBoard } from '../memory-types.js';
import { escalate, ResourceError, resourcesFor, startLevel, userAway } from '../resources.js';
import { TextIndex } from '../text-index.js';
import { taskBoardView } from '../views.js';
import type { TaskBoard } from '../taskboard/board.js';
import { schedule } from '../taskboard/scheduler.js';
import { describeTask, TaskBoardError, type Task, type TaskValue } from '../taskboard/task.js';
import { searchThoughts } from '../taskboard/thought-search.js';
import { WorldModelError } from '../worldmodel/statement.js';
import {
  ExecutorInputError,
  str,
  type ExecContext,
  type ExecResult,
  type Executor,
  type LibraryLanguage,
} from '../../../core/commands/executor.js';
import { DEFAULT_FRAMEWORKS_FILE, DEFAULT_MAX_DEPTH, opOf, taskBoardSpec, type Op } from './task-board-spec.js';

export { DEFAULT_FRAMEWORKS_FILE, DEFAULT_MAX_DEPTH, TASK_BOARD_OPS } from './task-board-spec.js';

const intArg = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);

function taskOf(board: TaskBoard, args: Record<string, unknown>): Task {
  const id = intArg(args.task);
  if (id !== undefined) return board.task(id);
  const current = board.inProgress();
  if (!current) throw new TaskBoardError('no task is in progress; name the task');
  return current;
}

function inProgress(board: TaskBoard, args: Record<string, unknown>, action: string): Task {
  const t = taskOf(board, args);
  if (t.status !== 'in_progress') throw new TaskBoardError(`${describeTask(t)} is ${t.status}; only the task in progress can ${action}`);
  return t;
}

function resourcesOf(t: Task, ctx: ExecContext) {
  return resourcesFor(t.value, t.resource_level, ctx.sop?.resources, { userAway: userAway(ctx.sop?.resources, ctx.inputs) });
}

interface Outcome {
  result: string;
  summary: string;
  changed?: boolean;
  ok?: boolean;
  next?: string;
}

type OpFn = (board: TaskBoard, args: Record<string, unknown>, ctx: ExecContext) => Promise<Outcome> | Outcome;

const OPS: Record<Op, OpFn> = {
  create(board, args) {
    // origin: the thoughts and tasks that led to the task (seed 003's origin link)
    const current = board.inProgress()?.id;
    const fromTasks = args.from_tasks !== undefined ? parseIds(str(args.from_tasks), 'from_tasks') : current !== undefined ? [current] : [];
    const t = board.createTask({
      name: str(args.name) ?? '',
      description: str(args.description),
      value: str(args.value) as TaskValue | undefined,
      requires: parseIds(str(args.requires), 'requires'),
      origin: { tasks: fromTasks, thoughts: parseIds(str(args.from_thoughts), 'from_thoughts') },
    });
    const req = t.tasks_required.length ? `, requires ${t.tasks_required.join(', ')}` : '';
    const from = [...t.origin.thoughts.map((id) => `thought ${id}`), ...t.origin.tasks.map((id) => `task ${id}`)];
    return {
      result: `Created ${describeTask(t)} (${t.value} value${req}${from.length ? `; it came from ${from.join(', ')}` : ''}).`,
      summary: `created ${describeTask(t)}${from.length ? ` from ${from.join(', ')}` : ''}`,
    };
  },
  decompose(board, args, ctx) {
    const parent = taskOf(board, args);
    const maxDepth = intArg(ctx.settings.max_depth) ?? DEFAULT_MAX_DEPTH;
    const subs = board.decompose(parent.id, parseSubtasks(str(args.subtasks) ?? ''), { maxDepth });
    const list = subs
      .map((s) => `- ${describeTask(s)} (${s.value})${s.tasks_required.length ? `, requires ${s.tasks_required.join(', ')}` : ''}`)
      .join('\n');
    return {
      result: `Decomposed ${describeTask(parent)}; it now waits for:\n${list}`,
      summary: `decomposed task ${parent.id} into ${subs.map((s) => s.id).join(', ')}`,
    };
  },
  start(board, args, ctx) {
    const id = intArg(args.task)!;
    const busy = board.inProgress();
    if (busy && busy.id !== id)
      throw new TaskBoardError(`${describeTask(busy)} is in progress; close, fail or decompose it before starting another`);
    const s = schedule(board.tasks);
    if (!s.offered.some((t) => t.id === id)) {
      const t = board.task(id);
      if (t.status === 'open') board.start(id); // throws the precise reason (its requirements)
      const offered = s.offered.map((x) => x.id).join(', ');
      throw new TaskBoardError(
        `${describeTask(t)} is not offered (${t.status})${offered ? `; offered: ${offered}` : '; no task is offered'}`,
      );
    }
    const t = board.start(id);
    if (t.resource_level === undefined) board.setResourceLevel(id, startLevel(t.value, ctx.sop?.resources));
    const r = resourcesOf(t, ctx);
    return {
      result: `Started ${describeTask(t)} (${t.value} value, level ${r.level}, up to ${r.profile.max_steps} route attempts at this level).${t.description ? `\n${t.description}` : ''}`,
      summary: `started ${describeTask(t)}`,
    };
  },
  close(board, args) {
    const t = inProgress(board, args, 'be closed');
    const answer = str(args.answer)?.trim() || t.answer;
    if (!answer) throw new TaskBoardError(`closing ${describeTask(t)} needs its answer (none was proposed)`);
    board.close(t.id, answer);
    const waiting = t.tasks_depending.map((id) => board.task(id)).filter((d) => d.status === 'open');
    const freed = waiting.filter((d) => d.tasks_required.every((r) => board.task(r).status === 'closed'));
    return {
      result: `Closed ${describeTask(t)} with the answer: ${answer}${freed.length ? `\nNow offered: ${freed.map(describeTask).join(', ')}` : ''}`,
      summary: `closed ${describeTask(t)}: ${answer}`,
    };
  },
  fail(board, args) {
    const t = taskOf(board, args);
    const reason = str(args.reason) ?? '';
    board.fail(t.id, reason);
    const blocked = schedule(board.tasks)
      .blocked.filter((b) => b.failed.includes(t.id))
      .map((b) => describeTask(b.task));
    return {
      result: `Marked ${describeTask(t)} failed with the current instruments: ${reason}${blocked.length ? `\nBlocked by it (fail them too, or give them another way): ${blocked.join(', ')}` : ''}`,
      summary: `failed ${describeTask(t)}: ${reason}`,
    };
  },
  annotate(board, args) {
    const t = taskOf(board, args);
    board.annotate(t.id, str(args.note) ?? '');
    return { result: `Noted on ${describeTask(t)}.`, summary: `annotated task ${t.id}` };
  },
  think(board, args, ctx) {
    const task = intArg(args.task) ?? board.inProgress()?.id;
    const th = board.addThought({ name: str(args.name) ?? '', content: str(args.content) ?? '', task, turn: ctx.turn });
    return { result: `Thought ${th.id} recorded${task !== undefined ? ` on task ${task}` : ''}.`, summary: `thought ${th.id}: ${th.name}` };
  },
  async search_thoughts(board, args, ctx) {
    if (!ctx.embedder) throw new TaskBoardError('this run has no embedder to search thoughts with');
    const k = intArg(args.k) ?? 5;
    const hits = await searchThoughts(board, new TextIndex(await ctx.embedder()), str(args.query) ?? '', k);
    const list = hits.map((h) => `- thought ${h.thought.id} (${h.score.toFixed(2)}) ${h.thought.name}: ${h.thought.content}`).join('\n');
    return {
      result: hits.length ? `Closest thoughts:\n${list}` : 'No thoughts yet.',
      summary: `searched thoughts: ${hits.length} found`,
      changed: false,
    };
  },
  solution(board, args) {
    const t = inProgress(board, args, 'have a proposed answer');
    const answer = str(args.answer)?.trim() ?? '';
    if (!answer) throw new TaskBoardError('the proposed answer is empty');
    t.answer = answer;
    board.annotate(t.id, `Proposed answer: ${answer}`);
    return { result: `Proposed for ${describeTask(t)}: ${answer}`, summary: `proposed an answer for task ${t.id}` };
  },
  add_routes(board, args, ctx) {
    const t = inProgress(board, args, 'get routes');
    const added = board.addRoutes(
      t.id,
      parseRoutes(str(args.routes) ?? ''),
      intArg(ctx.settings.max_depth) ?? DEFAULT_MAX_DEPTH,
      intArg(args.parent),
    );
    return {
      result: `Added to ${describeTask(t)}:\n${added.map((r) => `- route ${r.id} (${r.score.toFixed(2)}, depth ${r.depth}) ${r.description}`).join('\n')}`,
      summary: `added routes ${added.map((r) => r.id).join(', ')} to task ${t.id}`,
    };
  },
  next_route(board, args, ctx) {
    const t = inProgress(board, args, 'try routes');
    const r = resourcesOf(t, ctx);
    const route = board.nextRoute(t.id, r.level, r.profile.max_steps);
    return {
      result: `Trying route ${route.id} of ${describeTask(t)}: ${route.description} (score ${route.score.toFixed(2)}, depth ${route.depth}; attempt ${board.task(t.id).routes!.filter((x) => x.status !== 'untried' && x.level === r.level).length} of ${r.profile.max_steps} at level ${r.level}).`,
      summary: `task ${t.id}: trying route ${route.id}`,
    };
  },
  route_result(board, args) {
    const t = inProgress(board, args, 'try routes');
    const outcome = str(args.outcome) as 'succeeded' | 'failed';
    const route = board.routeResult(t.id, intArg(args.route)!, outcome, str(args.note) ?? '');
    return {
      result: `Route ${route.id} of ${describeTask(t)} ${outcome}${route.note ? `: ${route.note}` : ''}.`,
      summary: `task ${t.id}: route ${route.id} ${outcome}`,
    };
  },
  escalate(board, args, ctx) {
    const t = inProgress(board, args, 'be escalated');
    const level = escalate(t.value, t.resource_level, ctx.sop?.resources);
    board.setResourceLevel(t.id, level);
    board.annotate(t.id, `Escalated to level ${level}: ${str(args.reason) ?? ''}`);
    const r = resourcesOf(t, ctx);
    return {
      result: `${describeTask(t)} now works at level ${level}${r.profile.model ? ` (model ${r.profile.model})` : ''}, with ${r.profile.max_steps} route attempts at this level.`,
      summary: `escalated task ${t.id} to ${level}`,
    };
  },
  framework(board, args, ctx) {
    const t = taskOf(board, args);
    const r = resourcesOf(t, ctx);
    if (!r.may_create_framework) throw new TaskBoardError(r.framework_denied ?? `a ${t.value}-value task may not create frameworks`);
    const file = str(ctx.settings.frameworks) ?? DEFAULT_FRAMEWORKS_FILE;
    if (!ctx.memory.has(file))
      throw new TaskBoardError(`frameworks are saved in the memory file "${file}", which this SOP does not declare`);
    const name = str(args.name)?.trim() ?? '';
    const content = str(args.content)?.trim() ?? '';
    if (!name || !content) throw new TaskBoardError('a framework needs a name and its content');
    if (str(args.kind) === 'code') {
      // a code framework is library code later code imports, not a note (seed 003)
      const lang: LibraryLanguage = str(args.language) === 'javascript' ? 'javascript' : 'python';
      const library = ctx.library;
      if (!library) throw new TaskBoardError('a code framework is saved to the code library, and this run has none');
      const inspected = library.inspect(content, lang);
      if (!inspected.ok) throw new TaskBoardError(`the code framework "${name}" is not valid ${lang}: ${inspected.error}`);
      if (inspected.functions.length === 0)
        throw new TaskBoardError(`the code framework "${name}" defines no top-level function: write it as functions later code can import`);
      const module = lang === 'python' ? 'library.py' : 'library.js';
      const saved = library.save(content, inspected.functions, lang, module);
      const signatures = inspected.functions.map((f) => f.signature).join(', ');
      ctx.memory.append(file, `## ${name} (code, from task ${t.id})\n\nIn ${module}: ${signatures}. Use it with: ${saved.importHint}\n\n`);
      board.annotate(t.id, `Created the code framework "${name}" (${module}).`);
      return {
        result: `Saved the code framework "${name}" to the code library ${module} (${signatures}); later code uses it with: ${saved.importHint}`,
        summary: `code framework "${name}" from task ${t.id}: ${signatures} in ${module}`,
      };
    }
    ctx.memory.append(file, `## ${name} (${str(args.kind)}, from task ${t.id})\n\n${content}\n\n`);
    board.annotate(t.id, `Created the ${str(args.kind)} framework "${name}".`);
    return {
      result: `Saved the ${str(args.kind)} framework "${name}" in ${file}; later tasks see it.`,
      summary: `framework "${name}" from task ${t.id}`,
    };
  },
  async ask_user(board, args, ctx) {
    const t = taskOf(board, args);
    const r = resourcesOf(t, ctx);
    if (!r.may_ask_user) throw new TaskBoardError(`cannot ask the user: ${r.ask_user_denied}`);
    const question = str(args.question)?.trim() ?? '';
    if (!question) throw new TaskBoardError('the question is empty');
    let reply: string;
    let automatic = false;
    if (ctx.yes) {
      reply = 'yes';
      automatic = true;
    } else {
      const prompt = ctx.templates.render('human_question', { kind: 'ask', text: question, command: ctx.command, agent: ctx.agent });
      reply = await ctx.human.ask({ agent: ctx.agent, role: ctx.role, state: ctx.state, kind: 'question', prompt });
    }
    board.annotate(t.id, `Asked the user: ${question} The user replied: ${reply}`);
    return {
      result: ctx.templates.render('human_result', { kind: 'ask', reply, automatic, text: question }),
      summary: `asked the user ("${question.slice(0, 80)}"); reply: "${reply.slice(0, 80)}"`,
    };
  },
  done(board) {
    const s = schedule(board.tasks);
    if (!s.done) {
      const open = [...s.in_progress, ...s.offered, ...s.waiting, ...s.blocked.map((b) => b.task)];
      throw new TaskBoardError(`tasks are still open or in progress: ${open.map((t) => `${describeTask(t)} (${t.status})`).join(', ')}`);
    }
    const closed = board.tasks.filter((t) => t.status === 'closed').length;
    return {
      result: `No task is open: ${closed} closed, ${board.tasks.length - closed} failed.`,
      summary: 'all tasks done',
      changed: false,
    };
  },
  show(board, _args, ctx) {
    return { result: taskBoardView(board, ctx.sop ?? {}, ctx.inputs ?? {}).text, summary: 'showed the task board', changed: false };
  },
};

export const executor: Executor = {
  ...taskBoardSpec,
  async run(args, ctx): Promise<ExecResult> {
    const op = opOf(ctx.settings);
    try {
      if (!ctx.sop) throw new TaskBoardError("the task_board executor needs the run's SOP");
      const name = memoryNameOf(ctx.sop, 'task_board', str(ctx.settings.file));
      const board = readTaskBoard(ctx.memory, name);
      const out = await OPS[op](board, args, ctx);
      if (out.changed !== false) writeTaskBoard(ctx.memory, name, board);
      const key = str(ctx.settings.finish);
      return {
        ok: out.ok !== false,
        result: out.result,
        summary: out.summary,
        ...(key !== undefined ? { finish: { result: out.result, summary: out.summary, next: key } } : {}),
      };
    } catch (err) {
      if (err instanceof TaskBoardError || err instanceof ArgumentError || err instanceof ResourceError || err instanceof WorldModelError) {
        throw new ExecutorInputError(err.message);
      }
      throw err;
    }
  },
};
