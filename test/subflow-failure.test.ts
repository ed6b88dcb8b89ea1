// Failures that lead to a re-plan (issue 18, item 3): a sub-flow that fails on its own (bad
// replies after the retries, an executor error) comes back to its caller as a failed result, and
// the shipped Jarvis re-plans; only the top level fails the run. A plan rejected too often makes
// the run ask the user whether to stop or go on with the last draft, never going on silently.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Run } from '../src/api/engine/run-with-features.js';
import type { ChatRequest } from '../src/core/llm/types.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { answers, tempDir } from './helpers/executor-context.js';
import { AnswerInterruptedError, type HumanInput } from '../src/core/io/human.js';

/** Answers from a list, except the `at`-th question (0-based), where the person presses Ctrl-C. */
function ctrlCAt(at: number, toCaller: boolean, replies: string[]): HumanInput {
  const list = answers(replies);
  let asked = 0;
  return {
    id: 'test',
    get consumed() {
      return list.consumed;
    },
    interactive: true,
    ask: async (q) => {
      if (asked++ === at) throw new AnswerInterruptedError(`the user interrupted ${q.agent} (${q.role})'s question with Ctrl-C`, toCaller);
      return list.ask(q);
    },
  };
}
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { spawnCliAsync } from './helpers/cli.js';

const cmd = (command: string, args: Record<string, string> = {}) => JSON.stringify({ command, command_args: args });

/** Replies per agent, in order; an agent whose list is used up repeats its last reply. */
function byAgent(lists: Record<string, string[]>): (r: ChatRequest) => string {
  const used = new Map<string, number>();
  return (r) => {
    const agent = r.meta.agent ?? '';
    const list = lists[agent];
    if (!list) throw new Error(`no replies scripted for ${agent}`);
    const i = used.get(agent) ?? 0;
    used.set(agent, i + 1);
    return list[Math.min(i, list.length - 1)]!;
  };
}

async function runJarvis(lists: Record<string, string[]>, replies: string[] | HumanInput, goal = 'Count the lines of notes.txt') {
  const file = resolve('sops/jarvis.sop.json');
  const { sop } = loadSopFile(file);
  const llm = new ScriptedLlm({ fallback: byAgent(lists) });
  const dir = tempDir('sop-replan-');
  const runDir = join(dir, 'run');
  const events: RunEvent[] = [];
  const result = await new Run({
    sop,
    file,
    llm,
    inputs: { goal },
    human: Array.isArray(replies) ? answers(replies) : replies,
    actions: { runDir, workspace: join(dir, 'ws'), autoRun: true, sandbox: false },
    listeners: [(e) => events.push(e)],
  }).run();
  return { result, llm, events, mem: (p: string) => readFileSync(join(runDir, 'memory', p), 'utf8') };
}

const PLAN = '1. Have the Coder count the lines\n2. Give the final answer';

describe('a failing sub-flow', () => {
  it('comes back to Jarvis as a failed result after three bad replies, and Jarvis re-plans', async () => {
    const { result, llm, events, mem } = await runJarvis(
      {
        'Jarvis Planner': [cmd('propose_plan', { draft: PLAN })],
        'Coder Planner': [cmd('propose_plan', { draft: '1. Run wc -l' })],
        Coder: ['I will just think about it.', 'still no command', '{"command": "nope"}'],
        Planner: [cmd('propose_plan', { draft: '1. Ask the user for the count\n2. Give the final answer' })],
        Jarvis: [
          cmd('Coder', { goal: 'Count the lines of notes.txt' }),
          cmd('re_plan', { feedback: 'The Coder failed; ask the user instead.' }),
          cmd('final_answer', { answer: 'Could not count the lines; re-planned.' }),
          cmd('finish', { result: 'done after a re-plan' }),
        ],
      },
      ['ok', 'ok', 'ok', 'thanks'],
    );
    expect(result.status).toBe('finished');
    expect(result.result).toBe('done after a re-plan');
    // The Coder's sub-run failed on its own...
    const coderEnd = events.find((e) => e.type === 'subflow' && e.flow === 'Coder-1' && e.event.type === 'run_finished');
    expect(coderEnd?.type === 'subflow' && coderEnd.event.type === 'run_finished' && coderEnd.event.status).toBe('failed');
    // ...and Jarvis was told, in its next prompt, then chose re_plan.
    const jarvis = llm.calls.filter((c) => c.meta.agent === 'Jarvis');
    const told = jarvis[1]!.messages.map((m) => m.content).join('\n');
    expect(told).toContain('Coder failed after');
    expect(told).toContain('gave no valid command in 3 replies');
    expect(told).toContain('Decide what to do next: try again with a clearer goal, re-plan, or ask the user.');
    const called = events.flatMap((e) => (e.type === 'executor_called' ? [e.command] : []));
    expect(called).toEqual(['propose_plan', 'Coder', 're_plan', 'final_answer', 'finish']);
    expect(mem('logs.md')).toMatch(/- \[turn 2\] Coder \(failed\): Coder-1 failed after \d+ turns: Coder \(Controller\)/);
    expect(mem('plan.md')).toContain('Ask the user for the count');
  });

  it('fails the run when the top level itself gives bad replies', async () => {
    const { result } = await runJarvis({ 'Jarvis Planner': ['no command here'] }, []);
    expect(result.status).toBe('failed');
    expect(result.error?.message).toBe(
      'Jarvis Planner (Planner) in state "plan" gave no valid command in 3 replies; the last problem: no JSON object found in the reply',
    );
  });

  it('stops the whole run, resumable, when the answers run out inside a sub-flow (the caller could not go on either)', async () => {
    const { result } = await runJarvis(
      {
        'Jarvis Planner': [cmd('propose_plan', { draft: PLAN })],
        'Coder Planner': [cmd('propose_plan', { draft: '1. Run wc -l' })],
        Jarvis: [cmd('Coder', { goal: 'Count' })],
      },
      ['ok'],
    );
    expect(result.status).toBe('interrupted');
    expect(result.error?.message).toMatch(/no answer left/);
  });
});

describe('Ctrl-C at a question of a sub-flow', () => {
  const lists = {
    'Jarvis Planner': [cmd('propose_plan', { draft: PLAN })],
    'Coder Planner': [cmd('propose_plan', { draft: '1. Run wc -l' })],
    Planner: [cmd('propose_plan', { draft: '1. Ask the user for the count\n2. Give the final answer' })],
    Jarvis: [
      cmd('Coder', { goal: 'Count the lines of notes.txt' }),
      cmd('re_plan', { feedback: 'The user interrupted the Coder; ask them instead.' }),
      cmd('final_answer', { answer: 'Re-planned after the interruption.' }),
      cmd('finish', { result: 'done after an interruption' }),
    ],
  };

  it("goes back to the caller's controller, told that the user interrupted, and the run goes on", async () => {
    // answers: Jarvis's plan; Ctrl-C at the Coder's plan review; no feedback for Jarvis; the new plan; the final answer
    const { result, llm, events } = await runJarvis(lists, ctrlCAt(1, true, ['ok', '', 'ok', 'thanks']));
    expect(result.status, result.error?.message).toBe('finished');
    expect(result.result).toBe('done after an interruption');
    const coderEnd = events.find((e) => e.type === 'subflow' && e.flow === 'Coder-1' && e.event.type === 'run_finished');
    expect(coderEnd?.type === 'subflow' && coderEnd.event.type === 'run_finished' && coderEnd.event.status).toBe('interrupted');
    const told = llm.calls
      .filter((c) => c.meta.agent === 'Jarvis')[1]!
      .messages.map((m) => m.content)
      .join('\n');
    expect(told).toContain('the user interrupted it (Ctrl-C at a question of Coder-1)');
  });

  it('the second Ctrl-C stops the run, interrupted and resumable', async () => {
    const { result } = await runJarvis(lists, ctrlCAt(1, false, ['ok']));
    expect(result.status).toBe('interrupted');
    expect(result.error?.name).toBe('AnswerInterruptedError');
  });
});

describe('sop run, from a cassette', () => {
  it('exits 0 when the Coder fails and Jarvis re-plans; the transcript shows the failed result', async () => {
    const dir = tempDir('sop-replan-cli-');
    const agent = (name: string, response: string) => ({ purpose: 'agent', agent: name, response });
    const cassette = {
      version: 1,
      source: 'hand-written',
      note: 'test: the Coder gives no valid command, Jarvis re-plans',
      interactions: [
        agent('Jarvis Planner', cmd('propose_plan', { draft: PLAN })),
        agent('Jarvis', cmd('Coder', { goal: 'Count the lines of notes.txt' })),
        agent('Coder Planner', cmd('propose_plan', { draft: '1. Run wc -l' })),
        agent('Coder', 'thinking'),
        agent('Coder', 'still thinking'),
        agent('Coder', 'done thinking'),
        agent('Jarvis', cmd('re_plan', { feedback: 'The Coder failed.' })),
        agent('Planner', cmd('propose_plan', { draft: '1. Give the final answer' })),
        agent('Jarvis', cmd('final_answer', { answer: 'Could not count.' })),
        agent('Jarvis', cmd('finish', { result: 're-planned' })),
      ],
    };
    writeFileSync(join(dir, 'c.json'), JSON.stringify(cassette));
    writeFileSync(join(dir, 'answers.txt'), 'ok\nok\nok\nthanks\n');
    const args = ['run', 'sops/jarvis.sop.json', '--goal', 'Count the lines', '--llm', `replay:${join(dir, 'c.json')}`];
    args.push('--answers', join(dir, 'answers.txt'));
    const r = await spawnCliAsync([...args, '--out', join(dir, 'runs'), '--quiet', '--no-sandbox']);
    expect(r.stderr).toMatch(/Finished in state "done"/);
    expect(r.status).toBe(0);
    const run = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
    expect(readFileSync(join(run, 'transcript.md'), 'utf8')).toContain('Coder failed after');

    // Stopped right after the failed result (--max-turns 2), then resumed: it ends the same way.
    const out2 = join(dir, 'runs2');
    const first = await spawnCliAsync([...args, '--out', out2, '--quiet', '--no-sandbox', '--max-turns', '2'], {
      encoding: 'utf8',
    });
    expect(first.status).toBe(0);
    const run2 = join(out2, readdirSync(out2)[0]!);
    const resumed = await spawnCliAsync(['resume', run2, '--max-turns', '50', '--quiet'], { encoding: 'utf8' });
    expect(resumed.stderr).toMatch(/Finished in state "done" after 5 turns/);
    expect(resumed.status).toBe(0);
  });
});

describe('an executor error inside a sub-flow', () => {
  it('comes back as a failed result naming the error; the caller goes on', async () => {
    const dir = tempDir('sop-subexec-');
    const state = (commands: object) => ({ roles: ['R'], commands, controller: { max_turns: 4 }, next_states: { 1: 'end' } });
    const base = { environment: { summary: { enabled: false } }, root: 'work' };
    // The child's code command needs a workspace, and this in-process run has none: an executor error.
    writeFileSync(
      join(dir, 'child.sop.json'),
      JSON.stringify({
        ...base,
        name: 'child',
        agents: { W: { roles: { work: 'R' } } },
        states: {
          work: state({ run: { executor: 'code', settings: { language: 'python' } }, finish: { executor: 'finish' } }),
          end: { final: true },
        },
      }),
    );
    writeFileSync(
      join(dir, 'parent.sop.json'),
      JSON.stringify({
        ...base,
        name: 'parent',
        agents: { B: { roles: { work: 'R' } } },
        states: {
          work: state({ delegate: { executor: 'sop', settings: { file: 'child.sop.json' } }, finish: { executor: 'finish' } }),
          end: { final: true },
        },
      }),
    );
    const file = join(dir, 'parent.sop.json');
    const llm = new ScriptedLlm({ agent: [cmd('delegate'), cmd('run', { code: 'print(1)' }), cmd('finish', { result: 'handled' })] });
    const result = await new Run({ sop: loadSopFile(file).sop, file, llm, actions: { runDir: join(dir, 'run'), autoRun: true } }).run();
    expect(result.status).toBe('finished');
    expect(result.result).toBe('handled');
    const failed = result.messages.find((m) => m.kind === 'action' && m.sender === 'delegate')!;
    expect(failed.content).toMatch(/^delegate failed after 1 turn: command "run" needs a workspace folder/);
  });
});

describe('a plan the user keeps rejecting', () => {
  const planner = { 'Jarvis Planner': [1, 2, 3, 4, 5, 6].map((n) => cmd('propose_plan', { draft: `${n}. draft ${n}` })) };

  it('asks after the third rejection; "stop" stops the run with a clear message', async () => {
    const { result, events } = await runJarvis(planner, ['no', 'no', 'still no', 'stop']);
    expect(result.status).toBe('failed');
    expect(result.error?.message).toBe('the user stopped the run after rejecting 3 drafts of propose_plan in a row');
    expect(events.some((e) => e.type === 'state_entered' && e.state === 'execute')).toBe(false);
  });

  it('"continue" goes on with the last draft, and the controller is told it was kept, not accepted', async () => {
    const { result, llm, mem } = await runJarvis(
      { ...planner, Jarvis: [cmd('final_answer', { answer: 'x' }), cmd('finish', { result: 'went on' })] },
      ['no', 'no', 'no', 'continue', 'fine'],
    );
    expect(result.status).toBe('finished');
    expect(mem('plan.md')).toBe('3. draft 3\n');
    expect(mem('logs.md')).toContain('the user chose to go on with the last draft, which they had rejected (saved to plan)');
    expect(llm.calls.find((c) => c.meta.agent === 'Jarvis')!.system).toContain('3. draft 3');
  });

  it('more feedback revises again; the state never goes on past max_turns with a rejected draft', async () => {
    const { result, llm } = await runJarvis(planner, [
      'no',
      'no',
      'no',
      'shorter',
      'no',
      'shorter still',
      'no',
      'again',
      'no',
      'x',
      'no',
      'y',
    ]);
    const planners = llm.calls.filter((c) => c.meta.agent === 'Jarvis Planner');
    expect(planners).toHaveLength(6);
    // The feedback given at the question reaches the planner with the rejection.
    expect(planners[3]!.messages.map((m) => m.content).join('\n')).toContain('Their feedback: no\nshorter');
    expect(result.status).toBe('failed');
    expect(result.error?.message).toBe(
      'state "plan" reached its max_turns (6) with the last draft of propose_plan rejected by the user (6 times in a row); not going on with a rejected draft',
    );
  });
});
