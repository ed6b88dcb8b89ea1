// Rows of a population file, streamed: CSV (a header row, then one record a row; csv-parse's
// streaming parser) or JSONL (one JSON object a line). The file is never read into one string, so
// a 100k-row file costs the memory of the rows its caller keeps. The file must be a regular file
// (a FIFO, socket or device is refused before it is opened, as src/shared/io/read-input-file.ts does for
// every file a user names), under a size cap, with no row longer than a cap. Every problem is one
// line naming file:line.
import { closeSync, createReadStream, readSync } from 'node:fs';
import { extname, isAbsolute, relative, resolve } from 'node:path';
import type { CsvError } from 'csv-parse';
import { lazyRequire } from '../../shared/util/lazy-require.js';
import { formatBytes, InputFileError, openInputFile } from '../../shared/io/read-input-file.js';
import { listColumns, PopulationError, shownName, type Row, type Value } from './types.js';
import { describeJsonProblem } from '../../shared/util/json-syntax.js';

const csvStream = lazyRequire<typeof import('csv-parse')>('csv-parse');
const csvSync = lazyRequire<typeof import('csv-parse/sync')>('csv-parse/sync');

/** Population files may be large: 1 GiB by default. */
export const MAX_SOURCE_BYTES = 1024 * 1024 * 1024;
/** No row (a CSV record, a JSONL line) may be longer than this (1 MiB). */
export const MAX_ROW_BYTES = 1024 * 1024;

export type SourceFormat = 'csv' | 'jsonl';

export interface SourceOptions {
  /** csv or jsonl; by default from the extension (.csv; .jsonl, .ndjson). */
  format?: SourceFormat;
  /** The file's name in messages (default: the path, relative to the working directory when under it). */
  display?: string;
  maxBytes?: number;
  maxRowBytes?: number;
}

/** One row of a source: its values, its id, where it is (1-based line) and its 0-based position. */
export interface SourceRow {
  id: string;
  row: Row;
  line: number;
  index: number;
}

export function displayPath(file: string): string {
  const rel = relative(process.cwd(), resolve(file));
  return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : resolve(file);
}

export function formatOf(file: string, format?: SourceFormat): SourceFormat {
  if (format) return format;
  const ext = extname(file).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.jsonl' || ext === '.ndjson') return 'jsonl';
  throw new PopulationError(
    `${displayPath(file)}: cannot tell the format from "${ext || 'no extension'}": name it .csv or .jsonl, or give "format"`,
  );
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

/**
 * A CSV cell's value: a number when it is written as one (`42`, `-3.5`, `1e3`; not `007`, `+1`,
 * ` 1` or `0x10`, which stay text, so codes with leading zeros keep them), true/false for exactly
 * `true`/`false`, else the text.
 */
export function cellValue(text: string): Value {
  if (NUMBER.test(text)) {
    const n = Number(text);
    if (Number.isFinite(n)) return n;
  }
  if (text === 'true') return true;
  if (text === 'false') return false;
  return text;
}

/**
 * Open for reading through the safe input reader (src/shared/io/read-input-file.ts: a regular
 * file under the cap, never a FIFO or device, never blocking), and check its encoding: fd, or one
 * clear line naming the file.
 */
export function openChecked(file: string, display: string, maxBytes: number, what = 'a population file'): number {
  let fd: number;
  try {
    fd = openInputFile(file, { maxBytes, what });
  } catch (err) {
    if (err instanceof InputFileError) throw new PopulationError(`${display}: ${err.reason}`);
    throw err;
  }
  try {
    encodingProblem(fd, display);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  return fd;
}

/**
 * A file in UTF-16 or UTF-32 (its byte order mark) or with NUL bytes at its start (not text) is
 * refused in one line: read as UTF-8 it would give names full of NUL bytes. Reads at position 0,
 * so the stream still starts at the first byte.
 */
function encodingProblem(fd: number, display: string): void {
  const head = Buffer.alloc(4096);
  const n = readSync(fd, head, 0, head.length, 0);
  const b = head.subarray(0, n);
  const bom =
    b[0] === 0xff && b[1] === 0xfe
      ? b[2] === 0 && b[3] === 0
        ? 'UTF-32 (little-endian)'
        : 'UTF-16 (little-endian)'
      : b[0] === 0xfe && b[1] === 0xff
        ? 'UTF-16 (big-endian)'
        : b[0] === 0 && b[1] === 0 && b[2] === 0xfe && b[3] === 0xff
          ? 'UTF-32 (big-endian)'
          : undefined;
  if (bom) throw new PopulationError(`${display}: is ${bom} text (its byte order mark says so); save it as UTF-8 and give it again`);
  const nul = b.indexOf(0);
  if (nul >= 0) {
    const line = 1 + b.subarray(0, nul).filter((x) => x === 0x0a).length;
    throw new PopulationError(`${display}:${line}: holds a NUL byte: not a text file (a population file is UTF-8 text)`);
  }
}

/** The name a column is kept under: "__proto__" cannot be a key of a row, so it becomes "_proto_" (or "_proto_2", ...). */
export function safeColumns(columns: readonly string[]): {
  columns: string[];
  renamed: Array<{ from: string; to: string; index: number }>;
} {
  const renamed: Array<{ from: string; to: string; index: number }> = [];
  const out = columns.map((c, index) => {
    if (c !== '__proto__') return c;
    let to = '_proto_';
    for (let k = 2; columns.includes(to); k++) to = `_proto_${k}`;
    renamed.push({ from: c, to, index });
    return to;
  });
  return { columns: out, renamed };
}

function headerProblem(columns: readonly string[], display: string): void {
  const seen = new Set<string>();
  for (const [i, c] of columns.entries()) {
    if (c.trim() === '') throw new PopulationError(`${display}:1: column ${i + 1} of the header has no name`);
    if (seen.has(c)) throw new PopulationError(`${display}:1: column ${shownName(c, String(i + 1))} appears twice in the header`);
    seen.add(c);
  }
}

/** The bytes up to the end of the first row (a CSV record may span lines inside quotes). */
function firstRowBytes(fd: number, format: SourceFormat, display: string, maxRowBytes: number): Buffer | undefined {
  const chunks: Buffer[] = [];
  let total = 0;
  let quoted = false;
  let content = false;
  const block = Buffer.allocUnsafe(64 * 1024);
  for (;;) {
    const n = readSync(fd, block, 0, block.length, null);
    if (n === 0) break;
    for (let i = 0; i < n; i++) {
      const b = block[i]!;
      if (format === 'csv' && b === 0x22) quoted = !quoted;
      if (b === 0x0a && !quoted) {
        if (content) {
          chunks.push(Buffer.from(block.subarray(0, i)));
          return Buffer.concat(chunks);
        }
      } else if (b !== 0x0d && b !== 0x20 && b !== 0x09) content = true;
    }
    chunks.push(Buffer.from(block.subarray(0, n)));
    total += n;
    if (total > maxRowBytes) throw new PopulationError(`${display}:1: the first row is longer than ${formatBytes(maxRowBytes)}`);
  }
  return content ? Buffer.concat(chunks) : undefined;
}

/**
 * The columns of a source, from its first row only (the CSV header; the keys of the first JSONL
 * object), read synchronously: for `sop validate`, which must not read a 100k-row file. A column
 * named "__proto__" is kept under a safe name (safeColumns), listed in `renamed`.
 */
export function readHeader(file: string, o: SourceOptions = {}): ReturnType<typeof safeColumns> {
  const display = o.display ?? displayPath(file);
  const fd = openChecked(file, display, o.maxBytes ?? MAX_SOURCE_BYTES); // what the file is, before its name's format
  try {
    const format = formatOf(file, o.format);
    const bytes = firstRowBytes(fd, format, display, o.maxRowBytes ?? MAX_ROW_BYTES);
    if (!bytes)
      throw new PopulationError(`${display}: is empty: ${format === 'csv' ? 'a header row' : 'one JSON object a line'} is needed`);
    const text = bytes.toString('utf8');
    if (format === 'csv') {
      let records: string[][];
      try {
        records = csvSync().parse(text, { bom: true, to: 1, skip_empty_lines: true });
      } catch (err) {
        throw csvProblem(err, display);
      }
      const columns = records[0] ?? [];
      headerProblem(columns, display);
      return safeColumns(columns);
    }
    const line = firstLineNumber(text);
    return safeColumns(Object.keys(jsonObject(text.trim(), display, line)));
  } finally {
    closeSync(fd);
  }
}

/** The columns of a source (see readHeader). */
export function readColumns(file: string, o: SourceOptions = {}): string[] {
  return readHeader(file, o).columns;
}

function firstLineNumber(text: string): number {
  let line = 1;
  for (const ch of text) {
    if (ch === '\n') line++;
    else if (ch.trim() !== '') break;
  }
  return line;
}

/** What csv-parse found wrong, in words of our own: its messages quote the file's bytes. */
const CSV_PROBLEMS: Record<string, string> = {
  CSV_INVALID_OPENING_QUOTE: 'a quote opens inside a field',
  CSV_INVALID_CLOSING_QUOTE: 'a quote closes a field before its end',
  CSV_QUOTE_NOT_CLOSED: 'a quoted field is not closed',
  CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE: 'text after the closing quote of a field',
  CSV_MAX_RECORD_SIZE: `the row is longer than ${formatBytes(MAX_ROW_BYTES)}`,
  CSV_RECORD_INCONSISTENT_COLUMNS: 'the row has another number of fields than the header',
};

function csvProblem(err: unknown, display: string): PopulationError {
  const e = err as CsvError & { lines?: number; column?: number | string };
  if (typeof e?.code !== 'string' || !e.code.startsWith('CSV_'))
    return new PopulationError(`${display}: cannot be read (${(err as NodeJS.ErrnoException)?.code ?? 'not a CSV file'})`);
  const length = /^Invalid Record Length: expect (\d+), got (\d+)/.exec(e.message);
  const reason = length
    ? `has ${length[2]} field${length[2] === '1' ? '' : 's'}, the header has ${length[1]}`
    : (CSV_PROBLEMS[e.code] ?? `not valid CSV (${e.code})`);
  const field = typeof e.column === 'number' && e.code !== 'CSV_MAX_RECORD_SIZE' ? `, field ${e.column + 1}` : '';
  return new PopulationError(`${display}:${e.lines ?? '?'}: ${reason}${length ? '' : field}`);
}

function jsonObject(text: string, display: string, line: number): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    // the column and what was wrong, never the row's bytes (V8's message quotes them)
    throw new PopulationError(`${display}:${line}: not valid JSON (${describeJsonProblem(text, err).replace(/^line 1, /, '')})`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new PopulationError(`${display}:${line}: not a JSON object`);
  return v as Record<string, unknown>;
}

/** A JSONL row: scalars as they are, null as "" (an empty CSV cell); a list or object is refused. */
function jsonRow(obj: Record<string, unknown>, keys: readonly string[], columns: readonly string[], display: string, line: number): Row {
  const own = Object.keys(obj);
  const row: Row = {};
  for (const [i, k] of keys.entries()) {
    const c = columns[i]!;
    if (!Object.prototype.hasOwnProperty.call(obj, k))
      throw new PopulationError(
        `${display}:${line}: no ${shownName(k, `key ${i + 1} of the first line`)}: every line has the columns of the first (${listColumns(columns)})`,
      );
    const v = obj[k];
    if (v === null) row[c] = '';
    else if (typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v))) row[c] = v;
    else
      throw new PopulationError(
        `${display}:${line}: ${shownName(c, `key ${i + 1}`)} holds ${Array.isArray(v) ? 'a list' : 'an object'}; a value is a string, a number or true/false`,
      );
  }
  if (own.length !== keys.length) {
    const extra = own.find((k) => !keys.includes(k)) ?? '';
    throw new PopulationError(`${display}:${line}: ${shownName(extra, 'a key')} is not a key of the first line (${listColumns(columns)})`);
  }
  return row;
}

/** Lines of a byte stream, each at most `maxRowBytes`, with their 1-based numbers. */
async function* lines(stream: AsyncIterable<Buffer>, display: string, maxRowBytes: number): AsyncGenerator<[string, number]> {
  let rest: Buffer = Buffer.alloc(0);
  let line = 0;
  for await (const chunk of stream) {
    let buf = rest.length ? Buffer.concat([rest, chunk]) : chunk;
    let start = 0;
    for (let nl = buf.indexOf(0x0a, start); nl >= 0; nl = buf.indexOf(0x0a, start)) {
      line++;
      if (nl - start > maxRowBytes) throw new PopulationError(`${display}:${line}: the line is longer than ${formatBytes(maxRowBytes)}`);
      yield [buf.toString('utf8', start, nl), line];
      start = nl + 1;
    }
    buf = buf.subarray(start);
    if (buf.length > maxRowBytes) throw new PopulationError(`${display}:${line + 1}: the line is longer than ${formatBytes(maxRowBytes)}`);
    rest = Buffer.from(buf);
  }
  if (rest.length) yield [rest.toString('utf8'), line + 1];
}

/** The file's bytes as a stream, refused past the size cap (a file growing while read). */
async function* bytesOf(fd: number, display: string, maxBytes: number): AsyncGenerator<Buffer> {
  const stream = createReadStream('', { fd, highWaterMark: 64 * 1024 });
  let total = 0;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > maxBytes) throw new PopulationError(`${display}: is over the limit of ${formatBytes(maxBytes)}`);
      yield chunk;
    }
  } finally {
    stream.destroy();
  }
}

/** The lines of an open file (from openChecked) with their 1-based numbers; the fd is closed at the end. */
export function fileLines(
  fd: number,
  display: string,
  maxBytes = MAX_SOURCE_BYTES,
  maxRowBytes = MAX_ROW_BYTES,
): AsyncGenerator<[string, number]> {
  return lines(bytesOf(fd, display, maxBytes), display, maxRowBytes);
}

/** Rows of a file with their line numbers; the first row gives the columns. No id checks. */
export async function* readRows(
  file: string,
  o: SourceOptions = {},
): AsyncGenerator<{ row: Row; line: number; columns: readonly string[] }> {
  const display = o.display ?? displayPath(file);
  const maxRowBytes = o.maxRowBytes ?? MAX_ROW_BYTES;
  const fd = openChecked(file, display, o.maxBytes ?? MAX_SOURCE_BYTES); // what the file is, before its name's format
  let format: SourceFormat;
  try {
    format = formatOf(file, o.format);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  let columns: string[] | undefined;
  let keys: string[] | undefined;
  if (format === 'jsonl') {
    for await (const [text, line] of lines(bytesOf(fd, display, o.maxBytes ?? MAX_SOURCE_BYTES), display, maxRowBytes)) {
      const trimmed = text.trim();
      if (trimmed === '') continue;
      const obj = jsonObject(trimmed, display, line);
      if (!columns || !keys) {
        keys = Object.keys(obj);
        if (keys.length === 0) throw new PopulationError(`${display}:${line}: the first object has no keys, so no columns`);
        columns = safeColumns(keys).columns;
      }
      yield { row: jsonRow(obj, keys, columns, display, line), line, columns };
    }
  } else {
    const parser = csvStream().parse({ bom: true, skip_empty_lines: true, info: true, max_record_size: maxRowBytes });
    const maxBytes = o.maxBytes ?? MAX_SOURCE_BYTES;
    const stream = createReadStream('', { fd, highWaterMark: 64 * 1024 });
    let total = 0;
    stream.on('data', (chunk) => {
      total += chunk.length;
      if (total > maxBytes) parser.destroy(new PopulationError(`${display}: is over the limit of ${formatBytes(maxBytes)}`));
    });
    stream.on('error', (err) => parser.destroy(err));
    stream.pipe(parser);
    try {
      for await (const { record, info } of parser as AsyncIterable<{ record: string[]; info: { lines: number } }>) {
        if (!columns) {
          headerProblem(record, display);
          columns = safeColumns(record).columns;
          continue;
        }
        const row: Row = {};
        for (let i = 0; i < columns.length; i++) row[columns[i]!] = cellValue(record[i]!);
        yield { row, line: info.lines, columns };
      }
    } catch (err) {
      if (err instanceof PopulationError) throw err;
      throw csvProblem(err, display);
    } finally {
      stream.destroy();
      parser.destroy();
    }
  }
  if (!columns)
    throw new PopulationError(`${display}: is empty: ${format === 'csv' ? 'a header row' : 'one JSON object a line'} is needed`);
}

/**
 * The rows of a population file, each with its id (the `idColumn` value, as text): a missing id
 * column, an empty id or an id seen before is refused with file:line.
 */
export async function* streamSource(file: string, idColumn: string, o: SourceOptions = {}): AsyncGenerator<SourceRow> {
  const display = o.display ?? displayPath(file);
  const seen = new Map<string, number>();
  let index = 0;
  for await (const { row, line, columns } of readRows(file, { ...o, display })) {
    if (index === 0 && !columns.includes(idColumn))
      throw new PopulationError(`${display}:1: no id column "${idColumn}" (${listColumns(columns)})`);
    const id = String(row[idColumn]);
    if (id === '') throw new PopulationError(`${display}:${line}: the id ("${idColumn}") is empty`);
    const first = seen.get(id);
    if (first !== undefined)
      throw new PopulationError(`${display}:${line}: duplicate id ${shownName(id, `(the id of line ${first})`)} (first on line ${first})`);
    seen.set(id, line);
    yield { id, row, line, index: index++ };
  }
  if (index === 0) throw new PopulationError(`${display}: has a header row but no rows`);
}
