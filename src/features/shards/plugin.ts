// The shards feature's plugin (docs/scale.md#one-step-over-many-workers): with `sop run
// --shard-over REDIS` (the API's `shardOver`), the calls of every population step go to `sop
// worker --shards` processes instead of this process's provider (the `dispatch` hook).
import { definePlugin, type PluginMaker } from '../../core/runtime/hooks.js';
import { ShardDispatch } from './dispatch.js';
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
      let dispatch: ShardDispatch | undefined;
      return {
        dispatch() {
          dispatch ??= new ShardDispatch({
            url: o.url,
            size: o.size ?? DEFAULT_SHARD_SIZE,
            secret: o.secret,
            runId: ctx.runId,
            warn: (message) => ctx.emit({ type: 'warning', message }),
            redact: ctx.redact,
          });
          return dispatch;
        },
        async close() {
          await dispatch?.close();
        },
      };
    },
  });
}
