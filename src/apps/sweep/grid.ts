// The grid of a sweep: seeds × input rows × models × repeats, each point with a stable key
// (the same command line gives the same keys, so a re-run finds its finished and half-done runs).
import { createHash } from 'node:crypto';
import { readInputFile } from '../../shared/io/read-input-file.js';
import { describeJsonProblem } from '../../shared/util/json-syntax.js';
import { EngineError } from '../../shared/errors.js';
import type { SetValue } from '../../format/sop/set-pointer.js';

export interface GridPoint {
  /** Stable name of the point: its run folder's name and its job id on a queue. */
  key: string;
  seed: number;
  inputs: Record<string, string>;
  model?: string;
  /** 1-based repeat of the same point (--repeat). */
  repeat: number;
  /** 1-based row of the --inputs file. */
  row?: number;
  /** Values set at JSON pointers of the SOP for this run (a calibration's particle: src/format/sop/set-pointer.ts). */
  set?: Record<string, SetValue>;
  /** The experiment's arm (experiment.arms: its inputs are in `inputs`, its `set` applied by the runner). */
  arm?: string;
  /** The seed the run runs with when it is not `seed` (an arm on independent seeds). */
  runSeed?: number;
}

export interface GridSpec {
  seeds: number[];
  rows: Array<Record<string, string>> | undefined;
  models: Array<string | undefined>;
  repeat: number;
  /** --input name=value, the same for every run (a row's column of the same name wins). */
  fixed: Record<string, string>;
  /** The experiment's arms: every seed runs in each (an arm's inputs win over the rest). */
  arms?: ReadonlyArray<{ name: string; inputs: Record<string, string> }>;
  /** Arms on common random numbers (the same seed in each arm; default) or independent seeds (the seed hashed with the arm). */
  armSeed?: (seed: number, arm: string) => number;
}

export class SweepInputError extends EngineError {
  constructor(message: string) {
    super(message, 'SWEEP_INPUT');
  }
}

/** "1-100", "1,5,9", "3-5,10" (at most 100,000 seeds). */
export function parseSeeds(spec: string): number[] {
  const out: number[] = [];
  for (const part of spec.split(',')) {
    const p = part.trim();
    const m = /^(-?\d+)(?:-(-?\d+))?$/.exec(p);
    if (!m) throw new SweepInputError(`--seeds "${spec}": use a number, a range like 1-100, or a list like 1,5,9-12`);
    const a = Number(m[1]);
    const b = m[2] !== undefined ? Number(m[2]) : a;
    if (!Number.isSafeInteger(a) || !Number.isSafeInteger(b)) throw new SweepInputError(`--seeds "${spec}": ${p} is too large`);
    if (b < a) throw new SweepInputError(`--seeds "${spec}": the range ${p} goes down; write it from low to high (${b}-${a})`);
    if (out.length + (b - a + 1) > 100_000) throw new SweepInputError(`--seeds "${spec}": more than 100000 seeds`);
    for (let s = a; s <= b; s++) out.push(s);
  }
  return [...new Set(out)];
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function cell(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function checkColumns(file: string, names: string[]): void {
  for (const [i, n] of names.entries()) {
    if (!NAME.test(n) || n === '__proto__' || n === 'constructor' || n === 'prototype') {
      // a header of plain words is shown; anything else (a file that is no table: /etc/passwd) is not quoted
      const shown = /^[\p{L}\p{N}_ .@+-]{1,64}$/u.test(n) ? `"${n}"` : `${i + 1} of the header`;
      throw new SweepInputError(`${file}: column ${shown} is not an input name (letters, digits and _)`);
    }
  }
}

/** One CSV record per row (RFC 4180: quoted fields, "" inside quotes, CRLF or LF). */
export function parseCsv(text: string, file: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  let closed = false; // a quoted field just ended: only a comma or a line end may follow
  let line = 1;
  let openedAt = 1;
  let i = 0;
  const t = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  while (i < t.length) {
    const c = t[i]!;
    if (quoted) {
      if (c === '"' && t[i + 1] === '"') {
        field += '"';
        i += 2;
      } else {
        if (c === '"') {
          quoted = false;
          closed = true;
        } else field += c;
        if (c === '\n') line++;
        i++;
      }
      continue;
    }
    if (closed && c !== ',' && c !== '\n' && c !== '\r')
      throw new SweepInputError(`${file}:${line}: text after the closing quote of a field (inside quotes, write a quote as "")`);
    closed = false;
    if (c === '"' && field === '') {
      quoted = true;
      openedAt = line;
      i++;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i++;
    } else if (c === '\n' || c === '\r') {
      row.push(field);
      field = '';
      if (row.length > 1 || row[0] !== '') rows.push(row);
      row = [];
      i += c === '\r' && t[i + 1] === '\n' ? 2 : 1;
      line++;
    } else {
      field += c;
      i++;
    }
  }
  if (quoted) throw new SweepInputError(`${file}:${openedAt}: a quoted field is not closed`);
  row.push(field);
  if (row.length > 1 || row[0] !== '') rows.push(row);
  return rows;
}

/** The rows of --inputs: a .jsonl file (one object a line) or a .csv file (a header row). */
export function readInputRows(file: string): Array<Record<string, string>> {
  let text: string;
  try {
    text = readInputFile(file, { maxBytes: 256 * 1024 * 1024 });
  } catch (err) {
    throw new SweepInputError(`--inputs ${(err as Error).message}`); // the message names the file
  }
  const rows: Array<Record<string, string>> = [];
  if (/\.csv$/i.test(file)) {
    const records = parseCsv(text, file);
    const header = records.shift();
    if (!header) throw new SweepInputError(`${file}: no header row`);
    const names = header.map((h) => h.trim());
    checkColumns(file, names);
    const twice = names.find((n, j) => names.indexOf(n) !== j);
    if (twice !== undefined) throw new SweepInputError(`${file}: column "${twice}" appears twice in the header`);
    records.forEach((r, i) => {
      if (r.length !== names.length) throw new SweepInputError(`${file}: row ${i + 2} has ${r.length} fields, the header ${names.length}`);
      rows.push(Object.fromEntries(names.map((n, j) => [n, r[j]!])));
    });
  } else if (/\.jsonl$|\.ndjson$/i.test(file)) {
    text.split('\n').forEach((line, i) => {
      if (!line.trim()) return;
      let v: unknown;
      try {
        v = JSON.parse(line);
      } catch (err) {
        throw new SweepInputError(`${file}:${i + 1}: not JSON (${describeJsonProblem(line, err).replace(/^line 1, /, '')})`);
      }
      if (typeof v !== 'object' || v === null || Array.isArray(v))
        throw new SweepInputError(`${file}:${i + 1}: each line must be a JSON object of inputs`);
      checkColumns(file, Object.keys(v));
      rows.push(Object.fromEntries(Object.entries(v).map(([k, x]) => [k, cell(x)])));
    });
  } else {
    throw new SweepInputError(`--inputs ${file}: use a .jsonl or a .csv file`);
  }
  if (rows.length === 0) throw new SweepInputError(`--inputs ${file}: no rows`);
  return rows;
}

function slug(s: string): string {
  return s.replace(/[^A-Za-z0-9.]+/g, '_').slice(0, 40);
}

export function pointKey(p: Omit<GridPoint, 'key'>): string {
  // an arm's name and seed enter the hash only when there is one, so keys of sweeps without arms stay as they were
  const arm = p.arm !== undefined ? [p.arm, p.runSeed ?? p.seed] : [];
  const hash = createHash('sha256')
    .update(
      JSON.stringify([
        p.seed,
        p.model ?? null,
        p.repeat,
        Object.entries(p.inputs).sort(),
        ...arm,
        ...(p.set !== undefined ? [Object.entries(p.set).sort()] : []), // keys of points without one are as before
      ]),
    )
    .digest('hex')
    .slice(0, 8);
  return [
    `s${p.seed}`,
    ...(p.arm !== undefined ? [`a${slug(p.arm)}`] : []),
    ...(p.model !== undefined ? [`m${slug(p.model)}`] : []),
    ...(p.row !== undefined ? [`i${p.row}`] : []),
    ...(p.repeat > 1 ? [`r${p.repeat}`] : []),
    hash,
  ].join('-');
}

/** Every point of the grid, in order: models, then rows, then seeds, then arms, then repeats. */
export function expandGrid(g: GridSpec): GridPoint[] {
  const points: GridPoint[] = [];
  const keys = new Set<string>();
  const arms = g.arms ?? [undefined];
  for (const model of g.models) {
    const rows = g.rows ?? [undefined];
    rows.forEach((row, i) => {
      for (const seed of g.seeds) {
        for (const arm of arms) {
          const runSeed = arm !== undefined && g.armSeed ? g.armSeed(seed, arm.name) : seed;
          for (let r = 1; r <= g.repeat; r++) {
            const p: Omit<GridPoint, 'key'> = {
              seed,
              inputs: { ...g.fixed, ...(row ?? {}), ...(arm?.inputs ?? {}) },
              ...(model !== undefined ? { model } : {}),
              repeat: r,
              ...(row !== undefined ? { row: i + 1 } : {}),
              ...(arm !== undefined ? { arm: arm.name } : {}),
              ...(runSeed !== seed ? { runSeed } : {}),
            };
            const key = pointKey(p);
            if (keys.has(key)) continue; // two identical rows are one point
            keys.add(key);
            points.push({ key, ...p });
          }
        }
      }
    });
  }
  return points;
}
