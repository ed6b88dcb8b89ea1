// Where Redis is (a redis:// or rediss:// URL, as `sop sweep --queue`, `sop worker --queue` and
// `sop run --shard-over` take it), BullMQ's connection options for it, and waiting for it with one
// clear message when it cannot be reached or refuses the login (docs/scale.md).
import { EngineError } from '../errors.js';

/** Where Redis is, from a redis:// or rediss:// URL. */
export interface RedisAddress {
  host: string;
  port: number;
  username?: string;
  password?: string;
  db?: number;
  /** rediss://: TLS, the server's certificate checked against the host name. */
  tls?: { servername: string };
}

export class QueueUrlError extends EngineError {
  constructor(message: string) {
    super(message, 'QUEUE_URL');
  }
}

/** redis[s]://[user:password@]host:port[/db] as connection options. */
export function parseRedisUrl(url: string, flag = '--queue'): RedisAddress {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new QueueUrlError(`${flag} "${url}" is not a URL; use redis://HOST:PORT (or rediss:// for TLS)`);
  }
  if (u.protocol !== 'redis:' && u.protocol !== 'rediss:')
    throw new QueueUrlError(`${flag} "${url}": use redis://HOST:PORT, or rediss://HOST:PORT for TLS`);
  const db = u.pathname.replace(/^\//, '');
  if (db && !/^\d+$/.test(db)) throw new QueueUrlError(`${flag} "${url}": the path must be a database number`);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
  return {
    host,
    port: u.port ? Number(u.port) : 6379,
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(db ? { db: Number(db) } : {}),
    ...(u.protocol === 'rediss:' ? { tls: { servername: host } } : {}),
  };
}

/**
 * BullMQ's connection options (it talks to Redis through ioredis): a worker's blocking calls must
 * not give up after a few retries (`maxRetriesPerRequest: null`, which BullMQ requires of workers).
 */
export function connectionOf(url: string, flag?: string): RedisAddress & { maxRetriesPerRequest: null } {
  return { ...parseRedisUrl(url, flag), maxRetriesPerRequest: null };
}

/** Redis answered, and refused the login: no retry will change that. */
const LOGIN_REFUSED = /^(NOAUTH|WRONGPASS)\b/;

/**
 * Wait for the connection, or fail with one clear message: at once when Redis refuses the login
 * (no password, a wrong one, a disabled user), else when it cannot be reached within `ms`.
 */
export async function reachRedis(ready: Promise<unknown>, url: string, lastError: () => string | undefined, ms = 10_000): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let poll: ReturnType<typeof setInterval> | undefined;
  try {
    await Promise.race([
      ready,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new QueueUrlError(`cannot reach Redis at ${url} within ${ms / 1000} s${lastError() ? ` (${lastError()})` : ''}`)),
          ms,
        );
        poll = setInterval(() => {
          const e = lastError();
          if (e && LOGIN_REFUSED.test(e))
            reject(
              new QueueUrlError(
                `Redis at ${url} refused the login (${e}); give the user and password it expects in the URL, redis://USER:PASSWORD@HOST:PORT (docs/scale.md)`,
              ),
            );
        }, 50);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    clearInterval(poll);
  }
}
