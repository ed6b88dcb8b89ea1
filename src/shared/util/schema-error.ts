// One clear message for the first ajv error of a document checked against a schema whose nodes
// carry `x-error` (schemas/taskboard.schema.json, schemas/worldmodel.schema.json): the message of
// the deepest node on the error's path that has one (a node without one reports through its
// parent, e.g. a bad id in a list of ids is reported on the list); an `enum` node without one says
// `must be one of ...`. A missing required key is reported on the key, like a wrong value (checkSchema
// checks a document with its generated validator and says that). Also: the message of an ajv error
// said the same way by every schema check (ajvProblem), and SameShape and Known, with which a file
// checks at compile time that a schema and the interfaces of its records agree.
import type { ErrorObject, ValidateFunction } from 'ajv';
import { isObject } from './is-object.js';

export interface SchemaProblem {
  /** JSON pointer of the value at fault ('' for the whole document). */
  pointer: string;
  message: string;
}

const unescapeSegment = (s: string) => s.replace(/~1/g, '/').replace(/~0/g, '~');
/** A key as a segment of a JSON pointer (`~` as `~0`, `/` as `~1`). */
export const escapeSegment = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * The problem an ajv error names, said the same way by every schema check: an unknown key (pointed
 * at the key), a missing required key, a value outside an enum (with the values it may take); else
 * ajv's own message.
 */
export function ajvProblem(e: ErrorObject): SchemaProblem {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return {
        pointer: `${e.instancePath}/${escapeSegment(String(p.additionalProperty))}`,
        message: `unknown key "${String(p.additionalProperty)}"`,
      };
    case 'required':
      return { pointer: e.instancePath, message: `missing required key "${String(p.missingProperty)}"` };
    case 'enum':
      return {
        pointer: e.instancePath,
        message: `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ')}`,
      };
    default:
      return { pointer: e.instancePath, message: e.message ?? `fails ${e.keyword}` };
  }
}

/** Follows a local `$ref` ("#/definitions/x"); other nodes are returned as they are. */
function resolveRef(root: Record<string, unknown>, node: Record<string, unknown>): Record<string, unknown> {
  if (typeof node.$ref !== 'string' || !node.$ref.startsWith('#/')) return node;
  let target: unknown = root;
  for (const segment of node.$ref.slice(2).split('/')) target = isObject(target) ? target[unescapeSegment(segment)] : undefined;
  return isObject(target) ? target : node;
}

function messageOf(use: Record<string, unknown>, node: Record<string, unknown>): string | undefined {
  const own = use['x-error'] ?? node['x-error'];
  if (typeof own === 'string') return own;
  if (Array.isArray(node.enum)) return `must be one of ${node.enum.join(', ')}`;
  return undefined;
}

export function schemaProblem(root: Record<string, unknown>, error: ErrorObject): SchemaProblem {
  const segments = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescapeSegment);
  if (error.keyword === 'required') segments.push(String(error.params.missingProperty));
  let found: SchemaProblem = { pointer: error.instancePath, message: error.message ?? `fails ${error.keyword}` };
  let use: Record<string, unknown> = root;
  let pointer = '';
  for (let i = 0; ; i++) {
    const node = resolveRef(root, use);
    const message = messageOf(use, node);
    if (message !== undefined) found = { pointer, message };
    if (i === segments.length) break;
    const segment = segments[i]!;
    const next =
      isObject(node.properties) && isObject(node.properties[segment])
        ? node.properties[segment]
        : isObject(node.items) && /^\d+$/.test(segment)
          ? node.items
          : undefined;
    if (!next) break;
    use = next;
    pointer += `/${escapeSegment(segment)}`;
  }
  return found;
}

/**
 * Checks `doc` with a validator ajv generated for `schema`; when it fails, `fail` is given the
 * pointer and message of its first error (schemaProblem).
 */
export function checkSchema<T>(
  validate: ValidateFunction<T>,
  schema: Record<string, unknown>,
  doc: unknown,
  fail: (pointer: string, message: string) => never,
): asserts doc is T {
  if (!validate(doc)) {
    const { pointer, message } = schemaProblem(schema, validate.errors![0]!);
    fail(pointer, message);
  }
}

/** True when A and B are the same type: a check at compile time that a schema and the interfaces of its records have not drifted. */
export type SameShape<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** The keys T declares, without the index signature FromSchema adds for unknown extra keys. */
export type Known<T> = { [K in keyof T as string extends K ? never : K]: T[K] };
