// `vllm run-batch` as a batch target: the step's batch file is written to
// RUN/batches/STATE-VISIT-STEP.input.jsonl and the user is told the command that answers it
// (`vllm run-batch -i IN -o OUT --model M`); sop never runs it (a SOP does not make us run
// things). The batch is over once OUT holds a result line for every request of the step.
import { opt, say } from '../../shared/errors.js';
import { createReadStream, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';
import { LlmError } from '../../core/llm/types.js';
import type { StepRef } from '../../core/runtime/call-many.js';
import { isObject } from '../../shared/util/is-object.js';
import { formatBytes } from '../../shared/io/read-input-file.js';
import { MAX_RESULT_FILE_BYTES, readLines, type LineCaps } from './result-stream.js';
import { safeName, type BatchStatus, type BatchTarget, type Submitted } from './target.js';

export class VllmBatchTarget implements BatchTarget {
  readonly name = 'vllm';

  constructor(
    /** The run folder (the files go to its batches/ folder). */
    private readonly dir: string,
    /** The longest result line and output file read (default 8 MiB and 2 GiB). */
    private readonly caps: LineCaps = {},
  ) {}

  async submit(file: string, step: StepRef, models: readonly string[]): Promise<Submitted> {
    if (models.length !== 1)
      throw new LlmError(
        say`${opt('batchTarget', { set: 'vllm' })}: vllm run-batch serves one model, and the calls of state "${step.state}" step ${step.step} name ${models.length} (${models.join(', ')})`,
      );
    const folder = join(this.dir, 'batches');
    mkdirSync(folder, { recursive: true });
    const name = safeName(step);
    const input = join(folder, `${name}.input.jsonl`);
    const output = join(folder, `${name}.output.jsonl`);
    writeFileAtomic(input, file);
    return {
      target: 'vllm',
      id: output,
      input,
      command: `vllm run-batch -i ${quote(input)} -o ${quote(output)} --model ${quote(models[0]!)}`,
    };
  }

  async poll(batch: Submitted, ids: ReadonlySet<string>): Promise<BatchStatus> {
    const st = statSync(batch.id, { throwIfNoEntry: false });
    if (!st) return { status: 'waiting' };
    // a named pipe or a device would block or never end: only a regular file is read
    if (!st.isFile()) throw new LlmError(`${batch.id} is not a regular file; not read`);
    const max = this.caps.maxFileBytes ?? MAX_RESULT_FILE_BYTES;
    if (st.size > max) throw new LlmError(`${batch.id} is larger than ${formatBytes(max)}; not read`);
    // whole lines only, read as a stream: a line being written is read at the next poll
    const read = (onLine: (line: string) => void) =>
      readLines(createReadStream(batch.id), onLine, { what: batch.id, partialLast: 'ignore', ...this.caps });
    const seen = new Set<string>();
    await read((line) => {
      if (!line.includes('custom_id')) return;
      try {
        const data: unknown = JSON.parse(line);
        if (isObject(data) && typeof data.custom_id === 'string' && ids.has(data.custom_id)) seen.add(data.custom_id);
      } catch {
        // not a result line: BatchResults counts it once the batch is over
      }
    });
    if (seen.size < ids.size) return { status: 'writing', completed: seen.size };
    return { status: 'completed', completed: seen.size, ended: { read } };
  }
}

/** A word for a POSIX shell: as it is when it is plain, else in single quotes. */
function quote(word: string): string {
  return /^[A-Za-z0-9_./:=@+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
