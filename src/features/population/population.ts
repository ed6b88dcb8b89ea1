// A population in memory: the sampled rows of a source, kept by column (a number column as a
// Float64Array; any other as codes into its distinct values), ids in source order. 100k agents
// of a few columns take a few megabytes. `loadPopulation` streams the source once: the checks of
// the columns happen on its first row, sampling keeps only the rows it needs.
import { generatedColumns, generateRows } from './generate.js';
import { compilePersona, type Persona } from './persona.js';
import { SampleError, sampleN, sampleStratified } from './sample.js';
import { streamSource, type SourceRow } from './source.js';
import { idColumnOf, listColumns, PopulationError, STRATUM_SEPARATOR, type PopulationSpec, type Row, type Value } from './types.js';
import { shapeProblem, sourcePath } from './validate.js';

export { validatePopulationSpec } from './validate.js';

type Column = { kind: 'number'; data: Float64Array } | { kind: 'coded'; codes: Uint32Array; values: Value[] };

function toColumn(rows: readonly SourceRow[], name: string): Column {
  if (rows.every((r) => typeof r.row[name] === 'number'))
    return { kind: 'number', data: Float64Array.from(rows, (r) => r.row[name] as number) };
  const values: Value[] = [];
  const index = new Map<Value, number>();
  const codes = new Uint32Array(rows.length);
  rows.forEach((r, i) => {
    const v = r.row[name]!;
    let code = index.get(v);
    if (code === undefined) {
      code = values.push(v) - 1;
      index.set(v, code);
    }
    codes[i] = code;
  });
  return { kind: 'coded', codes, values };
}

export interface Archetype {
  /** The archetype key (Persona.archetypeKey). */
  key: string;
  /** Indices of its agents, in order. */
  members: number[];
}

export class Population {
  readonly size: number;
  readonly ids: readonly string[];
  private readonly byId: Map<string, number>;
  private readonly data: Map<string, Column>;

  constructor(
    rows: readonly SourceRow[],
    readonly columns: readonly string[],
    readonly idColumn: string,
    readonly persona: Persona | undefined,
    /** How many rows the source had (before sampling). */
    readonly sourceRows: number,
  ) {
    this.size = rows.length;
    this.ids = rows.map((r) => r.id);
    this.byId = new Map(this.ids.map((id, i) => [id, i]));
    this.data = new Map(columns.map((c) => [c, toColumn(rows, c)]));
  }

  /** The index of an agent by id, or -1. */
  indexOf(id: string): number {
    return this.byId.get(id) ?? -1;
  }

  value(i: number, column: string): Value | undefined {
    const c = this.data.get(column);
    if (!c || i < 0 || i >= this.size) return undefined;
    return c.kind === 'number' ? c.data[i] : c.values[c.codes[i]!];
  }

  /** The agent's row (a fresh object). */
  row(i: number): Row {
    const row: Row = {};
    for (const c of this.columns) row[c] = this.value(i, c)!;
    return row;
  }

  /** The agent's persona text ("" without a persona template). */
  personaText(i: number): string {
    return this.persona ? this.persona.render(this.row(i)) : '';
  }

  /** The agent's archetype key (all agents share one without a persona template). */
  archetypeKey(i: number): string {
    if (!this.persona) return '[]';
    const named: Row = {};
    for (const c of this.persona.names) {
      const v = this.value(i, c);
      if (v !== undefined) named[c] = v;
    }
    return this.persona.archetypeKey(named);
  }

  /** Agents grouped by archetype, in order of each group's first agent. */
  archetypes(): Archetype[] {
    const groups = new Map<string, number[]>();
    for (let i = 0; i < this.size; i++) {
      const key = this.archetypeKey(i);
      const g = groups.get(key);
      if (g) g.push(i);
      else groups.set(key, [i]);
    }
    return [...groups].map(([key, members]) => ({ key, members }));
  }
}

export interface LoadOptions {
  /** The folder source files are relative to (the SOP file's). */
  baseDir: string;
  /** JSON pointer of the spec, for messages (e.g. "/states/feed/population"). */
  pointer?: string;
}

/** Checks the columns a spec names against the first row's, then passes the rows on. */
async function* checked(
  rows: AsyncIterable<SourceRow> | Iterable<SourceRow>,
  spec: PopulationSpec,
  where: string,
): AsyncGenerator<SourceRow> {
  let first = true;
  for await (const r of rows) {
    if (first) {
      first = false;
      const columns = Object.keys(r.row);
      const by = spec.sample && 'stratify' in spec.sample ? spec.sample.stratify.by : [];
      for (const [i, c] of by.entries())
        if (!columns.includes(c))
          throw new PopulationError(
            `${where}/sample/stratify/by/${i}: names column "${c}", which the source does not have (${listColumns(columns)})`,
          );
      if (spec.persona !== undefined) compilePersona(spec.persona, `${where}/persona`, columns);
    }
    yield r;
  }
}

/** Load a population: stream its source once, sample, keep the rows by column. Errors are one line. */
export async function loadPopulation(spec: PopulationSpec, o: LoadOptions): Promise<Population> {
  const where = o.pointer ?? '';
  const shape = shapeProblem(spec);
  if (shape) throw new PopulationError(`${where + shape.pointer || '/'}: ${shape.message}`);
  const idColumn = idColumnOf(spec);
  const source = spec.source;
  const persona = spec.persona !== undefined ? compilePersona(spec.persona, `${where}/persona`) : undefined;
  const rows = checked(
    'generate' in source
      ? generateRows(source.generate, idColumn)
      : streamSource(sourcePath(source.file, o.baseDir), idColumn, { format: source.format, display: source.file }),
    spec,
    where,
  );
  let kept: SourceRow[];
  let seen: number;
  try {
    ({ rows: kept, seen } = await draw(rows, spec));
  } catch (err) {
    if (err instanceof SampleError) throw new PopulationError(`${where}/sample: ${err.message}`);
    throw err;
  }
  const columns = 'generate' in source ? generatedColumns(source.generate, idColumn) : Object.keys(kept[0]?.row ?? {});
  return new Population(kept, columns, idColumn, persona, seen);
}

async function draw(rows: AsyncIterable<SourceRow>, spec: PopulationSpec): Promise<{ rows: SourceRow[]; seen: number }> {
  const sample = spec.sample;
  if (!sample) {
    const all: SourceRow[] = [];
    for await (const r of rows) all.push(r);
    return { rows: all, seen: all.length };
  }
  if ('stratify' in sample) {
    const s = sample.stratify;
    return sampleStratified(rows, {
      key: (r) => s.by.map((c) => String(r.row[c])).join(STRATUM_SEPARATOR),
      shares: s.shares,
      n: s.n,
      seed: s.seed,
    });
  }
  return sampleN(rows, sample.n, sample.seed);
}
