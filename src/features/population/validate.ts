// Checks of a population spec for `sop validate`, as diagnostics at JSON pointers: the shape
// (schemas/population.schema.json, with ajv), the generator's marginals, the sample's strata, and
// against the source's columns (read from its first row only): the id column, the columns the
// persona template names, the stratify columns. A missing or unreadable data file is one line.
import { readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import type { ValidateFunction } from 'ajv';
import type { Diagnostic } from '../../format/sop/diagnostics.js';
import { lazyRequire } from '../../shared/util/lazy-require.js';
import { packageRoot } from '../../shared/util/package-root.js';
import { schemaProblem } from '../../shared/util/schema-error.js';
import { columnProblems, generatedColumns } from './generate.js';
import { checkPersona, personaNames } from './persona-check.js';
import { readHeader } from './source.js';
import { idColumnOf, listColumns, PopulationError, STRATUM_SEPARATOR, type PopulationSpec } from './types.js';

const ajv = lazyRequire<typeof import('ajv')>('ajv');
let compiled: { validate: ValidateFunction; root: Record<string, unknown> } | undefined;

/** The JSON schema of a population (schemas/population.schema.json). */
export function populationSchema(): Record<string, unknown> {
  return JSON.parse(readFileSync(join(packageRoot(), 'schemas', 'population.schema.json'), 'utf8')) as Record<string, unknown>;
}

function validator(): { validate: ValidateFunction; root: Record<string, unknown> } {
  if (!compiled) {
    const schema = populationSchema();
    const { Ajv } = ajv();
    const compiler = new Ajv({ allErrors: false, strict: false });
    compiler.addSchema(schema);
    const validate = compiler.getSchema(`${schema.$id as string}#/definitions/population`)!;
    compiled = { validate, root: { ...schema, $ref: '#/definitions/population' } };
  }
  return compiled;
}

const escape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** The first shape problem of a spec (pointer relative to the spec), or undefined. */
export function shapeProblem(spec: unknown): { pointer: string; message: string } | undefined {
  const { validate, root } = validator();
  if (validate(spec)) return undefined;
  return schemaProblem(root, validate.errors![0]!);
}

/** Where a source file is: relative to `baseDir` (the SOP file's folder) unless absolute. */
export function sourcePath(file: string, baseDir: string): string {
  return isAbsolute(file) ? file : resolve(baseDir, file);
}

/**
 * Diagnostics of a population spec at `pointer` (e.g. "/states/feed/population"). Reads at most
 * the first row of a data file.
 */
export function validatePopulationSpec(spec: unknown, baseDir: string, pointer: string): Diagnostic[] {
  return checkPopulationSpec(spec, baseDir, pointer).diagnostics;
}

/**
 * The diagnostics of a population spec, and the columns its agents have (the source's, with the
 * id column) when they could be read: what an expression over an agent may name.
 */
export function checkPopulationSpec(spec: unknown, baseDir: string, pointer: string): { diagnostics: Diagnostic[]; columns?: string[] } {
  const out: Diagnostic[] = [];
  const err = (path: Array<string | number>, message: string) =>
    out.push({ severity: 'error', pointer: pointer + path.map((p) => `/${escape(String(p))}`).join(''), message });
  const shape = shapeProblem(spec);
  if (shape) {
    out.push({ severity: 'error', pointer: pointer + shape.pointer, message: shape.message });
    return { diagnostics: out };
  }
  const p = spec as PopulationSpec;
  const idColumn = idColumnOf(p);
  let columns: string[] | undefined;
  let rows: number | undefined;
  if ('generate' in p.source) {
    const g = p.source.generate;
    for (const [name, c] of Object.entries(g.columns)) for (const m of columnProblems(c)) err(['source', 'generate', 'columns', name], m);
    if (Object.prototype.hasOwnProperty.call(g.columns, idColumn))
      err(['source', 'generate', 'columns', idColumn], `"${idColumn}" is the id column, which the generator fills (a0, a1, ...)`);
    columns = generatedColumns(g, idColumn);
    rows = g.n;
  } else {
    const file = p.source.file;
    try {
      const header = readHeader(sourcePath(file, baseDir), { format: p.source.format, display: file });
      columns = header.columns;
      for (const r of header.renamed)
        out.push({
          severity: 'warning',
          pointer: `${pointer}/source/file`,
          message: `${file}: column ${r.index + 1} is named "__proto__", which cannot be an agent's attribute: it is kept as "${r.to}"`,
        });
    } catch (e) {
      if (!(e instanceof PopulationError)) throw e;
      err(['source', 'file'], e.message);
    }
    if (columns && !columns.includes(idColumn))
      err(
        p.id === undefined ? [] : ['id'],
        `${file} has no id column "${idColumn}" (${listColumns(columns)})${p.id === undefined ? '; name the id column with "id"' : ''}`,
      );
  }
  if (p.persona !== undefined)
    for (const m of columns ? checkPersona(p.persona, columns) : personaNames(p.persona).problems) err(['persona'], m);
  const sample = p.sample;
  if (sample && 'stratify' in sample) {
    const s = sample.stratify;
    const sum = Object.values(s.shares).reduce((a, b) => a + b, 0);
    if (Math.abs(sum - 1) > 1e-6) err(['sample', 'stratify', 'shares'], `the shares add up to ${+sum.toFixed(6)}, not 1`);
    for (const key of Object.keys(s.shares)) {
      const parts = key.split(STRATUM_SEPARATOR).length;
      if (parts !== s.by.length)
        err(
          ['sample', 'stratify', 'shares', key],
          `a stratum key has one value per "by" column, joined by "${STRATUM_SEPARATOR}" (${s.by.join(STRATUM_SEPARATOR)}); "${key}" has ${parts}`,
        );
    }
    if (columns)
      for (const [i, c] of s.by.entries())
        if (!columns.includes(c))
          err(['sample', 'stratify', 'by', i], `names column "${c}", which the source does not have (${listColumns(columns)})`);
    if (rows !== undefined && s.n > rows) err(['sample', 'stratify', 'n'], `asks for ${s.n} agents of the ${rows} rows generated`);
  } else if (sample && rows !== undefined && sample.n > rows)
    err(['sample', 'n'], `asks for ${sample.n} agents of the ${rows} rows generated`);
  return { diagnostics: out, ...(columns ? { columns } : {}) };
}
