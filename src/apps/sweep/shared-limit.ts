// A limit of LLM calls at once to each server, shared by every `sop worker` on one Redis
// (`sop worker --shared-limit N`, docs/scale.md#a-limit-shared-by-workers), through
// redis-semaphore's counting semaphore: one per server, its key `semaphore:sop-llm-HASH` (a hash
// of the server's URL, which may hold a key), all on one connection of the worker's own --queue
// Redis (a job cannot name a Redis). A held slot is refreshed while its call runs, so a process
// that dies gives its slots back within HOLD_MS. Each process's adaptive limit
// (src/core/llm/adaptive-limit.ts) still applies below it.
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { Semaphore } from 'redis-semaphore';
import type { SharedLimit } from '../../core/llm/adaptive-limit.js';
import { connectionOf } from '../../shared/util/redis-url.js';

export interface RedisLimitsOptions {
  /** The worker's --queue URL. */
  redis: string;
  /** Calls at once to one server, across every process of this Redis. */
  maxConcurrent: number;
  /** A Redis error (once per kind). */
  onError?: (e: Error) => void;
}

/** How long a slot stays taken without a refresh (a process that died holding it): also the clock skew workers may have. */
const HOLD_MS = 30_000;
/** The wait between two tries for a slot while the servers' slots are all taken. */
const RETRY_MS = 20;

/** The id of a server's limit, `sop-llm-HASH`; its Redis key is `semaphore:sop-llm-HASH` (the ACL of docs/scale.md allows it). */
export const sharedLimitId = (endpoint: string): string => `sop-llm-${createHash('sha256').update(endpoint).digest('hex').slice(0, 16)}`;

export class RedisLimits {
  private readonly client: Redis;
  private readonly held = new Set<Semaphore>();
  private lastError: string | undefined;

  constructor(private readonly o: RedisLimitsOptions) {
    if (!Number.isInteger(o.maxConcurrent) || o.maxConcurrent < 1)
      throw new RangeError(`--shared-limit must be a whole number of calls, at least 1 (got ${o.maxConcurrent})`);
    this.client = new Redis(connectionOf(o.redis)); // while Redis is away, a call waits for it (as the queue does)
    this.client.on('error', (e: Error) => this.error(e));
  }

  /**
   * The shared limit of one server. A slot is held while its call runs (refreshed), and given back
   * at most `expirationMs` (or HOLD_MS, the shorter) after the process holding it died.
   */
  forEndpoint(endpoint: string, expirationMs: number): SharedLimit {
    const key = sharedLimitId(endpoint);
    const lockTimeout = Math.max(1000, Math.min(HOLD_MS, expirationMs));
    return {
      run: async (fn) => {
        const slot = new Semaphore(this.client, key, this.o.maxConcurrent, {
          lockTimeout,
          acquireTimeout: Number.POSITIVE_INFINITY, // a call waits for a slot as long as it takes
          retryInterval: RETRY_MS,
          onLockLost: (e) => this.error(e),
        });
        try {
          await slot.acquire();
        } catch (e) {
          this.error(e as Error);
          throw e;
        }
        this.held.add(slot);
        try {
          return await fn();
        } finally {
          this.held.delete(slot);
          await slot.release().catch((e: Error) => this.error(e));
        }
      },
      close: async () => {},
    };
  }

  /** Waits until Redis answers. */
  async ready(): Promise<void> {
    await this.client.ping();
  }

  async close(): Promise<void> {
    await Promise.all([...this.held].map((s) => s.release().catch(() => undefined)));
    this.held.clear();
    this.client.disconnect();
  }

  private error(e: Error): void {
    if (e.message === this.lastError) return;
    this.lastError = e.message;
    this.o.onError?.(e);
  }
}
