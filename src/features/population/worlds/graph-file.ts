// Reading an edge-list file (the I/O edge of the social world's graph): CSV streamed line by
// line, so a large file is never held twice; JSON parsed whole.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { edgeFromCsvLine, GraphError, parseEdgeList } from './graph.js';

/** The pairs of a `.csv` (or any other extension) or `.json` edge list. */
export async function readEdgeListFile(path: string): Promise<Array<[string, string]>> {
  try {
    if (path.toLowerCase().endsWith('.json')) return parseEdgeList(await readFile(path, 'utf8'), 'json');
    const out: Array<[string, string]> = [];
    const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
    let first = true;
    for await (const line of lines) {
      edgeFromCsvLine(line, first, out);
      if (line.trim() !== '') first = false;
    }
    return out;
  } catch (e) {
    if (e instanceof GraphError) throw new GraphError(`${path}: ${e.message}`);
    const code = (e as NodeJS.ErrnoException).code;
    throw new GraphError(
      code === 'ENOENT' ? `edge list file not found: ${path}` : `cannot read edge list ${path}: ${(e as Error).message}`,
    );
  }
}
