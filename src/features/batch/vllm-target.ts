// `vllm run-batch` as a batch target: the step's batch file is written to
// RUN/batches/STATE-VISIT-STEP.input.jsonl and the user is told the command that answers it
// (`vllm run-batch -i IN -o OUT --model M`); sop never runs it (a SOP does not make us run
// things). The batch is over once OUT holds a result line for every request of the step.
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';
import { LlmError } from '../../core/llm/types.js';
import type { StepRef } from '../../core/runtime/call-many.js';
import { isObject } from '../../shared/util/is-object.js';
import { safeName, type BatchStatus, type BatchTarget, type Submitted } from './target.js';

/** The largest output file read (a step of many agents: tens of MiB). */
const MAX_OUTPUT_BYTES = 512 * 1024 * 1024;

export class VllmBatchTarget implements BatchTarget {
  readonly name = 'vllm';

  constructor(
    /** The run folder (the files go to its batches/ folder). */
    private readonly dir: string,
  ) {}

  async submit(file: string, step: StepRef, models: readonly string[]): Promise<Submitted> {
    if (models.length !== 1)
      throw new LlmError(
        `options.batchTarget vllm: vllm run-batch serves one model, and the calls of state "${step.state}" step ${step.step} name ${models.length} (${models.join(', ')})`,
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
    if (!existsSync(batch.id)) return { status: 'waiting' };
    const size = statSync(batch.id).size;
    if (size > MAX_OUTPUT_BYTES) throw new LlmError(`${batch.id} is larger than ${MAX_OUTPUT_BYTES} bytes; not read`);
    const text = readFileSync(batch.id, 'utf8');
    // whole lines only: a line being written is read at the next poll
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    const seen = new Set<string>();
    for (const line of whole.split('\n')) {
      try {
        const data: unknown = JSON.parse(line);
        if (isObject(data) && typeof data.custom_id === 'string' && ids.has(data.custom_id)) seen.add(data.custom_id);
      } catch {
        // not a whole result line
      }
    }
    if (seen.size < ids.size) return { status: 'writing', completed: seen.size };
    return { status: 'completed', completed: seen.size, ended: { text: whole } };
  }
}

/** A word for a POSIX shell: as it is when it is plain, else in single quotes. */
function quote(word: string): string {
  return /^[A-Za-z0-9_./:=@+-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
