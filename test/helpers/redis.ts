// A real redis-server for the tests of the queue, the shards and the shared limits: started on a
// free port of 127.0.0.1 with nothing saved to disk, ready once it says it accepts connections.
// A file skips its Redis tests where redis-server is not installed (`describe.skipIf(!REDIS)`).
import { existsSync } from 'node:fs';
import { freePort } from './free-port.js';
import { stopChild } from './processes.js';
import { watchProcess, type WatchedProcess } from './watch-process.js';

/** The redis-server binary, where one is installed (Debian's redis-server package). */
export const REDIS = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'].find((f) => existsSync(f));

/** The arguments of a redis-server on `port` of 127.0.0.1 that keeps nothing on disk. */
export const redisArgs = (port: number): string[] => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];

export interface TestRedis {
  port: number;
  /** redis://127.0.0.1:PORT (no password: a test that sets one with `extra` writes its own URL). */
  url: string;
  process: WatchedProcess;
  /** Stops it (SIGTERM, then SIGKILL after a grace) and waits until it has exited. */
  stop(): Promise<void>;
}

/**
 * Starts redis-server (`REDIS`, which the caller has checked) on a free port, with `extra`
 * arguments after the usual ones (`--requirepass P`); resolves once it accepts connections.
 */
export async function startRedis(extra: string[] = [], env: NodeJS.ProcessEnv = process.env, cwd?: string): Promise<TestRedis> {
  if (!REDIS) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const port = await freePort();
  const proc = watchProcess(REDIS, [...redisArgs(port), ...extra], env, cwd);
  try {
    await proc.waitFor(/Ready to accept connections/, 60_000);
  } catch (e) {
    await stopChild(proc.child);
    throw e;
  }
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    process: proc,
    stop: async () => void (await stopChild(proc.child)),
  };
}
