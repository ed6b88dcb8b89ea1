// JSON Schema checks of the worlds' parameters and action arguments with ajv, compiled once per
// schema object (user worlds bring their own schemas, so these are compiled at run time).
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

const plain = new Ajv({ allErrors: true, strict: false });
const withDefaults = new Ajv({ allErrors: true, strict: false, useDefaults: true });
const cache = new WeakMap<object, { plain?: ValidateFunction; defaults?: ValidateFunction }>();

function validatorOf(schema: object, defaults: boolean): ValidateFunction {
  const entry = cache.get(schema) ?? {};
  cache.set(schema, entry);
  if (defaults) return (entry.defaults ??= withDefaults.compile(schema));
  return (entry.plain ??= plain.compile(schema));
}

/** Compiles the schema (throws ajv's error when it is not a valid schema). */
export function compileSchema(schema: object): void {
  validatorOf(schema, false);
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

function describe(e: ErrorObject): { pointer: string; message: string } {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'additionalProperties':
      return {
        pointer: `${e.instancePath}/${escape(String(p.additionalProperty))}`,
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

/** Every problem of `value` against `schema`, one per pointer and message; `defaults` fills defaults in. */
export function schemaErrors(
  schema: object,
  value: unknown,
  opts: { defaults?: boolean } = {},
): Array<{ pointer: string; message: string }> {
  const validate = validatorOf(schema, opts.defaults === true);
  if (validate(value)) return [];
  const out: Array<{ pointer: string; message: string }> = [];
  const seen = new Set<string>();
  for (const e of bestBranches(validate.errors ?? [])) {
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if') continue;
    const d = describe(e);
    const key = `${d.pointer}\u0000${d.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(d);
    }
  }
  const first = validate.errors?.[0];
  if (out.length === 0 && first) out.push(describe(first));
  return out;
}

const BRANCH = /\/oneOf\/(\d+)(?=\/)/g;

/**
 * Inside a oneOf, only the errors of the branch the value came closest to (fewest errors; a
 * failed `const` or `enum`, the tag of a tagged union, weighs 100), so a value with one wrong
 * field gets one message, not one per branch.
 */
function bestBranches(errors: readonly ErrorObject[]): ErrorObject[] {
  const score = new Map<string, Map<number, number>>();
  for (const e of errors)
    for (const m of e.schemaPath.matchAll(BRANCH)) {
      const site = e.schemaPath.slice(0, m.index);
      const branches = score.get(site) ?? new Map<number, number>();
      score.set(site, branches);
      const n = Number(m[1]);
      branches.set(n, (branches.get(n) ?? 0) + (e.keyword === 'const' || e.keyword === 'enum' ? 100 : 1));
    }
  const winner = new Map<string, number>();
  for (const [site, branches] of score) {
    const best = [...branches.entries()].sort((a, b) => a[1] - b[1] || a[0] - b[0])[0]!;
    winner.set(site, best[0]);
  }
  return errors.filter((e) => {
    for (const m of e.schemaPath.matchAll(BRANCH)) if (winner.get(e.schemaPath.slice(0, m.index)) !== Number(m[1])) return false;
    return true;
  });
}
