// Ctrl-C at a sub-flow's question is counted per question, not per run: at a terminal, Ctrl-C at
// the Coder's plan review goes back to Jarvis, and so does a later Ctrl-C at another flow's
// question (re_plan's Planner); each time the user gives one line of feedback, which Jarvis's
// next prompt holds. A second Ctrl-C, at the feedback question, stops the run.
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Run } from '../src/api/engine/run-with-features.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import type { ChatRequest } from '../src/core/llm/types.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { TerminalInput } from '../src/core/io/human.js';
import { tempDir } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { until } from './helpers/until.js';

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

/** A terminal whose person types `keys[i]` when the (i+1)-th question's prompt is shown. */
function terminal(keys: string[]) {
  const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => undefined });
  const output = new PassThrough();
  let shown = '';
  output.on('data', (c: Buffer) => (shown += c.toString()));
  const prompts = () => shown.match(/\) > /g)?.length ?? 0;
  let stop = false;
  const typing = (async () => {
    for (let i = 0; i < keys.length && !stop; i++) {
      await until(() => stop || prompts() > i, { timeoutMs: Infinity });
      if (!stop) input.write(keys[i]!);
    }
  })();
  return {
    human: new TerminalInput({ input, output }),
    shown: () => shown,
    done: async () => {
      stop = true;
      await typing;
    },
  };
}

async function runJarvis(lists: Record<string, string[]>, keys: string[]) {
  const file = resolve('sops/jarvis.sop.json');
  const { sop } = loadSopFile(file);
  const llm = new ScriptedLlm({ fallback: byAgent(lists) });
  const dir = tempDir('sop-ctrl-c-');
  const events: RunEvent[] = [];
  const term = terminal(keys);
  const result = await new Run({
    sop,
    file,
    llm,
    inputs: { goal: 'Count the lines of notes.txt' },
    human: term.human,
    actions: { runDir: join(dir, 'run'), workspace: join(dir, 'ws'), autoRun: true, sandbox: false },
    listeners: [(e) => events.push(e)],
  }).run();
  await term.done();
  return { result, llm, events, shown: term.shown() };
}

const lists = {
  'Jarvis Planner': [cmd('propose_plan', { draft: '1. Have the Coder count the lines\n2. Give the final answer' })],
  'Coder Planner': [cmd('propose_plan', { draft: '1. Run wc -l' })],
  Planner: [cmd('propose_plan', { draft: '1. Ask the user for the count' })],
  Jarvis: [
    cmd('Coder', { goal: 'Count the lines of notes.txt' }),
    cmd('re_plan', { feedback: 'The user interrupted the Coder.' }),
    cmd('final_answer', { answer: 'Stopped twice by the user.' }),
    cmd('finish', { result: 'done after two interruptions' }),
  ],
};

describe('Ctrl-C at sub-flow questions, per question', () => {
  it('at two questions of two different flows: each goes back to Jarvis, with the feedback in its next prompt', async () => {
    // Jarvis's plan: ok; Ctrl-C at the Coder's plan, feedback; Ctrl-C at re_plan's plan, feedback; the final answer
    const keys = ['ok\n', '\x03', 'use the shell, not python\n', '\x03', 'keep the first plan\n', 'thanks\n'];
    const { result, llm, events, shown } = await runJarvis(lists, keys);
    expect(result.status, result.error?.message).toBe('finished');
    expect(result.result).toBe('done after two interruptions');
    const interrupted = events.flatMap((e) =>
      e.type === 'subflow' && e.event.type === 'run_finished' && e.event.status === 'interrupted' ? [e.flow] : [],
    );
    expect(interrupted).toEqual(['Coder-1', 're_plan-1']);
    expect(shown).toContain('One line of feedback for Jarvis');
    const jarvis = llm.calls.filter((c) => c.meta.agent === 'Jarvis').map((c) => c.messages.map((m) => m.content).join('\n'));
    expect(jarvis[1]).toContain('the user interrupted it (Ctrl-C at a question of Coder-1)');
    expect(jarvis[1]).toContain("The user's feedback: use the shell, not python");
    expect(jarvis[2]).toContain('the user interrupted it (Ctrl-C at a question of re_plan-1)');
    expect(jarvis[2]).toContain("The user's feedback: keep the first plan");
  });

  it('Ctrl-C again at the feedback question stops the run, interrupted and resumable', async () => {
    const { result } = await runJarvis(lists, ['ok\n', '\x03', '\x03']);
    expect(result.status).toBe('interrupted');
    expect(result.error?.name).toBe('AnswerInterruptedError');
  });

  it('Enter at the feedback question: back to Jarvis without feedback', async () => {
    const { result, llm } = await runJarvis(lists, ['ok\n', '\x03', '\n', '\x03', '\n', 'thanks\n']);
    expect(result.status, result.error?.message).toBe('finished');
    const second = llm.calls
      .filter((c) => c.meta.agent === 'Jarvis')[1]!
      .messages.map((m) => m.content)
      .join('\n');
    expect(second).toContain('the user interrupted it (Ctrl-C at a question of Coder-1)');
    expect(second).not.toContain("The user's feedback");
  });
});
