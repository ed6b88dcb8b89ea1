// Reading an edge-list file (the I/O edge of the social world's graph) through the safe input
// reader, as population files are (../source.ts): a regular file under a size cap, never a FIFO
// or a device (/dev/zero, or a .csv symlink to it, is refused in one line before it is read), in
// UTF-8. CSV is streamed line by line, so a large file is never held twice; JSON parsed whole,
// under a smaller cap. An error names the file and the line, never quotes its bytes.
import { closeSync, readSync } from 'node:fs';
import { MAX_SOURCE_BYTES, fileLines, openChecked } from '../source.js';
import { PopulationError } from '../types.js';
import { formatBytes } from '../../../shared/io/read-input-file.js';
import { edgeFromCsvLine, GraphError, parseEdgeList } from './graph.js';

/** A CSV edge list may be as large as a population file (1 GiB); a JSON one is parsed whole (at most 256 MiB). */
export const MAX_EDGE_LIST_BYTES = MAX_SOURCE_BYTES;
export const MAX_JSON_EDGE_LIST_BYTES = 256 * 1024 * 1024;

function readAll(fd: number, display: string, max: number): string {
  const chunks: Buffer[] = [];
  let total = 0;
  const block = Buffer.allocUnsafe(1024 * 1024);
  for (;;) {
    const n = readSync(fd, block, 0, block.length, null);
    if (n === 0) break;
    total += n;
    if (total > max) throw new GraphError(`${display}: is over the limit of ${formatBytes(max)} for a JSON edge list`);
    chunks.push(Buffer.from(block.subarray(0, n)));
  }
  return Buffer.concat(chunks, total).toString('utf8');
}

/**
 * The pairs of a `.csv` (or any other extension) or `.json` edge list; `display` is the file as
 * the SOP names it. GraphError with one line otherwise.
 */
export async function readEdgeListFile(path: string, display: string = path): Promise<Array<[string, string]>> {
  const json = path.toLowerCase().endsWith('.json');
  let fd: number;
  try {
    fd = openChecked(path, display, json ? MAX_JSON_EDGE_LIST_BYTES : MAX_EDGE_LIST_BYTES, 'an edge list file');
  } catch (e) {
    if (e instanceof PopulationError) throw new GraphError(`edge list ${e.message}`);
    throw e;
  }
  if (json) {
    try {
      return parseEdgeList(readAll(fd, display, MAX_JSON_EDGE_LIST_BYTES), 'json');
    } catch (e) {
      if (e instanceof GraphError) throw new GraphError(`${display}: ${e.message}`);
      throw e;
    } finally {
      closeSync(fd);
    }
  }
  const out: Array<[string, string]> = [];
  let first = true;
  let at = 0;
  try {
    for await (const [line, n] of fileLines(fd, display)) {
      at = n;
      edgeFromCsvLine(line, first, out);
      if (line.trim() !== '') first = false;
    }
  } catch (e) {
    if (e instanceof PopulationError) throw new GraphError(`edge list ${e.message}`);
    if (e instanceof GraphError) throw new GraphError(`${display}:${at}: ${e.message}`);
    throw e;
  }
  return out;
}

/**
 * Why an edge-list file cannot be read (for `sop validate`, which does not read it): not found, a
 * FIFO, a device, a folder, over the cap, not UTF-8 text; undefined when it can be.
 */
export function edgeListFileProblem(path: string, display: string = path): string | undefined {
  const json = path.toLowerCase().endsWith('.json');
  try {
    closeSync(openChecked(path, display, json ? MAX_JSON_EDGE_LIST_BYTES : MAX_EDGE_LIST_BYTES, 'an edge list file'));
    return undefined;
  } catch (e) {
    if (e instanceof PopulationError) return `edge list ${e.message}`;
    throw e;
  }
}
