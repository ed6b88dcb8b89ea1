// The shards feature's plugin (docs/scale.md#one-step-over-many-workers): with `sop run
// --shard-over REDIS` (the API's `shardOver`), the calls of every population step go to `sop
// worker --shards` processes instead of this process's provider (the `dispatch` hook).
import type { CallDispatch } from '../../core/runtime/call-many.js';
import { definePlugin, type PluginMaker } from '../../core/runtime/hooks.js';
import type { ShardDispatch } from './dispatch.js';
import { DEFAULT_SHARD_SIZE } from './job.js';

export interface ShardOptions {
  /** Redis of the shard queue: redis:// or rediss://[USER:PASSWORD@]HOST:PORT. */
  url: string;
  /** Calls per shard job (default 1000). */
  size?: number;
  /** SOP_QUEUE_SECRET: shard jobs are signed with it, and workers refuse others. */
  secret: string;
}

export function shardsPlugin(o: ShardOptions): PluginMaker {
  return definePlugin({
    name: 'shards',
    make(ctx) {
      // the dispatch's module (BullMQ and ioredis) is imported at the first step a run sends
      let loaded: Promise<ShardDispatch> | undefined;
      const load = () =>
        (loaded ??= import('./dispatch.js').then(
          (m) =>
            new m.ShardDispatch({
              url: o.url,
              size: o.size ?? DEFAULT_SHARD_SIZE,
              secret: o.secret,
              runId: ctx.runId,
              warn: (message) => ctx.emit({ type: 'warning', message }),
              redact: ctx.redact,
            }),
        ));
      const dispatch: CallDispatch = {
        name: 'shards',
        outlivesRun: true, // as ShardDispatch: replies workers stored in Redis outlive a killed run
        send: async (calls, step, signal) => (await load()).send(calls, step, signal),
      };
      return {
        dispatch: () => dispatch,
        async close() {
          await (await loaded)?.close();
        },
      };
    },
  });
}
