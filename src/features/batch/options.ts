// The batch feature's options and the checks made before a run starts (light: no batch target
// is loaded; the plugin, ./plugin.ts, is loaded when a run starts).
import { EngineError, opt, say } from '../../shared/errors.js';
import type { Sop } from '../../format/sop/types.js';
import type { BatchServer } from './openai-target.js';

export type LlmMode = 'direct' | 'batch';
export type BatchTargetName = 'openai' | 'vllm';

export interface BatchOptions {
  /** --llm-mode: batch for every population state, direct for none; unset: each state's own `llm_mode`. */
  mode?: LlmMode;
  /** Where batches go (default openai). */
  target?: BatchTargetName;
  /** openai: the run's server and key; unset when the run's provider is not openai. */
  server?: BatchServer;
  /** vllm: the run folder (its batches/ folder holds the files). */
  runDir?: string;
  /** The longest wait between two polls, ms (default 60 s). */
  pollCapMs?: number;
  /** Aborted by the user's Ctrl-C: the wait for a batch ends, resumably (`sop resume` waits again). */
  stop?: AbortSignal;
}

/** A state's own llm_mode (the SOP's schema allows it on population states). */
export const stateMode = (def: unknown): LlmMode | undefined => {
  const m = (def as { llm_mode?: unknown }).llm_mode;
  return m === 'batch' || m === 'direct' ? m : undefined;
};

/** Whether a SOP has a state whose calls go in batches without --llm-mode. */
export const sopAsksBatch = (sop: Sop): boolean => Object.values(sop.states).some((s) => stateMode(s) === 'batch');

/** Whether a run's calls go in batches anywhere: --llm-mode batch, or a state's llm_mode without --llm-mode. */
export const runUsesBatch = (sop: Sop, options: BatchOptions): boolean =>
  options.mode === 'batch' || (options.mode === undefined && sopAsksBatch(sop));

/** The batch options of a run, checked before it starts: a bad value or a target the run cannot reach is told now. */
export function checkBatchOptions(sop: Sop, options: BatchOptions): void {
  if (options.mode !== undefined && options.mode !== 'direct' && options.mode !== 'batch')
    throw new EngineError(say`${opt('llmMode')} must be "direct" or "batch" (got ${JSON.stringify(options.mode)})`, 'OPTION');
  if (options.target !== undefined && options.target !== 'openai' && options.target !== 'vllm')
    throw new EngineError(say`${opt('batchTarget')} must be "openai" or "vllm" (got ${JSON.stringify(options.target)})`, 'OPTION');
  if (options.pollCapMs !== undefined && !(Number.isFinite(options.pollCapMs) && options.pollCapMs > 0))
    throw new EngineError(
      say`${opt('batchPollMs')} must be a number of ${opt('batchPollMs', { form: 'unit', api: 'milliseconds' })} above 0 (got ${opt('batchPollMs', { form: 'value', set: String(options.pollCapMs) })})`,
      'OPTION',
    );
  if (!runUsesBatch(sop, options)) return;
  if ((options.target ?? 'openai') === 'openai' && !options.server)
    throw new EngineError(
      say`batch mode (${opt('llmMode', { set: 'batch' })}, or a state's "llm_mode": "batch") sends batches to an OpenAI-compatible server: run with ${opt('llm', { set: 'openai' })}, or write vllm files with ${opt('batchTarget', { set: 'vllm' })}`,
      'OPTION',
    );
  if (options.target === 'vllm' && !options.runDir)
    throw new EngineError(
      say`${opt('batchTarget', { set: 'vllm' })} writes its batch files to the run folder: give ${opt('out')}`,
      'OPTION',
    );
}
