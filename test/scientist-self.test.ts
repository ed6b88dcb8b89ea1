// The self of seed 003 (issue 18, item 5), executor by executor: task origins, the knowledge-base
// instrument, and user_away honoured by the human executor (nobody is waited for). The prompts
// (mood, free thoughts, reflection) are checked on the shipped example in scientist-example.test.ts.
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executor as human } from '../src/features/actions/executors/human.js';
import { executor as knowledge } from '../src/features/scientist/executors/knowledge.js';
import { executor as taskBoard } from '../src/features/scientist/executors/task-board.js';
import { NoHumanInput } from '../src/core/io/human.js';
import type { Sop } from '../src/format/sop/types.js';
import { templateDiagnostics } from '../src/format/sop/check-templates.js';
import { initialMemory } from '../src/features/actions/memory-initial.js';
import { execContext } from './helpers/executor-context.js';

const SCIENCE = { name: 's', memory_types: { task_board: 'task_board' } } as unknown as Sop;

describe('task origins', () => {
  it('create records the thoughts and the task a new task came from', async () => {
    const ctx = execContext({ sop: SCIENCE, memoryFiles: { task_board: '' } });
    const run = (op: string, args: Record<string, unknown>) => taskBoard.run(args, { ...ctx, settings: { op } });
    await run('think', { name: 'a hunch', content: 'friction might matter' });
    await run('create', { name: 'First' });
    await run('start', { task: 1 });
    const r = await run('create', { name: 'Friction', from_thoughts: '1' });
    expect(r.result).toBe('Created task 2 "Friction" (medium value; it came from thought 1, task 1).');
    const board = JSON.parse(ctx.memory.read('task_board'));
    expect(board.tasks[1].origin).toEqual({ tasks: [1], thoughts: [1] });
    expect(board.tasks[0].origin).toEqual({ tasks: [], thoughts: [] });
    const show = await run('show', {});
    expect(show.result).toContain('- [2] Friction: open, medium value, from thought 1, task 1');
    const bad = run('create', { name: 'X', from_thoughts: '9' });
    await expect(bad).rejects.toThrow(/thought 9/);
  });
});

describe('the knowledge executor', () => {
  const file = resolve('examples/scientist/pendulum.knowledge');

  it('answers from the knowledge base, closest first, with the local embedder', async () => {
    const ctx = execContext({ settings: { file, top_k: 1 } });
    const r = await knowledge.run({ query: 'Does the mass of the bob change the period?' }, ctx);
    expect(r.ok).toBe(true);
    expect(r.result).toMatch(
      /^The knowledge base says \(closest first\):\n- \(0\.\d\d\) Q: Does the mass of the bob change the period of a simple pendulum\?\n {2}A: No: the mass cancels/,
    );
  });

  it('says so when no knowledge base was given, or the file cannot be read, and when nothing is close', async () => {
    await expect(knowledge.run({ query: 'x' }, execContext({ settings: { file: '' } }))).rejects.toThrow(
      'no knowledge base was given to this run (e.g. --input knowledge=FILE)',
    );
    await expect(knowledge.run({ query: 'x' }, execContext({ settings: { file: 'missing.json' } }))).rejects.toThrow(
      /^knowledge file .*missing\.json: cannot read \(ENOENT\)$/,
    );
    const none = await knowledge.run({ query: 'recipes for sourdough bread' }, execContext({ settings: { file } }));
    expect(none.result).toBe('The knowledge base has nothing close to "recipes for sourdough bread".');
  });
});

describe('user_away in the human executor', () => {
  const away = (kind: string, o: { sop?: Sop; inputs?: Record<string, string> }) =>
    execContext({ settings: { kind, save_to: 'plan' }, human: new NoHumanInput(), ...o });
  const viaInput = { inputs: { user_away: 'true' } };
  const viaSop = { sop: { name: 's', resources: { user_away: true } } as unknown as Sop };

  it('final and intermediate answers do not wait for the user (input or SOP setting)', async () => {
    for (const o of [viaInput, viaSop]) {
      const r = await human.run({ answer: 'T = 2π√(L/g)' }, away('final', o));
      expect(r.ok).toBe(true);
      expect(r.result).toBe('The user is away: the answer is recorded for them, and nobody will reply. Go on.');
      expect(r.summary).toBe('gave the final answer ("T = 2π√(L/g)"); the user is away');
      expect((await human.run({ answer: 'half way' }, away('intermediate', o))).ok).toBe(true);
    }
  });

  it('a question is refused, a draft is kept without review', async () => {
    await expect(human.run({ question: 'May I?' }, away('ask', viaInput))).rejects.toThrow('the user is away');
    const ctx = away('review', viaInput);
    const r = await human.run({ draft: '1. Do it' }, ctx);
    expect(r.finish?.result).toBe('1. Do it');
    expect(ctx.memory.read('plan')).toBe('1. Do it\n');
    expect(r.result).toContain('The user is away: the draft was kept as it is, without their review.');
  });

  it('without user_away, nobody to ask still stops the run as before', async () => {
    await expect(human.run({ answer: 'x' }, execContext({ settings: { kind: 'final' }, human: new NoHumanInput() }))).rejects.toThrow(
      /no terminal to ask/,
    );
  });
});

describe('memory files start from templates over the inputs', () => {
  it('"mission": "{{goal}}" starts with the goal; validate names an undeclared input at its pointer', () => {
    expect(initialMemory({ mission: '{{goal}}', plan: '' }, { goal: 'Why is the sky blue?' })).toEqual({
      mission: 'Why is the sky blue?',
      plan: '',
    });
    const sop = {
      name: 's',
      inputs: { goal: {} },
      memory: { mission: '{{inputs.gaol}}' },
      agents: {},
      root: 'a',
      states: {},
    } as unknown as Sop;
    expect(templateDiagnostics(sop).map((d) => `${d.pointer}: ${d.message}`)).toEqual([
      '/memory/mission: {{inputs.gaol}}: input "gaol" is not declared in "inputs" (declared: goal)',
    ]);
  });
});
