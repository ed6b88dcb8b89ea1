// The sop executor: a sub-flow runs with its own environment and memory folder, shares only the
// memory files it is given, returns its result and summary, and starts afresh at every call.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../src/core/runtime/events.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { tempDir } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';

const cmd = (command: string, args: Record<string, string> = {}) => JSON.stringify({ command, command_args: args });

function writeSops(dir: string): string {
  const child = {
    name: 'child',
    inputs: { goal: { description: 'What to do', required: true } },
    memory: { scratch: '', shared: '' },
    environment: { summary: { enabled: false } },
    agents: { Worker: { roles: { work: 'R' } } },
    root: 'work',
    states: {
      work: {
        roles: ['R'],
        components: { R: { system: 'Goal: {{goal}}. Scratch: [{{memory.scratch}}]. Shared: [{{memory.shared}}]' } },
        commands: {
          scratch: { executor: 'memory', settings: { op: 'append', file: 'scratch' } },
          share: { executor: 'memory', settings: { op: 'append', file: 'shared' } },
          finish: { executor: 'finish' },
        },
        controller: { max_turns: 5 },
        next_states: { 1: 'end' },
      },
      end: { final: true },
    },
  };
  const parent = {
    name: 'parent',
    memory: { shared: '' },
    environment: { summary: { enabled: false } },
    agents: { Boss: { roles: { boss: 'R' } } },
    root: 'boss',
    states: {
      boss: {
        roles: ['R'],
        commands: {
          delegate: { executor: 'sop', settings: { file: 'child.sop.json', memory: { shared: 'shared' } } },
          recurse: { executor: 'sop', settings: { file: 'parent.sop.json' } },
          finish: { executor: 'finish' },
        },
        next_states: { 1: 'end' },
      },
      end: { final: true },
    },
  };
  writeFileSync(join(dir, 'child.sop.json'), JSON.stringify(child));
  writeFileSync(join(dir, 'parent.sop.json'), JSON.stringify(parent));
  return join(dir, 'parent.sop.json');
}

async function runParent(replies: string[], fallback?: () => string) {
  const dir = tempDir('sop-sub-');
  const file = writeSops(dir);
  const { sop } = loadSopFile(file);
  const llm = new ScriptedLlm({ agent: replies, ...(fallback ? { fallback } : {}) });
  const events: RunEvent[] = [];
  const runDir = join(dir, 'run');
  const result = await new Run({ sop, file, llm, actions: { runDir }, listeners: [(e) => events.push(e)] }).run();
  return { result, llm, events, mem: (p: string) => readFileSync(join(runDir, 'memory', p), 'utf8') };
}

describe('sop executor', () => {
  it('returns the sub-flow result and summary, and resets the sub-flow between calls', async () => {
    const { result, llm, events, mem } = await runParent([
      cmd('delegate', { goal: 'first' }),
      cmd('scratch', { content: 's1' }),
      cmd('share', { content: 'from first' }),
      cmd('finish', { result: 'first done', summary: 'did first' }),
      cmd('delegate', { goal: 'second' }),
      cmd('finish', { result: 'second done' }),
      cmd('finish', { result: 'all delegated' }),
    ]);
    expect(result.status).toBe('finished');
    expect(result.result).toBe('all delegated');
    const actions = result.messages.filter((m) => m.kind === 'action').map((m) => m.content);
    expect(actions[0]).toBe('delegate finished (did first). Its result:\nfirst done');
    expect(actions[1]).toBe('delegate finished. Its result:\nsecond done');

    const worker = llm.calls.filter((c) => c.meta.agent === 'Worker');
    expect(worker).toHaveLength(4);
    // The first call saw its own scratch grow; the second call starts from nothing: no messages
    // of the first call, an empty scratch file, but the shared file as the first call left it.
    expect(worker[2]!.system).toContain('Goal: first. Scratch: [s1\n]. Shared: [from first\n]');
    expect(worker[3]!.messages.map((m) => m.role)).toEqual(['system', 'user']);
    expect(worker[3]!.system).toContain('Goal: second. Scratch: []. Shared: [from first\n]');

    expect(mem('shared.md')).toBe('from first\n');
    expect(mem('delegate-1/scratch.md')).toBe('s1\n');
    expect(mem('delegate-2/scratch.md')).toBe('');
    expect(mem('logs.md')).toBe(
      '- [turn 1] delegate: delegate-1 finished: did first\n' +
        '- [turn 2] delegate: delegate-2 finished: second done\n' +
        '- [turn 3] finish: finished: all delegated\n',
    );
    expect(mem('delegate-1/logs.md')).toContain('- [turn 2] share: appended to memory file "shared"');

    // Sub-flow events reach the caller's listeners, tagged with the flow; usage adds up.
    const started = events.filter((e) => e.type === 'subflow' && e.event.type === 'run_started').map((e) => e.type === 'subflow' && e.flow);
    expect(started).toEqual(['delegate-1', 'delegate-2']);
    expect(result.usage.calls).toBe(7);
  });

  it('asks the agent for the inputs the sub-SOP declares', async () => {
    const { result, llm } = await runParent([
      cmd('delegate'),
      cmd('delegate', { goal: 'g' }),
      cmd('finish', { result: 'r' }),
      cmd('finish', { result: 'done' }),
    ]);
    expect(result.status).toBe('finished');
    expect(llm.calls[1]!.last).toBe(
      'Your reply was not a valid command: command "delegate" needs the argument "goal".\nReply again with exactly one command as a single JSON object, {"command": "<name>", "command_args": {...}}, using one of: delegate, recurse, finish.',
    );
  });

  it('tells the caller when the sub-flow stops without finishing', async () => {
    const noisy = cmd('scratch', { content: '.' });
    const { result } = await runParent([
      cmd('delegate', { goal: 'g' }),
      noisy,
      noisy,
      noisy,
      noisy,
      noisy,
      cmd('finish', { result: 'gave up' }),
    ]);
    expect(result.status).toBe('finished');
    const first = result.messages.find((m) => m.kind === 'action')!;
    expect(first.content).toBe('delegate stopped after 5 turns without finishing.');
  });

  it('stops a SOP that keeps calling itself', async () => {
    const { result } = await runParent([], () => cmd('recurse'));
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(
      /^sub-flows nested more than 8 deep \(command "recurse" of .*parent\.sop\.json\); is a SOP calling itself\?$/,
    );
  });
});
