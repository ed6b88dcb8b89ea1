// The offline scientist example, run the way a user runs it: the built CLI, the hand-written
// cassette, --auto-run and the answers file. Its code really runs; the world model records the
// printed results, one fact is accepted and another falsified, and the answer cites the first.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { promptsOf } from '../src/features/journal/recorded-prompts.js';
import { loadRunRecord } from '../src/features/journal/record.js';
import { tempDir } from './helpers/executor-context.js';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';

const ROOT = join(import.meta.dirname, '..');
const GOAL = 'How does the period of a simple pendulum depend on its length and on the mass of its bob?';

interface Outcome {
  code: number | null;
  stderr: string;
  dir: string;
  events: any[];
}

async function runExample(extra: string[] = [], answers = true): Promise<Outcome> {
  const out = tempDir('sop-scientist-');
  const r = await spawnCliAsync(
    [
      'run',
      'sops/scientist.sop.json',
      '--goal',
      GOAL,
      '--llm',
      'replay:examples/scientist/scientist.cassette.json',
      '--auto-run',
      ...(answers ? ['--answers', 'examples/scientist/answers.txt'] : []),
      '--out',
      out,
      '--json',
      ...extra,
    ],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SOP_DEBUG: '' }, timeout: 120_000 },
  );
  const runs = readdirSync(out);
  const events = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  return { code: r.status, stderr: r.stderr, dir: join(out, runs[0] ?? 'missing'), events };
}

const json = (dir: string, file: string) => JSON.parse(readFileSync(join(dir, 'memory', file), 'utf8'));

describe('examples/scientist', () => {
  let run: Outcome;
  beforeAll(async () => {
    requireBuiltCli();
    run = await runExample();
  });

  it('runs offline to the final answer, which cites the accepted fact', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const finished = run.events.find((e) => e.type === 'run_finished');
    expect(finished.status).toBe('finished');
    expect(finished.result).toMatch(/^T = 2π√\(L\/g\) \[1\]/);
    const failures = run.events.filter((e) => e.type === 'executor_result' && !e.ok);
    expect(failures).toEqual([]);
    const final = run.events.find((e) => e.type === 'executor_result' && e.command === 'final_answer');
    expect(final.result).toBe('The user replied: Thanks, that is clear.');
  });

  it('leaves a task board in the run folder with every task closed, in dependency order, and the thoughts', () => {
    const board = json(run.dir, 'task_board.json');
    expect(board.tasks.map((t: any) => [t.id, t.status, t.tasks_required])).toEqual([
      [1, 'closed', []],
      [2, 'closed', []],
      [3, 'closed', [1, 2]],
    ]);
    expect(board.tasks.every((t: any) => t.answer)).toBe(true);
    const started = run.events.filter((e) => e.type === 'executor_result' && e.command === 'start_task').map((e) => e.summary);
    expect(started).toEqual(['started task 1 "Length and period"', 'started task 2 "Mass and period"', 'started task 3 "State the law"']);
    expect(board.thoughts.map((t: any) => [t.name, t.task ?? null])).toEqual([
      ['two separate questions', null],
      ['length matters as a square root', null],
      ['the mass cancels', 2],
      ['intuition misled me about the mass', null],
      ['the law needs small swings', null],
    ]);
    expect(board.tasks[0].stream_of_consciousness[0]).toMatch(
      /^Asked the user: May I assume small swings.*The user replied: Yes: assume small swings/,
    );
  });

  it('shows the self of seed 003 in its prompts: the mission file, a seeded mood, relevant free thoughts, a reflection step', async () => {
    const prompts = promptsOf(loadRunRecord(run.dir)).filter((p) => p.purpose === 'agent');
    const system = (p: (typeof prompts)[number]) => p.messages[0]!.content;
    // The mission is the memory file "mission", made from --goal; the mood is on, from --seed.
    expect(readFileSync(join(run.dir, 'memory', 'mission.md'), 'utf8')).toBe(GOAL);
    expect(system(prompts[0]!)).toContain(`The mission (memory file mission): ${GOAL}\nYour mood: `);
    const moods = prompts.map((p) => /Your mood: (\w+) \(([-+]\d\.\d\d)\)/.exec(system(p))?.slice(1, 3).join(' ')).filter(Boolean);
    expect(moods.length).toBeGreaterThan(30);
    expect(new Set(moods).size).toBeGreaterThan(1); // it drifts from turn to turn
    // A reflection step after each finished task, which writes free thoughts...
    const reflect = prompts.filter((p) => p.state === 'reflect');
    expect(reflect).toHaveLength(6);
    expect(system(reflect[0]!)).toContain('A task has just ended. Step back and reflect');
    // ...that later prompts retrieve when they bear on the task in progress.
    const work3 = prompts.filter((p) => p.state === 'work').at(-1)!;
    expect(system(work3)).toContain('Task in progress: [3] State the law');
    expect(system(work3)).toMatch(/Your own thoughts \(not tied to a task\) that may bear on this:\n- thought \d \(\d\.\d\d\) /);
    const shown = system(work3).split('Your own thoughts')[1]!.split('\n\n')[0]!;
    expect(shown).toContain('two separate questions: Length and mass can be studied separately; the law then combines them.');
    expect(shown).not.toContain('the mass cancels'); // a thought on task 2, not a free one
    // The same run again, same seed: the same mood in every prompt.
    const again = promptsOf(loadRunRecord((await runExample()).dir)).filter((p) => p.purpose === 'agent');
    expect(again.map((p) => /Your mood: [^\n]*/.exec(system(p))?.[0])).toEqual(
      prompts.map((p) => /Your mood: [^\n]*/.exec(system(p))?.[0]),
    );
  });

  it('with user_away=true, runs with nobody to answer: ask_user is refused and final_answer does not wait', async () => {
    const away = await runExample(['--input', 'user_away=true'], false);
    expect(away.code).toBe(0);
    const results = away.events.filter((e) => e.type === 'executor_result');
    const ask = results.find((e) => e.command === 'ask_user');
    expect(ask.ok).toBe(false);
    expect(ask.result).toContain('the user is away');
    const final = results.find((e) => e.command === 'final_answer');
    expect(final.ok).toBe(true);
    expect(final.result).toBe('The user is away: the answer is recorded for them, and nobody will reply. Go on.');
  });

  it('keeps one accepted statement with its code-run tests and one rejected, each backed by real output', () => {
    const model = json(run.dir, 'world_model.json');
    expect(model.statements).toHaveLength(1);
    const [accepted] = model.statements;
    expect(accepted.status).toBe('accepted');
    expect(accepted.predictions.map((p: any) => [p.test.method, p.test.outcome])).toEqual([
      ['code_run', 'confirmed'],
      ['code_run', 'confirmed'],
    ]);
    expect(model.rejected).toHaveLength(1);
    expect(model.rejected[0].predictions[0].test).toMatchObject({ method: 'code_run', outcome: 'falsified' });
    expect(model.rejected[0].reason).toMatch(/falsified by simulation/);
    // The code ran: its printed output is what the tests recorded.
    const ran = run.events.filter((e) => e.type === 'executor_result' && e.command === 'run_code');
    expect(ran).toHaveLength(2);
    expect(ran[0].result).toContain('T(1 m) = 2.0064 s, T(4 m) = 4.0128 s, ratio = 2.0000');
    expect(accepted.predictions[0].test.evidence).toContain('T(1 m) = 2.0064 s, T(4 m) = 4.0128 s, ratio = 2.0000');
    for (const m of [1, 2, 5]) expect(ran[1].result).toContain(`m = ${m} kg: T = 2.0064 s`);
  });

  it("retries the unconvincing task at the high level, with the high level's model", () => {
    const board = json(run.dir, 'task_board.json');
    expect(board.tasks.map((t: any) => t.resource_level)).toEqual(['medium', 'high', 'medium']);
    const calls = run.events.filter((e) => e.type === 'llm_call');
    const escalated = calls.findIndex((e) => e.reply.includes('"escalate"'));
    const closed = calls.findIndex((e, i) => i > escalated && e.reply.includes('"close_task"'));
    expect(calls.slice(escalated + 1, closed + 1).every((e) => e.model === 'gpt-4o')).toBe(true);
    expect(calls.filter((e) => e.model === 'gpt-4o')).toHaveLength(closed - escalated);
    expect(calls[0].model).toBe('gpt-4o-mini');
  });

  it('journals every change of the task board and the world model like the other memory files', () => {
    const written = run.events.filter((e) => e.type === 'memory_written').map((e) => e.name);
    expect(written.filter((n) => n === 'task_board').length).toBeGreaterThan(10);
    expect(written.filter((n) => n === 'world_model')).toHaveLength(9); // 2 proposals, 2 predictions, 3 tests, accept, reject
  });

  it('stopped half-way and resumed, ends with the same task board and world model', async () => {
    const half = await runExample(['--max-turns', '20']);
    expect(half.events.find((e) => e.type === 'run_finished').status).toBe('max_turns');
    expect(json(half.dir, 'world_model.json').statements[0].status).toBe('accepted');
    const r = await spawnCliAsync(['resume', half.dir, '--max-turns', '100', '--quiet'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status).toBe(0);
    for (const file of ['task_board.json', 'world_model.json']) expect(json(half.dir, file)).toEqual(json(run.dir, file));
  });
});
