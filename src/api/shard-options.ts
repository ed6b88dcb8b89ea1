// The shard options of a run (`shardOver`, `shardSize`; sop run --shard-over, --shard-size), checked
// before anything starts: a bad Redis URL, a bad size or no SOP_QUEUE_SECRET is told in one line.
import { EngineError } from '../shared/errors.js';
import type { ShardOptions } from '../features/shards/plugin.js';
import { queueSecret } from '../shared/util/job-signature.js';
import { configureSecrets } from '../shared/util/redact.js';
import { parseRedisUrl } from '../shared/util/redis-url.js';
import type { RunSopOptions } from './options.js';

export function shardOptionsOf(o: Pick<RunSopOptions, 'shardOver' | 'shardSize'>): ShardOptions | undefined {
  if (o.shardOver === undefined) {
    if (o.shardSize !== undefined) throw new EngineError('--shard-size needs --shard-over REDIS_URL', 'OPTION');
    return undefined;
  }
  if (o.shardSize !== undefined && !(Number.isInteger(o.shardSize) && o.shardSize >= 1))
    throw new EngineError(`--shard-size must be a whole number of calls, at least 1 (got ${o.shardSize})`, 'OPTION');
  parseRedisUrl(o.shardOver, '--shard-over');
  configureSecrets({ urls: [o.shardOver] }); // a password in the URL never shows
  return {
    url: o.shardOver,
    secret: queueSecret('sop run --shard-over'),
    ...(o.shardSize !== undefined ? { size: o.shardSize } : {}),
  };
}
