// Where a batch goes: the OpenAI Batch API (./openai-target.ts) or a file for `vllm run-batch`
// (./vllm-target.ts). A target submits the batch file once (the dispatch journals what it returns,
// so a resumed run polls the same batch) and then says, each time it is asked, how the batch stands.
import type { StepRef } from '../../core/runtime/call-many.js';

/** What a submission returns, journaled as the batch effect's result (JSON). */
export interface Submitted {
  target: 'openai' | 'vllm';
  /** The batch id (openai), or the output file (vllm). */
  id: string;
  /** openai: the uploaded input file's id; vllm: the input file. */
  input: string;
  /** vllm: the command the user runs. */
  command?: string;
}

/** How a batch stands at a poll. */
export interface BatchStatus {
  status: string;
  completed?: number;
  failed?: number;
  /**
   * The batch is over: `read` hands on its result lines (output and error files) one at a time, as
   * they are read (a file is never held whole), and, when it did not complete (failed, expired,
   * cancelled), `problem` says why: its requests without a result fail with that.
   */
  ended?: { read(onLine: (line: string) => void): Promise<void>; problem?: string };
}

export interface BatchTarget {
  readonly name: Submitted['target'];
  /** Sends (or writes) the batch file of a step; `models`: the models its requests name. */
  submit(file: string, step: StepRef, models: readonly string[]): Promise<Submitted>;
  /** How the batch stands; `ids`: the custom_ids the step waits for. */
  poll(batch: Submitted, ids: ReadonlySet<string>, signal?: AbortSignal): Promise<BatchStatus>;
}

/** A file name of the step (the batch file's, the upload's), of safe characters. */
export const safeName = (step: StepRef): string => `${step.state.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 80)}-${step.visit}-${step.step}`;

/** Whether a journaled value is a submission of `target`. */
export function isSubmitted(v: unknown, target: Submitted['target']): v is Submitted {
  if (typeof v !== 'object' || v === null) return false;
  const s = v as Record<string, unknown>;
  return s.target === target && typeof s.id === 'string' && typeof s.input === 'string';
}
