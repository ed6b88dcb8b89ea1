// The batch feature's plugin (docs/population.md#batch-mode): the calls of a population step go
// out as one batch file, to the OpenAI Batch API (at batch prices) or to `vllm run-batch`, when
// the run was given --llm-mode batch or the state says "llm_mode": "batch". It answers the
// `dispatch` hook (src/core/runtime/hooks.ts); the core journals and counts each reply as usual.
import { EngineError, opt, say } from '../../shared/errors.js';
import { definePlugin, type PluginMaker } from '../../core/runtime/hooks.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import { BatchDispatch } from './dispatch.js';
import type { BatchServer } from './openai-target.js';
import { runUsesBatch, stateMode, type BatchOptions } from './options.js';
import type { BatchTarget } from './target.js';
import { VllmBatchTarget } from './vllm-target.js';

export { checkBatchOptions, runUsesBatch, sopAsksBatch, type BatchOptions, type BatchTargetName, type LlmMode } from './options.js';

/** The OpenAI Batch API target, its module (and the openai client) imported at the first batch a run sends. */
function openAiTarget(server: BatchServer, runId: string): BatchTarget {
  let loaded: Promise<BatchTarget> | undefined;
  const target = () => (loaded ??= import('./openai-target.js').then((m) => new m.OpenAiBatchTarget(server, runId)));
  return {
    name: 'openai',
    submit: async (file, step, models) => (await target()).submit(file, step, models),
    poll: async (batch, ids, signal) => (await target()).poll(batch, ids, signal),
  };
}

export function batchPlugin(options: BatchOptions = {}): PluginMaker {
  return definePlugin({
    name: 'batch',
    uses: (sop) => runUsesBatch(sop, options),
    make(ctx) {
      let target: BatchTarget | undefined;
      const targetOf = (): BatchTarget => {
        if (target) return target;
        if (options.target === 'vllm') {
          if (!options.runDir)
            throw new EngineError(
              say`${opt('batchTarget', { set: 'vllm' })} writes its batch files to the run folder: give ${opt('out')}`,
              'OPTION',
            );
          return (target = new VllmBatchTarget(options.runDir));
        }
        if (!options.server)
          throw new EngineError(
            say`batch mode sends batches to an OpenAI-compatible server: run with ${opt('llm', { set: 'openai' })}, or write vllm files with ${opt('batchTarget', { set: 'vllm' })}`,
            'OPTION',
          );
        return (target = openAiTarget(options.server, ctx.runId));
      };
      return {
        dispatch(state: ResolvedState) {
          const mode = options.mode ?? stateMode(state.def) ?? 'direct';
          if (mode !== 'batch') return undefined;
          return new BatchDispatch(ctx, {
            target: targetOf(),
            ...(options.pollCapMs !== undefined ? { pollCapMs: options.pollCapMs } : {}),
            ...(options.stop ? { stop: options.stop } : {}),
          });
        },
      };
    },
  });
}
