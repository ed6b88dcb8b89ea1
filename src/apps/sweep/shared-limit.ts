// A limit of LLM calls at once to each server, shared by every `sop worker` on one Redis
// (`sop worker --shared-limit N`, docs/scale.md#a-limit-shared-by-workers), through bottleneck's
// Redis clustering: one limiter per server, its id a hash of the server's URL (a URL may hold a
// key), all on one connection of the worker's own --queue Redis (a job cannot name a Redis).
// Each process's adaptive limit (src/core/llm/adaptive-limit.ts) still applies below it.
import { createHash } from 'node:crypto';
import Bottleneck from 'bottleneck';
import type { SharedLimit } from '../../core/llm/adaptive-limit.js';
import { parseRedisUrl } from './queue.js';

export interface RedisLimitsOptions {
  /** The worker's --queue URL. */
  redis: string;
  /** Calls at once to one server, across every process of this Redis. */
  maxConcurrent: number;
  /** A Redis error (once per kind). */
  onError?: (e: Error) => void;
}

/** The Redis keys and channel of a server's limiter: `b_sop-llm-HASH*` (the ACL of docs/scale.md allows them). */
export const sharedLimitId = (endpoint: string): string => `sop-llm-${createHash('sha256').update(endpoint).digest('hex').slice(0, 16)}`;

export class RedisLimits {
  private readonly connection: Bottleneck.IORedisConnection;
  private readonly limiters = new Map<string, Bottleneck>();
  private lastError: string | undefined;

  constructor(private readonly o: RedisLimitsOptions) {
    if (!Number.isInteger(o.maxConcurrent) || o.maxConcurrent < 1)
      throw new RangeError(`--shared-limit must be a whole number of calls, at least 1 (got ${o.maxConcurrent})`);
    this.connection = new Bottleneck.IORedisConnection({ clientOptions: parseRedisUrl(o.redis) });
    this.connection.on('error', (e: Error) => this.error(e));
  }

  /**
   * The shared limit of one server. A slot is held at most `expirationMs` (bottleneck's job
   * expiration): a process that dies holding slots gives them back then; longer than any attempt.
   */
  forEndpoint(endpoint: string, expirationMs: number): SharedLimit {
    const id = sharedLimitId(endpoint);
    let limiter = this.limiters.get(id);
    if (!limiter) {
      limiter = new Bottleneck({
        id,
        datastore: 'ioredis',
        connection: this.connection,
        maxConcurrent: this.o.maxConcurrent,
        timeout: 24 * 3_600_000, // its keys go a day after the last call
      });
      limiter.on('error', (e: Error) => this.error(e));
      // the first limiter of an id stores its settings; the last worker started sets the limit
      limiter.updateSettings({ maxConcurrent: this.o.maxConcurrent });
      this.limiters.set(id, limiter);
    }
    const l = limiter;
    return {
      run: (fn) => l.schedule({ expiration: expirationMs }, fn),
      close: () => l.disconnect(false),
    };
  }

  /** Waits until Redis answers (a limiter created now is connected). */
  async ready(): Promise<void> {
    // a promise, not the method its typings say
    await (this.connection as unknown as { ready: Promise<unknown> }).ready;
  }

  async close(): Promise<void> {
    await Promise.all([...this.limiters.values()].map((l) => l.disconnect(false)));
    await this.connection.disconnect(false);
  }

  private error(e: Error): void {
    if (e.message === this.lastError) return;
    this.lastError = e.message;
    this.o.onError?.(e);
  }
}
