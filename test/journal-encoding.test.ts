// The journal writer's shortcuts (issue 24, the journal per step) write what plain serialisation
// would: a checkpoint's snapshot is written with the JSON text the run made when it copied it
// (src/shared/util/json.ts), and a prompt's messages are found in its base by their length first.
import { describe, expect, it } from 'vitest';
import { runSop } from '../src/index.js';
import type { ChatMessage } from '../src/core/llm/types.js';
import { PromptEncoder } from '../src/features/journal/prompts.js';
import { promptsOf } from '../src/features/journal/recorded-prompts.js';
import { parseJournal } from '../src/features/journal/reader.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { cloneJsonKeepingText, stringifyReusing } from '../src/shared/util/json.js';

describe('a checkpoint written with the text of its snapshot', () => {
  it('is the text JSON.stringify gives, for every checkpoint of a run', async () => {
    const checkpoints: RunEvent[] = [];
    const run = runSop('examples/werewolf/werewolf.sop.json', {
      llm: 'mock',
      maxTurns: 30,
      listeners: [(e) => void (e.type === 'checkpoint' && checkpoints.push(e))],
    });
    await run.result;
    expect(checkpoints.length).toBeGreaterThan(10);
    for (const c of checkpoints) expect(stringifyReusing(c as unknown as Record<string, unknown>)).toBe(JSON.stringify(c));
  });

  it('leaves out what JSON.stringify leaves out, and reuses only copies it made', () => {
    const snapshot = cloneJsonKeepingText({ b: [1, 'é', { c: null }], a: { '2': 1, '1': 2 }, s: 'lone \ud800' });
    const event = { type: 'checkpoint', skip: undefined, f: () => 1, turn: 3, snapshot, other: { x: 1 } };
    expect(stringifyReusing(event)).toBe(JSON.stringify(event));
    expect(stringifyReusing({})).toBe('{}');
    expect(stringifyReusing({ only: undefined })).toBe('{}');
  });
});

describe('a prompt whose messages are found in its base', () => {
  const prompt = (turn: number, messages: ChatMessage[]): RunEvent => ({
    type: 'prompt',
    purpose: 'agent',
    state: 's',
    agent: 'Ada',
    turn,
    messages,
  });

  it('copies a message of the base among others of the same length, under its own role only', () => {
    const a = 'x'.repeat(80);
    const b = 'y'.repeat(80);
    const first = prompt(1, [
      { role: 'system', content: 'You are Ada.' },
      { role: 'user', content: a },
      { role: 'assistant', content: b },
      { role: 'user', content: b },
    ]);
    // b as the user's (the base's 4th message, not its 3rd), then a text of that length found nowhere
    const second = prompt(2, [
      { role: 'system', content: 'You are Ada.' },
      { role: 'user', content: b },
      { role: 'user', content: 'z'.repeat(80) },
    ]);
    const enc = new PromptEncoder();
    const text = [first, second]
      .map((e) =>
        enc
          .encode(e)!
          .map((l) => JSON.stringify(l) + '\n')
          .join(''),
      )
      .join('');
    const line = JSON.parse(text.trim().split('\n').at(-1)!) as { messages: unknown[] };
    expect(line.messages).toEqual([
      { copy: 0, n: 1 },
      { copy: 3, n: 1 },
      { role: 'user', content: 'z'.repeat(80) },
    ]);
    const back = promptsOf({ effective: parseJournal(text).events });
    expect(back.map((p) => p.messages)).toEqual([
      (first as { messages: ChatMessage[] }).messages,
      (second as { messages: ChatMessage[] }).messages,
    ]);
  });
});
