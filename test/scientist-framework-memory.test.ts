// --memory-dir keeps the scientist's code frameworks: run 1's Critic saves a code framework
// (the task board's framework op, which saves library.py to the workspace), and run 2, with the
// same memory folder, imports it. Driven through the CLI against a scripted OpenAI-compatible
// server that answers each state's role from a queue.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offered, shownText, startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';

const command = (name: string, args: Record<string, unknown> = {}) => JSON.stringify({ command: name, command_args: args });
const PERIOD = [
  'def period(length: float) -> float:',
  '    """The period in seconds of a simple pendulum of this length in metres."""',
  '    import math',
  '    return 2 * math.pi * math.sqrt(length / 9.81)',
].join('\n');
const ANSWER = 'T = 2 pi sqrt(L / g)';

/** Each state's role is known by a command only it is offered. */
const STATES: Array<[string, string]> = [
  ['planning_done', 'awaken'],
  ['all_done', 'prioritise'],
  ['submit_solution', 'work'],
  ['create_framework', 'evaluate'],
  ['reflection_done', 'reflect'],
  ['final_answer', 'answer'],
];

function script(queues: Record<string, string[]>): (body: ChatRequestBody) => string {
  return (body) => {
    const tools = offered(body);
    const state = STATES.find(([cmd]) => tools.includes(cmd))?.[1] ?? 'unknown';
    const next = queues[state]?.shift();
    if (next === undefined) throw new Error(`the script has no reply left for state ${state}`);
    return next;
  };
}

describe('scientist code frameworks survive --memory-dir', () => {
  let root: string;
  let server: TestServer;
  let reply: (body: ChatRequestBody) => string = () => '';
  beforeAll(async () => {
    requireBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'sop-sci-framework-'));
    server = await startOpenAiServer({ reply: (body) => reply(body) });
  });
  afterAll(async () => {
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  const run = (goal = 'How does the period of a pendulum depend on its length?', memory = 'M', maxTurns = '40') =>
    spawnCliAsync(
      [
        'run',
        'scientist',
        '--goal',
        goal,
        '--memory-dir',
        join(root, memory),
        '--input',
        'user_away=true',
        '--llm',
        'openai',
        '--base-url',
        server.url,
        '--auto-run',
        '--max-turns',
        maxTurns,
        '--out',
        join(root, 'runs'),
      ],
      { cwd: root, env: { ...process.env, OPENAI_API_KEY: 'test' }, timeout: 180_000 },
    );

  it('run 1 saves a code framework, run 2 imports it', async () => {
    reply = script({
      awaken: [
        command('create_task', { name: 'pendulum period', value: 'high', description: 'How T depends on L' }),
        command('planning_done'),
      ],
      prioritise: [command('start_task', { task: 1 }), command('all_done')],
      work: [
        command('submit_solution', { answer: ANSWER }),
        command('submit_solution', { answer: ANSWER }),
        command('submit_solution', { answer: ANSWER }),
      ],
      evaluate: [
        command('escalate', { reason: 'the formula should be reusable code' }),
        command('create_framework', { kind: 'code', name: 'pendulum period', content: PERIOD }),
        command('close_task', { answer: ANSWER }),
      ],
      reflect: [command('reflection_done')],
      answer: [command('final_answer', { answer: ANSWER }), command('finish', { result: ANSWER })],
    });
    const first = await run();
    expect(first.status, first.stderr).toBe(0);
    expect(readFileSync(join(root, 'M', 'frameworks.md'), 'utf8')).toContain('from library import period');
    expect(existsSync(join(root, 'M', 'library.py')), 'library.py is in the memory folder').toBe(true);
    expect(readFileSync(join(root, 'M', 'library.py'), 'utf8')).toContain('def period(length: float) -> float:');

    const before = server.requests.length;
    reply = script({
      awaken: [command('create_task', { name: 'a 2 m pendulum', value: 'medium' }), command('planning_done')],
      prioritise: [command('start_task', { task: 2 }), command('all_done')],
      work: [
        command('run_code', { language: 'python', code: 'from library import period\nprint(round(period(2.0), 3))' }),
        command('submit_solution', { answer: '2.837 s' }),
      ],
      evaluate: [command('close_task', { answer: '2.837 s' })],
      reflect: [command('reflection_done')],
      answer: [command('final_answer', { answer: '2.837 s' }), command('finish', { result: '2.837 s' })],
    });
    const second = await run();
    expect(second.status, second.stderr).toBe(0);
    const bodies = server.requests.slice(before).map((q) => q.body as ChatRequestBody);
    // 2 pi sqrt(2 / 9.81), computed here: 2.837
    const expected = (2 * Math.PI * Math.sqrt(2 / 9.81)).toFixed(3);
    expect(
      bodies.some((b) => shownText(b, `stdout:\n${expected}`)),
      'the import worked and printed the period',
    ).toBe(true);
    expect(bodies.some((b) => shownText(b, 'ModuleNotFoundError'))).toBe(false);
  });

  it('a new mission archives the open tasks of the previous one: not offered again, not needed to finish', async () => {
    reply = script({
      awaken: [
        command('create_task', { name: 'old task', value: 'medium' }),
        command('create_task', { name: 'older task', value: 'low' }),
        command('planning_done'),
      ],
      prioritise: [command('start_task', { task: 1 })],
    });
    const first = await run('Why is the sky blue?', 'M2', '4'); // stops with task 1 in progress and task 2 open
    expect(first.stderr).not.toMatch(/archived/);
    const before = server.requests.length;
    reply = script({
      awaken: [command('create_task', { name: 'new task', value: 'medium' }), command('planning_done')],
      prioritise: [command('start_task', { task: 3 }), command('all_done')],
      work: [command('submit_solution', { answer: 'chlorophyll' })],
      evaluate: [command('close_task', { answer: 'chlorophyll' })],
      reflect: [command('reflection_done')],
      answer: [command('final_answer', { answer: 'chlorophyll' }), command('finish', { result: 'chlorophyll' })],
    });
    const second = await run('Why is grass green?', 'M2');
    expect(second.status, second.stderr).toBe(0); // all_done was accepted: the old tasks do not hold the run
    expect(second.stderr).toContain(
      'warning: new mission: 2 open tasks of the previous mission (1 "old task", 2 "older task") archived on the task board; they are not offered again',
    );
    const board = JSON.parse(readFileSync(join(root, 'M2', 'task_board.json'), 'utf8')) as { tasks: Array<{ id: number; status: string }> };
    expect(board.tasks.map((t) => [t.id, t.status])).toEqual([
      [1, 'archived'],
      [2, 'archived'],
      [3, 'closed'],
    ]);
    // the Scheduler of the new mission was never offered an old task
    const scheduler = server.requests
      .slice(before)
      .map((q) => q.body as ChatRequestBody)
      .filter((b) => offered(b).includes('all_done'));
    expect(scheduler.length).toBeGreaterThan(0);
    for (const b of scheduler) expect(b.messages.map((m) => m.content ?? '').join('\n')).not.toMatch(/offered[^\n]*old task/i);
  });
});
