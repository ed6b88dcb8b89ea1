// What a template reads (src/prompt/template-reads.ts) decides how long a rendered line may be
// kept (src/agent/message-line.ts): a template that reads only `message` gets one line per message
// as readers see it; any other (reading the reader, or whose reach is not plain) one per reader.
import { describe, expect, it } from 'vitest';
import { messageLine } from '../src/core/agent/message-line.js';
import type { Message } from '../src/core/environment/message.js';
import { TemplateSet } from '../src/core/prompt/templates.js';
import { contextReads } from '../src/core/prompt/template-reads.js';

const HELPERS = new Set(['if', 'unless', 'each', 'with', 'lookup', 'eq', 'inc', 'join', 'tail']);

describe('contextReads', () => {
  it('names the top-level values a plain template reads, through if/unless and helper arguments', () => {
    expect(contextReads('{{message.name}}{{#if (eq message.to "self")}}x{{else}}{{agent.name}}{{/if}}', HELPERS)).toEqual(
      new Set(['message', 'agent']),
    );
    expect(contextReads('{{join list ", "}} {{lookup message key}}', HELPERS)).toEqual(new Set(['list', 'message', 'key']));
  });
  it('gives up on what may reach further: loops, with, partials, @data, ../, this, block params', () => {
    for (const src of [
      '{{#each xs}}{{name}}{{/each}}',
      '{{#with message}}{{name}}{{/with}}',
      '{{> p}}',
      '{{#*inline "p"}}x{{/inline}}',
      '{{@root.agent.name}}',
      '{{this.message}}',
      '{{#if a as |x|}}{{x}}{{/if}}',
      '{{#custom}}x{{/custom}}',
      '{{unclosed',
    ])
      expect(contextReads(src, HELPERS), src).toBeUndefined();
  });
});

const msg = (over: Partial<Message> = {}): Message => ({
  id: 0,
  turn: 1,
  state: 's',
  sender: 'Ada',
  role: 'R1',
  content: 'hello',
  kind: 'speech',
  timestamp: '2026-01-01T00:00:00.000Z',
  ...over,
});

describe('messageLine', () => {
  it('with the built-in template: the same line for every reader, `you` where the message was for the reader', () => {
    const t = new TemplateSet();
    const m = msg({ to: 'Ben, Cy' });
    expect(messageLine(t, 'Ben', 'R2', 's')(m)).toBe('Ada (R1) (to you, Cy): hello');
    expect(messageLine(t, 'Cy', 'R3', 's')(m)).toBe('Ada (R1) (to Ben, you): hello');
    expect(messageLine(t, 'Dee', 'R4', 's')(m)).toBe('Ada (R1) (to Ben, Cy): hello');
    expect(messageLine(t, 'Ben', 'R2', 's')(m)).toBe('Ada (R1) (to you, Cy): hello');
  });
  it('with a template that reads the reader: one line per reader; a changed message is rendered again', () => {
    const t = new TemplateSet({ agent_message: '{{message.name}} to {{agent.name}} in {{state.name}}: {{message.content}}' });
    const m = msg();
    expect(messageLine(t, 'Ben', 'R2', 's')(m)).toBe('Ada to Ben in s: hello');
    expect(messageLine(t, 'Cy', 'R3', 't')(m)).toBe('Ada to Cy in t: hello');
    m.content = 'changed';
    expect(messageLine(t, 'Ben', 'R2', 's')(m)).toBe('Ada to Ben in s: changed');
  });
});
