// The JSON Schema a local model's command reply is generated under (node-llama-cpp's
// createGrammarForJsonSchema): one of the state's commands, as the JSON the engine parses,
// {"command": NAME, "command_args": {...}}. Every reply made under it parses as a command whose
// arguments have the types the command declares.
//
// node-llama-cpp takes a subset of JSON Schema (type, const, enum, oneOf, properties, items,
// string lengths and a few formats), and an object's properties are always all present. So a
// command's schema is translated: keywords it has no grammar for (pattern, minimum, $ref...) are
// left out (the executor still checks the arguments), and optional arguments become a choice
// among the objects with and without them (up to MAX_OPTIONAL_SPREAD of them; beyond that only
// the required ones are generated). An array without maxItems gets DEFAULT_MAX_ITEMS, and a reply
// cut at max tokens is closed (closeJson), so it still parses.
import type { CallMeta, ToolSpec } from './types.js';
import { isObject } from '../../shared/util/is-object.js';

/** node-llama-cpp's GbnfJsonSchema, structurally (the package is an optional dependency). */
export type GrammarSchema = { readonly [key: string]: unknown };

/** Optional arguments spread into alternatives (2^n objects); with more, only the required ones are generated. */
export const MAX_OPTIONAL_SPREAD = 3;

/** Items of an array whose schema sets no maxItems: a small model repeats itself until it runs out of tokens. */
export const DEFAULT_MAX_ITEMS = 8;

const SIMPLE = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const FORMATS = new Set(['date-time', 'time', 'date']);

/** Any JSON value, as far as the grammar can say it (an object of any keys, an array of anything). */
const ANY: GrammarSchema = {
  oneOf: [
    { type: ['string', 'number', 'boolean', 'null'] },
    { type: 'object', additionalProperties: true },
    { type: 'array', items: { type: ['string', 'number', 'boolean', 'null'] } },
  ],
};

function literal(v: unknown): v is string | number | boolean | null {
  return v === null || ['string', 'number', 'boolean'].includes(typeof v);
}

/** One JSON Schema as the grammar takes it (depth-limited: a schema deeper than 12 levels is "any value" below that). */
export function grammarSchemaOf(schema: unknown, depth = 0): GrammarSchema {
  if (!isObject(schema) || depth > 12) return ANY;
  if ('const' in schema && literal(schema.const)) return { const: schema.const };
  if (Array.isArray(schema.enum)) {
    const values = schema.enum.filter(literal);
    if (values.length > 0) return { enum: values };
  }
  const alternatives = Array.isArray(schema.oneOf) ? schema.oneOf : Array.isArray(schema.anyOf) ? schema.anyOf : undefined;
  if (alternatives && alternatives.length > 0) return { oneOf: alternatives.map((s) => grammarSchemaOf(s, depth + 1)) };
  const type = schema.type;
  if (Array.isArray(type)) {
    const simple = type.filter((t): t is string => typeof t === 'string' && SIMPLE.has(t));
    if (simple.length === type.length && simple.length > 0) return { type: simple };
    return { oneOf: type.map((t: unknown) => grammarSchemaOf({ ...schema, type: t }, depth + 1)) };
  }
  switch (type) {
    case 'string': {
      if (typeof schema.format === 'string' && FORMATS.has(schema.format)) return { type: 'string', format: schema.format };
      return {
        type: 'string',
        ...(typeof schema.minLength === 'number' ? { minLength: schema.minLength } : {}),
        ...(typeof schema.maxLength === 'number' ? { maxLength: schema.maxLength } : {}),
      };
    }
    case 'number':
    case 'integer':
    case 'boolean':
    case 'null':
      return { type };
    case 'array':
      return {
        type: 'array',
        items: schema.items === undefined ? ANY : grammarSchemaOf(schema.items, depth + 1),
        ...(typeof schema.minItems === 'number' ? { minItems: schema.minItems } : {}),
        maxItems: typeof schema.maxItems === 'number' ? schema.maxItems : Math.max(DEFAULT_MAX_ITEMS, Number(schema.minItems) || 0),
      };
    case 'object':
      return objectSchema(schema, depth);
    default:
      return isObject(schema.properties) ? objectSchema(schema, depth) : ANY;
  }
}

/** An object: its required properties always, its optional ones spread into alternatives. */
function objectSchema(schema: Record<string, unknown>, depth: number): GrammarSchema {
  const props = isObject(schema.properties) ? schema.properties : {};
  const names = Object.keys(props);
  if (names.length === 0) return { type: 'object', ...(schema.additionalProperties === false ? {} : { additionalProperties: true }) };
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  const optional = names.filter((n) => !required.has(n));
  const spread = optional.length <= MAX_OPTIONAL_SPREAD ? optional : [];
  const variants: GrammarSchema[] = [];
  for (let mask = 0; mask < 1 << spread.length; mask++) {
    const keep = names.filter((n) => required.has(n) || spread.some((o, i) => o === n && (mask & (1 << i)) !== 0));
    variants.push({ type: 'object', properties: Object.fromEntries(keep.map((n) => [n, grammarSchemaOf(props[n], depth + 1)])) });
  }
  return variants.length === 1 ? variants[0]! : { oneOf: variants };
}

/** The arguments of a command given without a JSON Schema (meta.commands: its declared argument types). */
function argsFromTypes(c: NonNullable<CallMeta['commands']>[number]): Record<string, unknown> {
  const types = c.argTypes ?? {};
  const names = new Set([...Object.keys(types), ...c.required]);
  return {
    type: 'object',
    properties: Object.fromEntries([...names].map((n) => [n, types[n] ?? { type: 'string' }])),
    required: c.required,
  };
}

/**
 * The schema of a reply that must be a command (a state with commands or granted tools), or
 * undefined for a call that may answer freely. Tools (their JSON Schemas) win over the
 * commands' declared argument types.
 */
export function commandReplySchema(meta: Pick<CallMeta, 'commands' | 'tools'>): GrammarSchema | undefined {
  const tools: ToolSpec[] | undefined = meta.tools?.length ? meta.tools : undefined;
  const commands = tools
    ? tools.map((t) => ({ name: t.name, args: t.parameters }))
    : (meta.commands ?? []).map((c) => ({ name: c.name, args: argsFromTypes(c) }));
  if (commands.length === 0) return undefined;
  const one = commands.map((c) => ({
    type: 'object',
    properties: { command: { const: c.name }, command_args: grammarSchemaOf(c.args) },
  }));
  return one.length === 1 ? one[0]! : { oneOf: one };
}

/**
 * A prefix of JSON (a reply made under a JSON grammar and cut at max tokens) made whole: an open
 * string is closed, the last member of the innermost open object or array is dropped when it is
 * not whole (a key without its value, a literal cut short), open arrays and objects are closed.
 * The executor then checks the arguments as for any reply.
 */
export function closeJson(prefix: string): string {
  const stack: string[] = [];
  /** Where the current member of each open object or array began (after its "{", "[" or ","). */
  const memberStart: number[] = [];
  let inString = false;
  let escaped = false;
  for (let i = 0; i < prefix.length; i++) {
    const c = prefix[i]!;
    if (inString) {
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      stack.push(c === '{' ? '}' : ']');
      memberStart.push(i + 1);
    } else if (c === '}' || c === ']') {
      stack.pop();
      memberStart.pop();
    } else if (c === ',' && memberStart.length > 0) memberStart[memberStart.length - 1] = i + 1;
  }
  let text = prefix;
  if (inString) text = (escaped ? text.slice(0, -1) : text) + '"';
  if (stack.length > 0) {
    const start = memberStart.at(-1)!;
    const member = text.slice(start);
    if (member.trim() !== '') {
      const value = stack.at(-1) === '}' ? /^\s*"(?:[^"\\]|\\.)*"\s*:\s*([^]*)$/.exec(member)?.[1] : member;
      if (!wholeValue(value)) text = text.slice(0, start);
    }
    text = text.replace(/,\s*$/, '');
  }
  for (let i = stack.length - 1; i >= 0; i--) text += stack[i];
  return text;
}

function wholeValue(v: string | undefined): boolean {
  if (v === undefined || v.trim() === '') return false;
  try {
    JSON.parse(v);
    return true;
  } catch {
    return false;
  }
}
