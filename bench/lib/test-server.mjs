// The local OpenAI-compatible server of the benches (bench/workers/openai-server.mjs) in its own
// process, answering after `latencyMs`; and the CPU time of this process.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ROOT } from './engine.mjs';

/** Start the server; resolves to its URL and a stop function. */
export async function startServer(latencyMs, kind = '') {
  const proc = spawn(process.execPath, [join(ROOT, 'bench', 'workers', 'openai-server.mjs'), String(latencyMs), kind], {
    cwd: ROOT,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => proc.once('exit', resolve));
  const url = await new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once('line', resolve);
    proc.once('exit', (code) => reject(new Error(`the test server exited (${code}) before it listened`)));
  });
  return {
    url,
    stop: async () => {
      proc.stdin.end();
      await exited;
    },
  };
}

/** CPU time of this process (all its threads), in ms. */
export const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
