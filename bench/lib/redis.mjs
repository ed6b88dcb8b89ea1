// A throw-away redis-server for the queue benches (on a free port of 127.0.0.1, nothing saved),
// and waiting for a child process to print a line.
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';

export async function freePort() {
  return new Promise((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = s.address().port;
      s.close(() => resolve(port));
    });
  });
}

/** Resolves with what `proc` printed (stdout and stderr) once it matches `re`; rejects if it exits first. */
export function waitLine(proc, re) {
  return new Promise((resolve, reject) => {
    let out = '';
    const on = (d) => {
      out += d.toString();
      if (re.test(out)) resolve(out);
    };
    proc.stdout?.on('data', on);
    proc.stderr?.on('data', on);
    proc.once('exit', (code) => reject(new Error(`exited (${code}) before ${re}: ${out.slice(-500)}`)));
  });
}

/** Start `redisBin` on a free port; resolves once it accepts connections, with its port, URL and process. */
export async function startRedis(redisBin) {
  const port = await freePort();
  const proc = spawn(redisBin, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  try {
    await waitLine(proc, /Ready to accept connections/);
  } catch (err) {
    proc.kill('SIGKILL');
    throw err;
  }
  return { port, url: `redis://127.0.0.1:${port}`, proc };
}
