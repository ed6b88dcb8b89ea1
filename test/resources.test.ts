// Resource levels: a task's value selects its LLM profile and what it may do.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../src/core/runtime/events.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { escalate, resourcesFor, startLevel, userAway, type ResourcesConfig } from '../src/features/scientist/resources.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import { answers, tempDir } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';

const config: ResourcesConfig = {
  levels: {
    low: { model: 'small-model', temperature: 0.1, max_steps: 2 },
    medium: { model: 'mid-model', max_steps: 4 },
    high: { model: 'big-model', temperature: 0.7, max_steps: 10 },
  },
};

describe('resource levels', () => {
  it('select the LLM profile of the level a task works at', () => {
    expect(resourcesFor('low', undefined, config).profile).toEqual({ model: 'small-model', temperature: 0.1, max_steps: 2 });
    expect(resourcesFor('medium', undefined, config).profile).toEqual({ model: 'mid-model', temperature: 0.3, max_steps: 4 });
    expect(resourcesFor('high', 'high', config).profile).toEqual({ model: 'big-model', temperature: 0.7, max_steps: 10 });
  });

  it('escalate a retry up to the highest level the value allows', () => {
    expect(startLevel('medium', config)).toBe('medium');
    expect(escalate('medium', 'medium', config)).toBe('high');
    expect(() => escalate('medium', 'high', config)).toThrow(
      /already at its highest level \(high\); close it with the best answer or fail it/,
    );
    expect(() => escalate('high', 'high', config)).toThrow(/create a framework instead/);
    expect(() => escalate('low', undefined, config)).toThrow(/already at its highest level \(low\)/);
    expect(() => resourcesFor('low', 'high', config)).toThrow('a low-value task may work at most at level low, not high');
    expect(() => resourcesFor('low', 'huge', config)).toThrow(/unknown resource level "huge"/);
    const custom: ResourcesConfig = { values: { low: { max_level: 'medium' } } };
    expect(escalate('low', 'low', custom)).toBe('medium');
    expect(() => resourcesFor('low', undefined, { values: { low: { start_level: 'high' } } })).toThrow(
      /start_level high is above max_level low/,
    );
  });

  it('let only high-value tasks ask the user or create frameworks (at their highest level), and nobody ask when the user is away', () => {
    const high = resourcesFor('high', undefined, config);
    expect(high.level).toBe('medium');
    expect([high.may_ask_user, high.may_create_framework]).toEqual([true, false]); // not before its highest level, as the seed says
    expect(high.framework_denied).toBe("a framework is made only at the task's highest level (high): escalate first");
    const top = resourcesFor('high', 'high', config);
    expect([top.may_ask_user, top.may_create_framework]).toEqual([true, true]);
    const medium = resourcesFor('medium', undefined, config);
    expect([medium.may_ask_user, medium.may_create_framework]).toEqual([false, false]);
    expect(medium.ask_user_denied).toBe('a medium-value task may not ask the user');
    const away = resourcesFor('high', 'high', config, { userAway: true });
    expect(away.may_ask_user).toBe(false);
    expect(away.ask_user_denied).toMatch(/user is away/);
    expect(away.may_create_framework).toBe(true);
    const sopSaysAsk: ResourcesConfig = { values: { low: { ask_user: true } } };
    expect(resourcesFor('low', undefined, sopSaysAsk).may_ask_user).toBe(true);
    expect(resourcesFor('low', undefined, sopSaysAsk, { userAway: userAway(sopSaysAsk, { user_away: 'true' }) }).may_ask_user).toBe(false);
  });

  it('read user_away from the SOP or the run inputs', () => {
    expect(userAway({}, {})).toBe(false);
    expect(userAway({ user_away: true }, {})).toBe(true);
    expect(userAway({}, { user_away: 'yes' })).toBe(true);
    expect(userAway({}, { user_away: 'false' })).toBe(false);
  });
});

// In a run: the task board executor and the run loop apply the levels.

function boardSop(extra: Record<string, unknown> = {}) {
  const op = (o: string, more: Record<string, unknown> = {}) => ({ executor: 'task_board', settings: { op: o, ...more } });
  return validateSopDocument(
    {
      name: 'levels',
      inputs: { user_away: { default: 'false' } },
      llm: { model: 'base-model' },
      memory_types: { task_board: 'task_board' },
      resources: {
        levels: {
          low: { model: 'm-low', max_steps: 1 },
          medium: { model: 'm-mid', temperature: 0.4, max_steps: 2 },
          high: { model: 'm-high', temperature: 0.9, max_steps: 3 },
        },
      },
      environment: { summary: { enabled: false } },
      agents: { Sam: { roles: { work: 'Solver' } } },
      root: 'work',
      states: {
        work: {
          roles: ['Solver'],
          components: { Solver: { task: 'Work.', system: '{{task_board.text}}' } },
          commands: {
            create: op('create'),
            start: op('start'),
            escalate: op('escalate'),
            close: op('close'),
            ask_user: op('ask_user'),
            done: op('done', { finish: '1' }),
          },
          next_states: { 1: 'end' },
        },
        end: { final: true },
      },
      ...extra,
    },
    'levels.sop.json',
  ).sop;
}

const cmd = (command: string, args: Record<string, unknown> = {}) => JSON.stringify({ command, command_args: args });

async function runBoard(replies: string[], inputs: Record<string, string> = {}, human = answers(['the answer'])) {
  const llm = new ScriptedLlm({ agent: replies });
  const events: RunEvent[] = [];
  const result = await new Run({
    sop: boardSop(),
    file: 'levels.sop.json',
    llm,
    inputs,
    human,
    actions: { runDir: tempDir('sop-levels-') },
    listeners: [(e) => events.push(e)],
  }).run();
  return { result, llm, events, human };
}

describe('resource levels in a run', () => {
  it('agent calls use the LLM profile of the task in progress, and follow its escalation', async () => {
    const { result, llm, events } = await runBoard([
      cmd('create', { name: 'measure', value: 'medium' }),
      cmd('start', { task: 1 }),
      cmd('escalate', { reason: 'not convincing' }),
      cmd('close', { answer: '42' }),
      cmd('done'),
    ]);
    expect(result.status).toBe('finished');
    expect(events.filter((e) => e.type === 'executor_result').map((e) => (e as { ok: boolean }).ok)).toEqual([
      true,
      true,
      true,
      true,
      true,
    ]);
    // Before start and after close no task is in progress: the SOP's model.
    expect(llm.calls.map((c) => c.model)).toEqual(['base-model', 'base-model', 'm-mid', 'm-high', 'base-model']);
    expect(llm.calls[3]!.system).toContain('Resources: level high (model m-high); 3 of 3 route attempts left');
  });

  it('never asks the user when user_away is set, even for a high-value task', async () => {
    const away = await runBoard(
      [
        cmd('create', { name: 'ask', value: 'high' }),
        cmd('start', { task: 1 }),
        cmd('ask_user', { question: 'Which unit?' }),
        cmd('close', { answer: 'metres' }),
        cmd('done'),
      ],
      { user_away: 'true' },
    );
    const asked = away.events.find((e) => e.type === 'executor_result' && e.command === 'ask_user') as { ok: boolean; result: string };
    expect(asked.ok).toBe(false);
    expect(asked.result).toContain('cannot ask the user: the user is away (user_away)');
    expect(away.human.consumed).toBe(0);

    const present = await runBoard([
      cmd('create', { name: 'ask', value: 'high' }),
      cmd('start', { task: 1 }),
      cmd('ask_user', { question: 'Which unit?' }),
      cmd('close', { answer: 'metres' }),
      cmd('done'),
    ]);
    const answered = present.events.find((e) => e.type === 'executor_result' && e.command === 'ask_user') as {
      ok: boolean;
      result: string;
    };
    expect(answered.ok).toBe(true);
    expect(answered.result).toContain('The user replied: the answer');
    expect(present.human.consumed).toBe(1);
  });
});

describe('frameworks', () => {
  it('are made at the highest level only, and a code framework is library code that later code imports', async () => {
    const op = (o: string, more: Record<string, unknown> = {}) => ({ executor: 'task_board', settings: { op: o, ...more } });
    const sop = validateSopDocument(
      {
        name: 'frameworks',
        memory: { frameworks: '', code_library: '' },
        memory_types: { task_board: 'task_board' },
        environment: { summary: { enabled: false } },
        agents: { Sam: { roles: { work: 'Solver' } } },
        root: 'work',
        states: {
          work: {
            roles: ['Solver'],
            components: { Solver: { task: 'Work.' } },
            commands: {
              create: op('create'),
              start: op('start'),
              escalate: op('escalate'),
              framework: op('framework'),
              run_code: { executor: 'code', settings: { language: 'python', session: false } },
              close: op('close'),
              done: op('done', { finish: '1' }),
            },
            next_states: { 1: 'end' },
          },
          end: { final: true },
        },
      },
      'frameworks.sop.json',
    ).sop;
    const AREA = 'def area(r: float) -> float:\n    """Area of a circle of radius r."""\n    return 3.14 * r * r';
    const llm = new ScriptedLlm({
      agent: [
        cmd('create', { name: 'circles', value: 'high' }),
        cmd('start', { task: 1 }),
        cmd('framework', { kind: 'code', name: 'circle area', content: AREA }), // at medium: refused
        cmd('escalate', { reason: 'a reusable function is needed' }),
        cmd('framework', { kind: 'code', name: 'circle area', content: AREA }),
        cmd('run_code', { code: 'from library import area\nprint(area(2))' }),
        cmd('close', { answer: 'area(r) = 3.14 r^2' }),
        cmd('done'),
      ],
    });
    const dir = tempDir('sop-frameworks-');
    const events: RunEvent[] = [];
    const result = await new Run({
      sop,
      file: 'frameworks.sop.json',
      llm,
      human: answers([]),
      actions: { runDir: join(dir, 'run'), workspace: join(dir, 'ws'), autoRun: true, sandbox: false },
      listeners: [(e) => events.push(e)],
    }).run();
    expect(result.status, result.error?.message).toBe('finished');
    const results = events.flatMap((e) => (e.type === 'executor_result' ? [e] : []));
    const frameworks = results.filter((e) => e.command === 'framework');
    expect(frameworks[0]!.ok).toBe(false);
    expect(frameworks[0]!.result).toContain("a framework is made only at the task's highest level (high): escalate first");
    expect(frameworks[1]!.ok).toBe(true);
    expect(frameworks[1]!.result).toBe(
      'Saved the code framework "circle area" to the code library library.py (area(r: float) -> float); later code uses it with: from library import area',
    );
    expect(readFileSync(join(dir, 'ws', 'library.py'), 'utf8')).toContain('def area(r: float) -> float:');
    expect(results.find((e) => e.command === 'run_code')!.result).toContain('stdout:\n12.56');
    expect(readFileSync(join(dir, 'run', 'memory', 'frameworks.md'), 'utf8')).toContain('Use it with: from library import area');
    expect(readFileSync(join(dir, 'run', 'memory', 'code_library.md'), 'utf8')).toContain('def area(r: float) -> float:');
  });
});
