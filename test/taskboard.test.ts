// The task board: monotonic ids, dependency scheduling, cycle detection, status transitions,
// thoughts (searched by embedding) and the task_board.json file.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executor } from '../src/features/scientist/executors/task-board.js';
import { ExecutorInputError } from '../src/core/commands/executor.js';
import { MemoryFiles } from '../src/core/workspace/memory-files.js';
import { execContext } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import { LocalEmbedder } from '../src/core/memory/local-embedder.js';
import { TextIndex } from '../src/features/scientist/text-index.js';
import { TaskBoard } from '../src/features/scientist/taskboard/board.js';
import { findCycle } from '../src/features/scientist/taskboard/cycles.js';
import { loadTaskBoard, parseTaskBoard, saveTaskBoard } from '../src/features/scientist/taskboard/persist.js';
import { nextTask, schedule } from '../src/features/scientist/taskboard/scheduler.js';
import { TaskBoardError } from '../src/features/scientist/taskboard/task.js';
import { searchThoughts } from '../src/features/scientist/taskboard/thought-search.js';

const ids = (tasks: ReadonlyArray<{ id: number }>) => tasks.map((t) => t.id);

describe('task board', () => {
  it('gives tasks and thoughts monotonic ids and keeps dependencies symmetric', () => {
    const b = new TaskBoard();
    const a = b.createTask({ name: 'Gather data', value: 'low' });
    const c = b.createTask({ name: 'Analyse', requires: [a.id] });
    expect([a.id, c.id]).toEqual([1, 2]);
    expect(b.task(2).tasks_required).toEqual([1]);
    expect(b.task(1).tasks_depending).toEqual([2]);
    const t1 = b.addThought({ name: 'idea', content: 'use a histogram', task: 2 });
    const t2 = b.addThought({ name: 'doubt', content: 'bins?' });
    expect([t1.id, t2.id]).toEqual([1, 2]);
    expect(b.task(2).stream_of_consciousness).toEqual(['(thought 1) idea: use a histogram']);
    // A refused creation does not consume an id.
    expect(() => b.createTask({ name: 'bad', requires: [99] })).toThrow(/there is no task 99/);
    expect(b.createTask({ name: 'next' }).id).toBe(3);
  });

  it('offers only tasks whose required tasks are closed, most valuable first', () => {
    const b = new TaskBoard();
    const data = b.createTask({ name: 'data', value: 'low' });
    const model = b.createTask({ name: 'model', value: 'high', requires: [data.id] });
    const side = b.createTask({ name: 'side', value: 'medium' });
    const report = b.createTask({ name: 'report', value: 'high', requires: [model.id, side.id] });
    expect(ids(schedule(b.tasks).offered)).toEqual([side.id, data.id]);
    expect(ids(schedule(b.tasks).waiting)).toEqual([model.id, report.id]);
    expect(() => b.start(model.id)).toThrow(/task 2 "model" cannot start: it requires task 1 "data" \(open\)/);
    b.start(data.id);
    expect(ids(schedule(b.tasks).offered)).toEqual([side.id]);
    b.close(data.id, 'the data');
    expect(nextTask(b.tasks)?.id).toBe(model.id);
    b.start(model.id);
    b.close(model.id, 'm');
    b.start(side.id);
    b.close(side.id, 's');
    expect(ids(schedule(b.tasks).offered)).toEqual([report.id]);
    b.start(report.id);
    b.close(report.id, 'r');
    expect(schedule(b.tasks).done).toBe(true);
    expect(nextTask(b.tasks)).toBeUndefined();
  });

  it('reports tasks blocked by a failed requirement, even further down', () => {
    const b = new TaskBoard();
    const a = b.createTask({ name: 'a' });
    const m = b.createTask({ name: 'm', requires: [a.id] });
    const top = b.createTask({ name: 'top', requires: [m.id] });
    b.start(a.id);
    b.fail(a.id, 'no instrument');
    const s = schedule(b.tasks);
    expect(s.offered).toEqual([]);
    expect(s.blocked.map((x) => [x.task.id, x.failed])).toEqual([
      [m.id, [a.id]],
      [top.id, [a.id]],
    ]);
    expect(s.done).toBe(false);
  });

  it('decomposes a task: the parent waits for its subtasks, which can depend on each other', () => {
    const b = new TaskBoard();
    const mission = b.createTask({ name: 'mission', value: 'high' });
    b.start(mission.id);
    const subs = b.decompose(mission.id, [
      { name: 'measure', description: 'measure it' },
      { name: 'compare', after: [0], value: 'low' },
    ]);
    expect(ids(subs)).toEqual([2, 3]);
    expect(b.task(1).status).toBe('open');
    expect(b.task(1).tasks_required).toEqual([2, 3]);
    expect(b.task(3).tasks_required).toEqual([2]);
    expect(b.task(2).value).toBe('high');
    expect(b.task(3).value).toBe('low');
    expect(b.task(2).origin).toEqual({ tasks: [1], thoughts: [] });
    expect(ids(schedule(b.tasks).offered)).toEqual([2]);
    expect(() => b.close(1, 'too early')).toThrow(/cannot go from open to closed/);
    expect(() => b.decompose(1, [{ name: 'x', after: [0] }])).toThrow(/"after" must name earlier subtasks/);
    expect(b.tasks).toHaveLength(3);
  });

  it('refuses a dependency cycle with the cycle in the message, and leaves the board unchanged', () => {
    const b = new TaskBoard();
    const a = b.createTask({ name: 'a' });
    const m = b.createTask({ name: 'm', requires: [a.id] });
    const c = b.createTask({ name: 'c', requires: [m.id] });
    const before = JSON.stringify(b.toJSON());
    expect(() => b.addRequirement(a.id, c.id)).toThrow(
      'task 1 "a" cannot require task 3 "c": that would make a dependency cycle 1 -> 3 -> 2 -> 1',
    );
    expect(() => b.addRequirement(a.id, a.id)).toThrow(/dependency cycle 1 -> 1/);
    // A subtask requiring its own parent would be a cycle too.
    expect(() => b.decompose(c.id, [{ name: 'sub', requires: [c.id] }])).toThrow(/dependency cycle/);
    expect(JSON.stringify(b.toJSON())).toBe(before);
  });

  it('finds a cycle in loaded data instead of hanging', () => {
    const tasks = [
      { id: 1, tasks_required: [2] },
      { id: 2, tasks_required: [3] },
      { id: 3, tasks_required: [1] },
      { id: 4, tasks_required: [1] },
    ];
    expect(findCycle(tasks)).toEqual([1, 2, 3, 1]);
    expect(
      findCycle([
        { id: 1, tasks_required: [] },
        { id: 2, tasks_required: [1] },
      ]),
    ).toBeNull();
    const doc = {
      version: 1,
      next_task_id: 3,
      next_thought_id: 1,
      thoughts: [],
      tasks: [
        {
          id: 1,
          name: 'a',
          description: '',
          status: 'open',
          value: 'low',
          tasks_required: [2],
          tasks_depending: [2],
          origin: { tasks: [], thoughts: [] },
          stream_of_consciousness: [],
        },
        {
          id: 2,
          name: 'b',
          description: '',
          status: 'open',
          value: 'low',
          tasks_required: [1],
          tasks_depending: [1],
          origin: { tasks: [], thoughts: [] },
          stream_of_consciousness: [],
        },
      ],
    };
    expect(() => parseTaskBoard(doc, 'task_board.json')).toThrow('task_board.json: dependency cycle: 1 -> 2 -> 1');
    expect(() => schedule(doc.tasks as never)).toThrow(/dependency cycle: 1 -> 2 -> 1; no task on it can ever start/);
  });

  it('refuses status changes that are not allowed, with a clear error', () => {
    const b = new TaskBoard();
    const t = b.createTask({ name: 'Fit the curve' });
    expect(() => b.close(t.id, 'done')).toThrow(
      'task 1 "Fit the curve" cannot go from open to closed: from open it can only become in_progress or failed_with_current_available_instruments',
    );
    b.start(t.id);
    expect(() => b.start(t.id)).toThrow(/cannot go from in_progress to in_progress/);
    b.close(t.id, 'y = 2x');
    expect(b.task(t.id).answer).toBe('y = 2x');
    expect(() => b.start(t.id)).toThrow('task 1 "Fit the curve" cannot go from closed to in_progress: closed is final');
    expect(() => b.fail(t.id, 'x')).toThrow(/closed is final/);
    expect(() => b.decompose(t.id, [{ name: 's' }])).toThrow(/is closed; only an open or in-progress task can be decomposed/);
    const u = b.createTask({ name: 'u' });
    b.fail(u.id, 'no way');
    expect(() => b.release(u.id)).toThrow(/failed_with_current_available_instruments is final/);
    expect(() => b.start(42)).toThrow('there is no task 42 (tasks: 1, 2)');
  });

  it('bounds decomposition depth', () => {
    const b = new TaskBoard();
    const top = b.createTask({ name: 'top' });
    const [sub] = b.decompose(top.id, [{ name: 'sub' }], { maxDepth: 2 });
    const [subsub] = b.decompose(sub!.id, [{ name: 'subsub' }], { maxDepth: 2 });
    expect([b.task(top.id).depth, sub!.depth, subsub!.depth]).toEqual([0, 1, 2]);
    expect(() => b.decompose(subsub!.id, [{ name: 'too deep' }], { maxDepth: 2 })).toThrow(
      'task 3 "subsub" is at the maximum decomposition depth (2); solve it directly',
    );
  });

  it('tries routes depth-first, best first, backtracking when all refinements fail', () => {
    const b = new TaskBoard();
    const t = b.createTask({ name: 'solve' });
    expect(() => b.addRoutes(t.id, [{ description: 'x', score: 0.5 }], 2)).toThrow(/is open; routes are added to the task in progress/);
    b.start(t.id);
    b.addRoutes(
      t.id,
      [
        { description: 'guess', score: 0.2 },
        { description: 'simulate', score: 0.9 },
        { description: 'derive', score: 0.6 },
      ],
      2,
    );
    expect(() => b.addRoutes(t.id, [{ description: 'bad', score: 3 }], 2)).toThrow(/needs a score from 0 to 1, got 3/);
    const first = b.nextRoute(t.id, 'medium', 4);
    expect(first.description).toBe('simulate');
    expect(() => b.nextRoute(t.id, 'medium', 4)).toThrow(/route 2 \("simulate"\) is being tried: report its result first/);
    // Refine the route being tried: its refinements come before its siblings.
    b.addRoutes(
      t.id,
      [
        { description: 'euler steps', score: 0.4 },
        { description: 'rk4', score: 0.8 },
      ],
      2,
      first.id,
    );
    expect(() => b.addRoutes(t.id, [{ description: 'deeper', score: 0.5 }], 2, 5)).toThrow(
      /route 5 of task 1 "solve" is untried; only the route being tried can be refined/,
    );
    const rk4 = b.nextRoute(t.id, 'medium', 4);
    expect([rk4.description, rk4.depth]).toEqual(['rk4', 2]);
    expect(() => b.addRoutes(t.id, [{ description: 'deeper', score: 0.5 }], 2, rk4.id)).toThrow(/at the maximum depth \(2\)/);
    b.routeResult(t.id, rk4.id, 'failed', 'diverged');
    const euler = b.nextRoute(t.id, 'medium', 4);
    expect(euler.description).toBe('euler steps');
    b.routeResult(t.id, euler.id, 'failed', 'too slow');
    // Both refinements failed: the route they refine failed too; back to the next best sibling.
    expect(b.task(t.id).routes!.find((r) => r.id === first.id)!.status).toBe('failed');
    expect(b.nextRoute(t.id, 'medium', 5).description).toBe('derive');
    expect(() => b.nextRoute(t.id, 'medium', 5)).toThrow(/being tried/);
    b.routeResult(t.id, 3, 'failed', 'no closed form');
    // Four steps used at medium: only a higher level gives more.
    expect(() => b.nextRoute(t.id, 'medium', 4)).toThrow(
      'task 1 "solve" has used its 4 step(s) at level medium: evaluate what you have, escalate, or close or fail it',
    );
    const last = b.nextRoute(t.id, 'high', 8);
    expect(last.description).toBe('guess');
    b.routeResult(t.id, last.id, 'succeeded', 'lucky');
    expect(() => b.nextRoute(t.id, 'high', 8)).toThrow(/every route has been tried/);
  });

  it('searches thoughts by embedding', async () => {
    const b = new TaskBoard();
    b.addThought({ name: 'pendulum period', content: 'the period of a pendulum grows with the square root of its length' });
    b.addThought({ name: 'shopping', content: 'buy bread, milk and eggs on the way home' });
    b.addThought({ name: 'prime numbers', content: 'there are infinitely many primes' });
    const hits = await searchThoughts(b, new TextIndex(new LocalEmbedder()), 'how does the length of a pendulum change its period?', 2);
    expect(hits[0]!.thought.name).toBe('pendulum period');
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('saves and loads task_board.json; a broken file gets a pointer to the problem', () => {
    const dir = mkdtempSync(join(tmpdir(), 'taskboard-'));
    const file = join(dir, 'task_board.json');
    expect(loadTaskBoard(file).tasks).toEqual([]);
    const b = new TaskBoard();
    const a = b.createTask({ name: 'a', value: 'high' });
    b.createTask({ name: 'b', requires: [a.id] });
    b.addThought({ name: 'n', content: 'c', task: a.id });
    b.annotate(a.id, 'started thinking');
    saveTaskBoard(file, b);
    const again = loadTaskBoard(file);
    expect(again.toJSON()).toEqual(b.toJSON());
    expect(again.createTask({ name: 'c' }).id).toBe(3);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    doc.tasks[1].status = 'done';
    writeFileSync(file, JSON.stringify(doc));
    expect(() => loadTaskBoard(file)).toThrow(
      `${file}: /tasks/1/status: must be one of open, in_progress, closed, failed_with_current_available_instruments`,
    );
    doc.tasks[1].status = 'open';
    doc.tasks[0].tasks_depending = [];
    writeFileSync(file, JSON.stringify(doc));
    expect(() => loadTaskBoard(file)).toThrow(`${file}: /tasks/0/tasks_depending: must include 2, which requires it`);
    writeFileSync(file, '{');
    expect(() => loadTaskBoard(file)).toThrow(TaskBoardError);
  });

  it('names the first problem of a hand-edited board, with its pointer (schemas/taskboard.schema.json)', () => {
    const task = (o: object = {}) => ({
      id: 1,
      name: 'a',
      description: '',
      status: 'open',
      value: 'low',
      tasks_required: [],
      tasks_depending: [],
      origin: { tasks: [], thoughts: [] },
      stream_of_consciousness: [],
      ...o,
    });
    const board = (tasks: object[], thoughts: object[] = []) => ({ version: 1, next_task_id: 5, next_thought_id: 5, tasks, thoughts });
    const route = (o: object = {}) => ({ id: 1, description: 'd', score: 0.5, depth: 1, status: 'untried', ...o });
    const cases: Array<[unknown, string]> = [
      [[], ': must be an object with tasks and thoughts'],
      [{ ...board([]), version: 2 }, '/version: must be 1'],
      [{ version: 1, next_task_id: 1, tasks: [], thoughts: [] }, '/next_thought_id: must be a positive integer'],
      [board([{ ...task(), name: undefined }]), '/tasks/0/name: must be a non-empty string'],
      [board([task({ tasks_required: [1, 'x'] })]), '/tasks/0/tasks_required: must be a list of task or thought ids'],
      [board([task({ origin: [] })]), '/tasks/0/origin: must be {tasks: [...], thoughts: [...]}'],
      [board([task({ origin: { tasks: [] } })]), '/tasks/0/origin/thoughts: must be a list of task or thought ids'],
      [board([task({ stream_of_consciousness: [1] })]), '/tasks/0/stream_of_consciousness: must be a list of strings'],
      [board([task({ routes: [route({ id: 2 })] })]), '/tasks/0/routes/0/id: must be 1'],
      [board([task({ routes: [route({ score: 2 })] })]), '/tasks/0/routes/0/score: must be a number from 0 to 1'],
      [
        board([task({ routes: [route({ status: 'done' })] })]),
        '/tasks/0/routes/0/status: must be one of untried, trying, succeeded, failed',
      ],
      [board([task({ routes: [route(), route({ id: 2, parent: 2 })] })]), '/tasks/0/routes/1/parent: must be the id of an earlier route'],
      [board([task()], [{ id: 1, name: 'n', content: 'c', task: 0 }]), '/thoughts/0/task: must be a task id'],
      [board([task(), task()]), '/tasks/1/id: task id 1 is used twice'],
    ];
    for (const [doc, message] of cases) expect(() => parseTaskBoard(doc, 'f')).toThrow(new TaskBoardError(`f: ${message}`));
    // Unknown keys of a task are dropped, those of a route kept, as before the schema.
    const parsed = parseTaskBoard(board([task({ extra: 1, routes: [route({ note: 'n', extra: 2 })] })]), 'f').toJSON();
    expect(parsed.tasks[0]).not.toHaveProperty('extra');
    expect(parsed.tasks[0]!.routes![0]).toEqual(route({ note: 'n', extra: 2 }));
  });
});

describe('task_board executor', () => {
  const sop = { memory_types: { task_board: 'task_board' } } as never;

  function setup() {
    const dir = mkdtempSync(join(tmpdir(), 'tb-exec-'));
    const memory = new MemoryFiles({ dir: join(dir, 'memory'), initial: { task_board: '' }, extensions: { task_board: '.json' } }).init();
    const base = execContext({ memory, sop, inputs: {}, embedder: async () => new LocalEmbedder() });
    const run = (op: string, args: Record<string, unknown>, settings: Record<string, unknown> = {}) =>
      executor.run(args, { ...base, command: op, settings: { op, ...settings } });
    return { dir, run, board: () => JSON.parse(readFileSync(join(dir, 'memory', 'task_board.json'), 'utf8')) };
  }

  it('keeps the board in memory/task_board.json and decomposes from lines', async () => {
    const { run, board } = setup();
    await run('create', { name: 'mission', value: 'high' });
    await run('start', { task: 1 });
    const r = await run(
      'decompose',
      { subtasks: '- Measure | time ten swings | low\n- Compare | compare with theory | | 1' },
      { finish: '1' },
    );
    expect(r.finish).toEqual({ result: r.result, summary: 'decomposed task 1 into 2, 3', next: '1' });
    const b = board();
    expect(b.tasks.map((t: { id: number; status: string; tasks_required: number[] }) => [t.id, t.status, t.tasks_required])).toEqual([
      [1, 'open', [2, 3]],
      [2, 'open', []],
      [3, 'open', [2]],
    ]);
    expect(b.tasks[2].value).toBe('high');
  });

  it('turns refused changes into errors the agent is told, and leaves the file unchanged', async () => {
    const { run, board } = setup();
    await run('create', { name: 'a' });
    await run('create', { name: 'b', requires: '1' });
    const before = board();
    await expect(run('start', { task: 2 })).rejects.toThrow(
      new ExecutorInputError('task 2 "b" cannot start: it requires task 1 "a" (open)'),
    );
    await expect(run('close', { task: 1, answer: 'x' })).rejects.toThrow(/task 1 "a" is open; only the task in progress can be closed/);
    await expect(run('decompose', { task: 1, subtasks: 'x | y | huge' })).rejects.toThrow(/value must be high, medium, low; got "huge"/);
    await expect(run('done', {})).rejects.toThrow(/tasks are still open or in progress: task 1 "a" \(open\), task 2 "b" \(open\)/);
    expect(board()).toEqual(before);
  });

  it('records thoughts with their turn and finds them by embedding', async () => {
    const { run, board } = setup();
    await run('think', { name: 'friction', content: 'air resistance damps long swings' });
    await run('think', { name: 'lunch', content: 'order sandwiches for the team' });
    expect(board().thoughts.map((t: { turn: number }) => t.turn)).toEqual([1, 1]);
    const r = await run('search_thoughts', { query: 'what damps the swings of the pendulum?', k: 1 });
    expect(r.result).toMatch(/^Closest thoughts:\n- thought 1 \(\d\.\d\d\) friction: air resistance damps long swings$/);
  });
});

describe('task_board commands in a run', () => {
  const sop = (finishKey: string) =>
    validateSopDocument(
      {
        name: 'branch',
        memory_types: { task_board: 'task_board' },
        environment: { summary: { enabled: false } },
        agents: { Sam: { roles: { plan: 'Planner', work: 'Worker' } } },
        root: 'plan',
        states: {
          plan: {
            roles: ['Planner'],
            commands: {
              create: { executor: 'task_board', settings: { op: 'create' } },
              done: { executor: 'task_board', settings: { op: 'done', finish: finishKey } },
            },
            next_states: { 1: 'end', 2: 'work' },
          },
          work: {
            roles: ['Worker'],
            commands: { done: { executor: 'task_board', settings: { op: 'done', finish: '1' } } },
            next_states: { 1: 'end' },
          },
          end: { final: true },
        },
      },
      'branch.sop.json',
    ).sop;
  const cmd = (command: string, args: Record<string, unknown> = {}) => JSON.stringify({ command, command_args: args });

  it('takes the next state a command names, and fails clearly when the state has no such way on', async () => {
    const llm = new ScriptedLlm({ agent: [cmd('done'), cmd('done')] });
    const ok = await new Run({
      sop: sop('2'),
      file: 'branch.sop.json',
      llm,
      actions: { runDir: mkdtempSync(join(tmpdir(), 'branch-')) },
    }).run();
    expect(ok.status).toBe('finished');
    expect(llm.calls.map((c) => c.meta.state)).toEqual(['plan', 'work']);
    const bad = await new Run({
      sop: sop('7'),
      file: 'branch.sop.json',
      llm: new ScriptedLlm({ agent: [cmd('done')] }),
      actions: { runDir: mkdtempSync(join(tmpdir(), 'branch-')) },
    }).run();
    expect(bad.status).toBe('failed');
    expect(bad.error?.message).toBe('state "plan" has no next_states["7"], which a command asked to take');
  });
});
