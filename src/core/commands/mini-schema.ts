// A small JSON Schema checker for executor settings and command arguments. It covers the subset
// the executors declare (type, properties, required, additionalProperties, enum, items,
// minItems, uniqueItems, minLength, minimum, maximum) so that loading a SOP never pays for
// importing ajv (a few hundred milliseconds at start-up). Returns every problem found.

export interface MiniSchema {
  type?: string | string[];
  properties?: Record<string, MiniSchema>;
  required?: string[];
  additionalProperties?: boolean | MiniSchema;
  enum?: unknown[];
  items?: MiniSchema;
  minItems?: number;
  uniqueItems?: boolean;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  description?: string;
}

export interface SchemaProblem {
  /** Dotted path of the value ("" for the root), e.g. "languages.0". */
  path: string;
  keyword: 'type' | 'required' | 'additionalProperties' | 'enum' | 'minItems' | 'uniqueItems' | 'minLength' | 'minimum' | 'maximum';
  message: string;
  /** The property involved (required, additionalProperties). */
  property?: string;
}

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}

function typeMatches(v: unknown, type: string): boolean {
  const t = typeOf(v);
  return t === type || (type === 'number' && t === 'integer');
}

const A: Record<string, string> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
};

export function checkSchema(schema: MiniSchema, value: unknown, path = ''): SchemaProblem[] {
  const out: SchemaProblem[] = [];
  const at = (key: string | number) => (path ? `${path}.${key}` : String(key));
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(value, t))) {
      out.push({ path, keyword: 'type', message: `must be ${types.map((t) => A[t] ?? t).join(' or ')}` });
      return out;
    }
  }
  if (schema.enum && !schema.enum.some((e) => e === value)) {
    out.push({ path, keyword: 'enum', message: `must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}` });
  }
  if (typeof value === 'string' && schema.minLength !== undefined && value.length < schema.minLength) {
    out.push({
      path,
      keyword: 'minLength',
      message: schema.minLength === 1 ? 'must not be empty' : `must have at least ${schema.minLength} characters`,
    });
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum)
      out.push({ path, keyword: 'minimum', message: `must be at least ${schema.minimum}` });
    if (schema.maximum !== undefined && value > schema.maximum)
      out.push({ path, keyword: 'maximum', message: `must be at most ${schema.maximum}` });
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems)
      out.push({ path, keyword: 'minItems', message: `must have at least ${schema.minItems} item(s)` });
    if (schema.uniqueItems && new Set(value.map((v) => JSON.stringify(v))).size !== value.length)
      out.push({ path, keyword: 'uniqueItems', message: 'must not repeat items' });
    if (schema.items) value.forEach((v, i) => out.push(...checkSchema(schema.items!, v, at(i))));
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const has = (k: string) => Object.prototype.hasOwnProperty.call(obj, k);
    for (const name of schema.required ?? []) {
      if (!has(name)) out.push({ path, keyword: 'required', property: name, message: `missing "${name}"` });
    }
    const props = schema.properties ?? {};
    for (const [k, v] of Object.entries(obj)) {
      const sub = Object.prototype.hasOwnProperty.call(props, k) ? props[k] : undefined;
      if (sub) out.push(...checkSchema(sub, v, at(k)));
      else if (schema.additionalProperties === false)
        out.push({ path, keyword: 'additionalProperties', property: k, message: `unknown "${k}"` });
      else if (schema.additionalProperties && typeof schema.additionalProperties === 'object')
        out.push(...checkSchema(schema.additionalProperties, v, at(k)));
    }
  }
  return out;
}
