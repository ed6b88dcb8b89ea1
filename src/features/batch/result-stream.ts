// A batch's result files read as a stream, line by line (docs/population.md#batch-mode): a result
// file is a server's reply, as large as it likes, so it is never held whole. Each line is handed
// on as it is complete; a line longer than `maxLineBytes`, or a file longer than `maxFileBytes`,
// ends the reading with one line saying which (never V8's "Cannot create a string longer than").
import { LlmError } from '../../core/llm/types.js';
import { formatBytes } from '../../shared/io/read-input-file.js';

/** The longest result line read: a reply is at most 512 KiB (DEFAULT_MAX_REPLY_BYTES), JSON-escaped and wrapped. */
export const MAX_RESULT_LINE_BYTES = 8 * 1024 * 1024;
/** The largest result file read (output and error files each): 50,000 requests of 40 KiB. */
export const MAX_RESULT_FILE_BYTES = 2 * 1024 * 1024 * 1024;

export interface LineCaps {
  maxLineBytes?: number;
  maxFileBytes?: number;
}

export interface ReadLinesOptions extends LineCaps {
  /** The file, for the messages ("file file-abc of batch batch_1"). */
  what: string;
  /** A last line with no line break after it: handed on (a file that ends without one), or left (a file still being written). */
  partialLast: 'line' | 'ignore';
}

/** Hands each line of `chunks` to `onLine` as it is complete. */
export async function readLines(chunks: AsyncIterable<Uint8Array>, onLine: (line: string) => void, o: ReadLinesOptions): Promise<void> {
  const maxLine = o.maxLineBytes ?? MAX_RESULT_LINE_BYTES;
  const maxFile = o.maxFileBytes ?? MAX_RESULT_FILE_BYTES;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let total = 0;
  let lineNo = 0;
  const tooLong = () =>
    new LlmError(`${o.what}: line ${lineNo + 1} is longer than ${formatBytes(maxLine)}; the result file is not read further`);
  for await (const chunk of chunks) {
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    total += buf.length;
    if (total > maxFile) throw new LlmError(`${o.what} is larger than ${formatBytes(maxFile)}; the result file is not read further`);
    let start = 0;
    for (let nl = buf.indexOf(10, start); nl !== -1; nl = buf.indexOf(10, start)) {
      const part = buf.subarray(start, nl);
      if (pendingBytes + part.length > maxLine) throw tooLong();
      const line = pendingBytes > 0 ? Buffer.concat([...pending, part]).toString('utf8') : part.toString('utf8');
      pending = [];
      pendingBytes = 0;
      lineNo++;
      onLine(line);
      start = nl + 1;
    }
    if (start < buf.length) {
      const rest = buf.subarray(start);
      if (pendingBytes + rest.length > maxLine) throw tooLong();
      pending.push(Buffer.from(rest)); // a copy: the chunk's memory may be reused
      pendingBytes += rest.length;
    }
  }
  if (pendingBytes > 0 && o.partialLast === 'line') {
    lineNo++;
    onLine(Buffer.concat(pending).toString('utf8'));
  }
}
