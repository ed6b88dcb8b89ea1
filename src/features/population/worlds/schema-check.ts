// JSON Schema checks of the worlds' parameters and action arguments with ajv, compiled once per
// schema object (user worlds bring their own schemas, so these are compiled at run time).
import type { Ajv, ErrorObject, ValidateFunction } from 'ajv';
import { lazyRequire } from '../../../shared/util/lazy-require.js';
import { ajvProblem } from '../../../shared/util/schema-error.js';

const ajv = lazyRequire<typeof import('ajv')>('ajv');
let compilers: { plain: Ajv; withDefaults: Ajv } | undefined;
/** The two compilers, made at the first schema a run checks. */
function compilersOf(): { plain: Ajv; withDefaults: Ajv } {
  const { Ajv } = ajv();
  return (compilers ??= {
    plain: new Ajv({ allErrors: true, strict: false }),
    withDefaults: new Ajv({ allErrors: true, strict: false, useDefaults: true }),
  });
}
const cache = new WeakMap<object, { plain?: ValidateFunction; defaults?: ValidateFunction }>();

function validatorOf(schema: object, defaults: boolean): ValidateFunction {
  const entry = cache.get(schema) ?? {};
  cache.set(schema, entry);
  if (defaults) return (entry.defaults ??= compilersOf().withDefaults.compile(schema));
  return (entry.plain ??= compilersOf().plain.compile(schema));
}

/** Compiles the schema (throws ajv's error when it is not a valid schema). */
export function compileSchema(schema: object): void {
  validatorOf(schema, false);
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
    const d = ajvProblem(e);
    const key = `${d.pointer}\u0000${d.message}`;
    if (!seen.has(key)) {
      seen.add(key);
      out.push(d);
    }
  }
  const first = validate.errors?.[0];
  if (out.length === 0 && first) out.push(ajvProblem(first));
  return out;
}

const BRANCH = /\/oneOf\/(\d+)(?=\/)/g;

/**
 * Inside a oneOf, only the errors of the branch the value came closest to (fewest errors; a
 * failed `const` or `enum`, the tag of a tagged union, weighs 100), so a value with one wrong
 * field gets one message, not one per branch. Nested oneOfs are decided first, innermost out.
 */
function bestBranches(errors: readonly ErrorObject[]): ErrorObject[] {
  const sites = new Set<string>();
  for (const e of errors) for (const m of e.schemaPath.matchAll(BRANCH)) sites.add(e.schemaPath.slice(0, m.index));
  let alive = [...errors];
  for (const site of [...sites].sort((a, b) => b.length - a.length)) {
    const branchOf = (e: ErrorObject): number | undefined => {
      const m = e.schemaPath.slice(site.length).match(/^\/oneOf\/(\d+)\//);
      return e.schemaPath.startsWith(site) && m ? Number(m[1]) : undefined;
    };
    const score = new Map<number, number>();
    for (const e of alive) {
      const n = branchOf(e);
      if (n !== undefined && e.keyword !== 'oneOf')
        score.set(n, (score.get(n) ?? 0) + (e.keyword === 'const' || e.keyword === 'enum' ? 100 : 1));
    }
    const best = [...score.entries()].sort((a, b) => a[1] - b[1] || a[0] - b[0])[0];
    if (best) alive = alive.filter((e) => branchOf(e) === undefined || branchOf(e) === best[0]);
  }
  return alive;
}
