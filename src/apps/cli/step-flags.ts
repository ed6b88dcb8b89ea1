// The flags of how a population step's LLM calls go out, shared by sop run, resume and fork:
// at once under --concurrency, in shards over sop workers (--shard-over), or as one batch file
// (--llm-mode batch). Resume and fork default to what the run was started with. And the CPU
// threads of a model run in this process (--local-threads, as SOP_LOCAL_THREADS).
import type { Argv } from 'yargs';
import type { StepScaleOptions } from '../../api/options.js';
import { EngineError } from '../../shared/errors.js';

export function stepFlags<T>(y: Argv<T>, continued: boolean) {
  const asStarted = (fresh: string) => (continued ? 'as the run was started' : fresh);
  return y
    .option('concurrency', {
      type: 'number',
      describe: `Population states: LLM calls a step makes at once (default: ${asStarted('64')}; results never depend on it); the most, as calls at once adapt to 429s and rate-limit headers`,
    })
    .option('shard-over', {
      type: 'string',
      describe:
        "Population states: send each step's LLM calls, in shards, to sop worker --shards processes on this Redis (redis:// or rediss://[USER:PASSWORD@]HOST:PORT); needs SOP_QUEUE_SECRET (results never depend on the workers)",
    })
    .option('shard-size', { type: 'number', describe: 'With --shard-over: LLM calls per shard job (default 1000)' })
    .option('llm-mode', {
      type: 'string',
      choices: ['direct', 'batch'] as const,
      describe: `Population states: batch sends each step's calls as one batch file (OpenAI Batch API at batch prices, or vllm run-batch), direct one request each (default: ${asStarted("each state's llm_mode, else direct")})`,
    })
    .option('batch-target', {
      type: 'string',
      choices: ['openai', 'vllm'] as const,
      describe: `Batch mode: openai (the Batch API of the run's server) or vllm (writes RUN/batches/*.input.jsonl and waits for the output file of the vllm run-batch command it prints) (default: ${asStarted('openai')})`,
    })
    .option('batch-poll', {
      type: 'number',
      describe: `Batch mode: the longest wait between two polls of a batch, in seconds (default: ${asStarted('60')})`,
    })
    .option('local-threads', {
      type: 'number',
      describe:
        '--llm local: CPU threads of the model (as SOP_LOCAL_THREADS; default: the cores but one, at least 1, so other work does not stall its spinning threads)',
    });
}

/** --local-threads: the threads of every local model this process loads (SOP_LOCAL_THREADS, which it sets). */
function useLocalThreads(n: number | undefined): void {
  if (n === undefined) return;
  if (!Number.isInteger(n) || n < 1) throw new EngineError(`--local-threads must be a whole number above 0 (got ${String(n)})`, 'OPTION');
  process.env.SOP_LOCAL_THREADS = String(n);
}

/** The step flags as options (--local-threads is set for the process's local models now). */
export function stepArgs(a: {
  'local-threads'?: number;
  concurrency?: number;
  'shard-over'?: string;
  'shard-size'?: number;
  'llm-mode'?: 'direct' | 'batch';
  'batch-target'?: 'openai' | 'vllm';
  'batch-poll'?: number;
}): StepScaleOptions {
  useLocalThreads(a['local-threads']);
  return {
    concurrency: a.concurrency,
    shardOver: a['shard-over'],
    shardSize: a['shard-size'],
    llmMode: a['llm-mode'],
    batchTarget: a['batch-target'],
    batchPollMs: a['batch-poll'] !== undefined ? a['batch-poll'] * 1000 : undefined,
  };
}
