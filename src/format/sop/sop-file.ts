// Loading a SOP file: read, parse (with positions), validate (schema + graph), or fail with
// one-line diagnostics naming the file, the JSON pointer and, where known, line and column.
import { SopError, type Diagnostic } from './diagnostics.js';
import { JsonSyntaxError, locatePointer, parseJson } from './json-source.js';
import type { Sop } from './types.js';
import { graphDiagnostics, schemaDiagnostics, type SopCheck } from './validate.js';
import { staticDiagnostics } from './check-static.js';
import { applyCast } from './cast.js';
import { InputFileError, readInputFile } from '../../shared/io/read-input-file.js';

export const MAX_SOP_BYTES = 5 * 1024 * 1024;
const MAX_DEPTH = 64;

export interface LoadedSop {
  sop: Sop;
  file: string;
  warnings: Diagnostic[];
}

/** What the layers above pass into loading: their checks, and a converter for other formats. */
export interface LoadOptions {
  checks?: readonly SopCheck[];
  /** A document in another format (e.g. an Agents 1.0 config), converted and validated; undefined: not that format. */
  convert?(doc: unknown, file: string, text: string): LoadedSop | undefined;
}

function depthExceeds(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > limit) return true;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return false;
}

/** Diagnostics with file, line and column (falling back to the parent of a missing pointer). */
/**
 * At most this many diagnostics are reported (and located, each a scan of the text): a huge
 * broken file gets its first problems and a count, not minutes of work.
 */
export const MAX_DIAGNOSTICS = 50;

export function capDiagnostics(diags: Diagnostic[]): Diagnostic[] {
  if (diags.length <= MAX_DIAGNOSTICS) return diags;
  const ordered = [...diags.filter((d) => d.severity === 'error'), ...diags.filter((d) => d.severity !== 'error')];
  const kept = ordered.slice(0, MAX_DIAGNOSTICS);
  const rest = ordered.length - kept.length;
  return [
    ...kept,
    {
      severity: kept[0]!.severity,
      pointer: '',
      message: `and ${rest} more problem${rest > 1 ? 's' : ''} (only the first ${MAX_DIAGNOSTICS} are shown)`,
    },
  ];
}

export function locate(diags: Diagnostic[], text: string, file: string): Diagnostic[] {
  return capDiagnostics(diags).map((d) => {
    let position = locatePointer(text, d.pointer);
    if (!position && d.pointer) position = locatePointer(text, d.pointer.slice(0, d.pointer.lastIndexOf('/')));
    return { ...d, file, position };
  });
}

/** Validate an already parsed document; `text` (when known) gives line and column. */
export function validateSopDocument(doc: unknown, file: string, text?: string, checks: readonly SopCheck[] = []): LoadedSop {
  const place = (diags: Diagnostic[]) =>
    text === undefined ? capDiagnostics(diags).map((d) => ({ ...d, file })) : locate(diags, text, file);
  if (depthExceeds(doc, MAX_DEPTH)) {
    throw new SopError([{ severity: 'error', pointer: '', file, message: `nested more than ${MAX_DEPTH} levels deep` }]);
  }
  const schemaErrors = schemaDiagnostics(doc);
  if (schemaErrors.length > 0) throw new SopError(place(schemaErrors));
  const cast = applyCast(doc as Sop); // states' cast into the agents' roles (cast.ts)
  if (cast.problems.length > 0) throw new SopError(place(cast.problems));
  const sop = cast.sop;
  const graph = place([...graphDiagnostics(sop, checks, file), ...staticDiagnostics(sop)]); // templates, file names: check-static.ts
  if (graph.some((d) => d.severity === 'error')) throw new SopError(graph);
  return { sop, file, warnings: graph.filter((d) => d.severity === 'warning') };
}

export function parseSopText(text: string, file: string): unknown {
  try {
    return parseJson(text);
  } catch (err) {
    if (err instanceof JsonSyntaxError) {
      throw new SopError([{ severity: 'error', pointer: '', file, position: err.position, message: err.message }]);
    }
    throw err;
  }
}

export function readSopText(file: string): string {
  try {
    // files: a regular file under the cap; a device, FIFO or directory is refused, never read
    return readInputFile(file, { maxBytes: MAX_SOP_BYTES, what: 'a SOP file' });
  } catch (err) {
    if (!(err instanceof InputFileError)) throw err;
    throw new SopError([{ severity: 'error', pointer: '', file, message: err.reason }]);
  }
}

export function loadSopFile(file: string, options: LoadOptions = {}): LoadedSop {
  const text = readSopText(file);
  const doc = parseSopText(text, file);
  return options.convert?.(doc, file, text) ?? validateSopDocument(doc, file, text, options.checks);
}
