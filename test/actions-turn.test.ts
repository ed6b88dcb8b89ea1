// Command turns in the run loop: retries with the error sent back, clear failure when they run
// out, action messages and logs lines, finish and max_turns, and controller memory (the
// sliding window and the system prompt re-rendered with the memory files every turn).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MockProvider } from '../src/core/llm/mock.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { loadSopFile, validateSopDocument } from '../src/api/loader/checked-load.js';
import type { Sop } from '../src/format/sop/types.js';
import { tempDir } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';

function notesSop(state: Record<string, unknown> = {}): Sop {
  const doc = {
    name: 'notes',
    memory: { notes: '' },
    environment: { summary: { enabled: false } },
    agents: { Ann: { roles: { work: 'Worker' } } },
    root: 'work',
    states: {
      work: {
        roles: ['Worker'],
        components: { Worker: { task: 'Keep notes.', system: 'Notes so far: {{memory.notes}}' } },
        commands: {
          note: { executor: 'memory', settings: { op: 'append', file: 'notes' } },
          finish: { executor: 'finish' },
        },
        next_states: { 1: 'end' },
        ...state,
      },
      end: { final: true },
    },
  };
  return validateSopDocument(doc, 'notes.sop.json').sop;
}

const note = (content: string) => JSON.stringify({ command: 'note', command_args: { content } });
const finish = (result: string) => JSON.stringify({ command: 'finish', command_args: { result } });

async function run(sop: Sop, replies: string[]) {
  const dir = tempDir('sop-turn-');
  const llm = new ScriptedLlm({ agent: replies });
  const events: RunEvent[] = [];
  const r = new Run({ sop, file: 'notes.sop.json', llm, actions: { runDir: dir }, listeners: [(e) => events.push(e)] });
  const result = await r.run();
  return { result, llm, events, dir, run: r, memory: (name: string) => readFileSync(join(dir, 'memory', `${name}.md`), 'utf8') };
}

describe('command turns', () => {
  it('sends malformed JSON back to the agent with the error, then runs the corrected command', async () => {
    const bad = '{"command": "note", "command_args": {"content": "first"';
    const { result, llm, events, memory } = await run(notesSop(), [bad, note('first'), finish('all done')]);
    expect(result.status).toBe('finished');
    const calls = llm.of('agent');
    expect(calls).toHaveLength(3);
    const retry = calls[1]!.messages;
    expect(retry[retry.length - 2]).toEqual({ role: 'assistant', content: bad });
    expect(retry[retry.length - 1]!.role).toBe('user');
    expect(retry[retry.length - 1]!.content).toMatch(/^Your reply was not a valid command: the JSON is malformed/);
    expect(retry[retry.length - 1]!.content).toContain('using one of: note, finish');
    const rejected = events.filter((e) => e.type === 'command_rejected');
    expect(rejected).toHaveLength(1);
    expect(memory('notes')).toBe('first\n');
    expect(result.result).toBe('all done');
  });

  it('fails the run with a clear message when the retries run out', async () => {
    const unknown = '{"command": "deploy", "command_args": {}}';
    const { result, llm } = await run(notesSop(), [unknown, unknown, unknown, unknown]);
    expect(result.status).toBe('failed');
    expect(result.error?.message).toBe(
      'Ann (Worker) in state "work" gave no valid command in 3 replies; the last problem: unknown command "deploy"; the commands are: note, finish',
    );
    expect(llm.of('agent')).toHaveLength(3);
  });

  it('honours command_retries', async () => {
    const { result, llm } = await run(notesSop({ command_retries: 0 }), ['no command here']);
    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(/gave no valid command in 1 reply; the last problem: no JSON object found/);
    expect(llm.of('agent')).toHaveLength(1);
  });

  it('records the command and the executor result as messages, and a logs line per command', async () => {
    const { result, events, memory } = await run(notesSop(), [note('a'), finish('done')]);
    const kinds = result.messages.map((m) => [m.sender, m.role, m.kind]);
    expect(kinds).toEqual([
      ['Ann', 'Worker', 'speech'],
      ['note', 'memory', 'action'],
      ['Ann', 'Worker', 'speech'],
      ['finish', 'finish', 'action'],
    ]);
    expect(JSON.parse(result.messages[0]!.content)).toEqual({ command: 'note', command_args: { content: 'a' } });
    expect(result.messages[1]!.content).toBe('Appended to memory file "notes" (1 characters).');
    expect(memory('logs')).toBe('- [turn 1] note: appended to memory file "notes"\n- [turn 2] finish: finished: done\n');
    const types = events.map((e) => e.type);
    expect(types).toContain('executor_called');
    expect(types).toContain('executor_result');
    expect(events.find((e) => e.type === 'memory_written' && e.name === 'notes')).toMatchObject({ op: 'append', bytes: 2 });
    const entered = events.filter((e) => e.type === 'state_entered').map((e) => e.type === 'state_entered' && [e.state, e.reason]);
    expect(entered).toEqual([
      ['work', 'root'],
      ['end', 'finish'],
    ]);
  });

  it('moves on after max_turns without a finish, with a warning and no result', async () => {
    const { result, events, llm } = await run(notesSop({ controller: { max_turns: 2 } }), [note('a'), note('b'), finish('never')]);
    expect(result.status).toBe('finished');
    expect(result.result).toBeUndefined();
    expect(llm.of('agent')).toHaveLength(2);
    expect(
      events.some((e) => e.type === 'warning' && e.message === 'state "work" reached its max_turns (2) without a finish command'),
    ).toBe(true);
  });
});

describe('controller memory', () => {
  it('keeps only the last memory_window messages of the visit and re-renders the memory files each turn', async () => {
    const { llm } = await run(notesSop({ memory_window: 2 }), [note('n1'), note('n2'), note('n3'), note('n4'), finish('done')]);
    const calls = llm.of('agent');
    const fifth = calls[4]!.messages;
    expect(fifth.map((m) => m.role)).toEqual(['system', 'assistant', 'user', 'user']);
    expect(fifth[1]!.content).toBe(note('n4'));
    expect(fifth[2]!.content).toBe('note (memory): Appended to memory file "notes" (2 characters).');
    expect(fifth[3]!.content).toMatch(/^Now reply as Ann \(Worker\) with exactly one command/);
    // The system prompt carries the memory file as it is now, not as it was at the start.
    expect(calls[0]!.system).toContain('Notes so far:\nYou act only through commands.');
    expect(calls[4]!.system).toContain('Notes so far: n1\nn2\nn3\nn4');
    // The first turn of the visit sees no messages at all.
    expect(calls[0]!.messages.map((m) => m.role)).toEqual(['system', 'user']);
  });

  it('without memory_window, the usual window shows the whole recent history', async () => {
    const { llm } = await run(notesSop(), [note('n1'), note('n2'), note('n3'), finish('done')]);
    expect(llm.of('agent')[3]!.messages).toHaveLength(1 + 6 + 1);
  });
});

describe('the mock provider in command states', () => {
  it('dry-runs the built-in jarvis SOP to the end when everything is accepted (--yes)', async () => {
    const { sop } = loadSopFile('sops/jarvis.sop.json');
    const dir = tempDir('sop-mock-');
    const result = await new Run({
      sop,
      file: 'sops/jarvis.sop.json',
      llm: new MockProvider(),
      inputs: { goal: 'say hello' },
      actions: { runDir: dir, yes: true },
    }).run();
    expect(result.status).toBe('finished');
    expect(result.finalState).toBe('done');
    expect(result.result).toMatch(/^\[mock\] result from Jarvis \(Controller\)/);
    // The walk calls each sub-flow once (Coder, then re_plan, whose accepted draft is the plan) before finish.
    expect(readFileSync(join(dir, 'memory', 'plan.md'), 'utf8')).toMatch(/^\[mock\] draft from Planner \(Planner\) in write/);
  });
});
