// The grammar a local model's command replies are made under (src/core/llm/local-grammar.ts): every
// JSON Schema of a command becomes one node-llama-cpp takes, and a reply cut at max tokens is
// closed so it still parses. No model is needed here.
import { describe, expect, it } from 'vitest';
import { closeJson, commandReplySchema, grammarSchemaOf, DEFAULT_MAX_ITEMS } from '../src/core/llm/local-grammar.js';
import { parseCommandReply } from '../src/core/llm/command-reply.js';

describe('closeJson: a JSON prefix made whole', () => {
  const cases: Array<[string, unknown]> = [
    ['{"command": "a", "command_args": {"title": "Sle', { command: 'a', command_args: { title: 'Sle' } }],
    ['{"command": "a", "command_args": {"title": "x", "te', { command: 'a', command_args: { title: 'x' } }],
    ['{"command": "a", "command_args": {"title": "x", "text":', { command: 'a', command_args: { title: 'x' } }],
    ['{"command": "a", "command_args": {"n": 1', { command: 'a', command_args: { n: 1 } }],
    ['{"command": "a", "command_args": {"n": -', { command: 'a', command_args: {} }],
    ['{"command": "a", "command_args": {"ok": tr', { command: 'a', command_args: {} }],
    ['{"command": "a", "command_args": {"tags": ["x", "y', { command: 'a', command_args: { tags: ['x', 'y'] } }],
    ['{"command": "a", "command_args": {"tags": ["x",\n    ', { command: 'a', command_args: { tags: ['x'] } }],
    ['{"command": "a", "command_args": {"t": "a\\', { command: 'a', command_args: { t: 'a' } }],
    ['{"command": "a", "command_args": {"t": "a\\"b', { command: 'a', command_args: { t: 'a"b' } }],
    ['{"command": "a", "command_args": {"o": {"k": [1, 2]}, "p', { command: 'a', command_args: { o: { k: [1, 2] } } }],
    ['{"comm', {}],
    ['{', {}],
    ['{"command": "a"}', { command: 'a' }],
  ];
  for (const [prefix, want] of cases)
    it(JSON.stringify(prefix), () => {
      expect(JSON.parse(closeJson(prefix))).toEqual(want);
    });
});

describe('JSON Schemas as the grammar takes them', () => {
  it('optional properties become alternatives; keywords without a grammar are left out', () => {
    const g = grammarSchemaOf({
      type: 'object',
      properties: { title: { type: 'string', minLength: 1, pattern: '^x' }, tags: { type: 'array', items: { type: 'string' } } },
      required: ['title'],
      additionalProperties: false,
      $schema: 'http://json-schema.org/draft-07/schema#',
    });
    expect(g).toEqual({
      oneOf: [
        { type: 'object', properties: { title: { type: 'string', minLength: 1 } } },
        {
          type: 'object',
          properties: {
            title: { type: 'string', minLength: 1 },
            tags: { type: 'array', items: { type: 'string' }, maxItems: DEFAULT_MAX_ITEMS },
          },
        },
      ],
    });
  });

  it('enums, consts, type lists, anyOf and unknown schemas', () => {
    expect(grammarSchemaOf({ type: 'string', enum: ['a', 'b'] })).toEqual({ enum: ['a', 'b'] });
    expect(grammarSchemaOf({ const: 3 })).toEqual({ const: 3 });
    expect(grammarSchemaOf({ type: ['string', 'null'] })).toEqual({ type: ['string', 'null'] });
    expect(grammarSchemaOf({ anyOf: [{ type: 'integer', minimum: 0 }, { type: 'boolean' }] })).toEqual({
      oneOf: [{ type: 'integer' }, { type: 'boolean' }],
    });
    expect(grammarSchemaOf({ $ref: '#/definitions/x' })).toHaveProperty('oneOf');
    expect(grammarSchemaOf({ type: 'object' })).toEqual({ type: 'object', additionalProperties: true });
  });

  it('a command state: one of its commands, as the JSON the engine parses; tools win over declared argument types', () => {
    const commands = [
      { name: 'finish', executor: 'finish', required: ['result'], argTypes: { result: { type: 'string' }, summary: { type: 'string' } } },
    ];
    expect(commandReplySchema({})).toBeUndefined();
    expect(commandReplySchema({ commands })).toEqual({
      type: 'object',
      properties: {
        command: { const: 'finish' },
        command_args: {
          oneOf: [
            { type: 'object', properties: { result: { type: 'string' } } },
            { type: 'object', properties: { result: { type: 'string' }, summary: { type: 'string' } } },
          ],
        },
      },
    });
    const tools = [
      {
        name: 'notes__search_notes',
        description: '',
        parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
      { name: 'finish', description: '', parameters: { type: 'object', properties: { result: { type: 'string' } }, required: ['result'] } },
    ];
    const schema = commandReplySchema({ commands, tools }) as { oneOf: unknown[] };
    expect(schema.oneOf).toHaveLength(2);
    // what a reply under it looks like parses as a command
    const reply = '{\n    "command": "notes__search_notes",\n    "command_args": {\n        "query": "sleep"\n    }\n}';
    expect(parseCommandReply(reply)).toEqual({ ok: true, command: 'notes__search_notes', args: { query: 'sleep' } });
  });
});
