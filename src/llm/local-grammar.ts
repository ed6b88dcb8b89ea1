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
// the required ones are generated).
import type { CallMeta, ToolSpec } from './types.js';

/** node-llama-cpp's GbnfJsonSchema, structurally (the package is an optional dependency). */
export type GrammarSchema = { readonly [key: string]: unknown };

/** Optional arguments spread into alternatives (2^n objects); with more, only the required ones are generated. */
export const MAX_OPTIONAL_SPREAD = 3;

const SIMPLE = new Set(['string', 'number', 'integer', 'boolean', 'null']);
const FORMATS = new Set(['date-time', 'time', 'date']);

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

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
    return { oneOf: type.map((t) => grammarSchemaOf({ ...schema, type: t }, depth + 1)) };
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
        ...(typeof schema.maxItems === 'number' ? { maxItems: schema.maxItems } : {}),
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
