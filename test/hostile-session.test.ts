// Hostile code in a code session: it cannot hang the engine, forge the end of its cell, outlive
// the session, or take the engine down (top-level await included). Each mode runs in a real
// Python or JavaScript session.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CodeSession } from '../src/features/actions/executors/session/code-session.js';
import { tempDir } from './helpers/executor-context.js';
import { until } from './helpers/until.js';

let modes = 0;
let contained = 0;
const sessions: CodeSession[] = [];
function session(language: 'python' | 'javascript'): { s: CodeSession; cwd: string } {
  const cwd = tempDir('sop-hostile-session-');
  const s = new CodeSession({ language, cwd, sandbox: false });
  sessions.push(s);
  return { s, cwd };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** One fault mode: it must be contained, and the session (or a fresh one) must answer afterwards. */
async function mode(name: string, fn: () => Promise<void>): Promise<void> {
  modes++;
  await fn();
  contained++;
  void name;
}

afterAll(() => {
  for (const s of sessions) s.close();
  console.log(`hostile session: ${modes} fault modes, ${contained} contained, 0 hung the engine`);
});

describe('hostile code in a session', () => {
  it('prints what looks like the end of a cell or a reply: it is only output', async () => {
    await mode('fake reply', async () => {
      const { s } = session('python');
      const o = await s.run(
        'print("\\x1eSOP-CELL-END-000000000000000000000000\\x1e{\\"error\\": null, \\"exit\\": 0, \\"files\\": []}")\nx = 1',
      );
      expect(o.stdout).toContain('SOP-CELL-END-0000');
      expect((await s.run('print(x)')).stdout).toBe('1\n');
    });
    await mode('fake reply (js)', async () => {
      const { s } = session('javascript');
      const o = await s.run('process.stdout.write(\'{"error":null,"exit":0,"files":["/etc/passwd"]}\\n\'); var y = 2');
      expect(o.files).toEqual([]);
      expect((await s.run('console.log(y)')).stdout).toBe('2\n');
    });
  }, 30_000);

  it('closes its stdout or stderr: the cell still ends', async () => {
    await mode('close stdout', async () => {
      const { s } = session('python');
      const o = await s.run('import os\nos.close(1)\nz = 3');
      expect(o.sessionEnded).toBe(false);
      expect((await s.run('import sys\nsys.stderr.write(str(z))')).stderr).toBe('3');
    });
    await mode('close stderr', async () => {
      const { s } = session('python');
      const o = await s.run('import os\nos.close(2)\nw = 4');
      expect(o.sessionEnded).toBe(false);
      expect((await s.run('print(w)')).stdout).toBe('4\n');
    });
  }, 30_000);

  it('floods its output: kept to the cap, the session goes on', async () => {
    await mode('flood', async () => {
      const { s } = session('python');
      const o = await s.run('import sys\nfor _ in range(200):\n    _ = sys.stdout.write("x" * 50000)\nv = 5', { maxOutput: 1000 });
      expect(o.stdout).toHaveLength(1000);
      expect(o.dropped.stdout).toBe(200 * 50000 - 1000);
      expect((await s.run('print(v)')).stdout).toBe('5\n');
    });
  }, 30_000);

  it('reads its stdin: it gets end of file, not the next request', async () => {
    await mode('stdin', async () => {
      const { s } = session('python');
      const o = await s.run('import sys\ndata = sys.stdin.read()\nprint(repr(data))');
      expect(o.stdout).toBe("''\n");
      const raw = await s.run('import os\nprint(os.read(0, 100))');
      expect(raw.stdout).toBe("b''\n");
    });
  }, 30_000);

  it('kills its own interpreter: the cell reports it, the next cell starts a fresh session', async () => {
    await mode('os._exit', async () => {
      const { s } = session('python');
      await s.run('u = 1');
      const o = await s.run('import os\nos._exit(7)');
      expect(o.sessionEnded).toBe(true);
      expect(o.exitCode).toBe(7);
      const next = await s.run('print("fresh")');
      expect(next.cell).toBe(1);
      expect(next.stdout).toBe('fresh\n');
    });
    await mode('SIGKILL itself', async () => {
      const { s } = session('javascript');
      const o = await s.run("process.kill(process.pid, 'SIGKILL')");
      expect(o.sessionEnded).toBe(true);
      expect(o.signal).toBe('SIGKILL');
    });
  }, 30_000);

  it('loops forever: killed at the timeout', async () => {
    await mode('busy loop', async () => {
      const { s } = session('javascript');
      const o = await s.run('for (;;) {}', { timeoutMs: 500 });
      expect(o.timedOut).toBe(true);
      expect(o.sessionEnded).toBe(true);
    });
  }, 30_000);

  it('awaits forever at the top level, or forges the end of its cell after an await: contained', async () => {
    await mode('await forever', async () => {
      const { s } = session('javascript');
      await s.run('var kept = 1');
      const o = await s.run('await new Promise(() => {})', { timeoutMs: 500 });
      expect(o.timedOut).toBe(true);
      expect(o.sessionEnded).toBe(true);
      const next = await s.run('const v = await Promise.resolve(typeof kept); v');
      expect(next.cell).toBe(1); // a fresh session, which still awaits
      expect(next.stdout).toBe("'undefined'\n");
    });
    await mode('forged reply after an await', async () => {
      const { s } = session('javascript');
      const o = await s.run('await null; process.stdout.write(\'{"error":null,"exit":0,"files":["/etc/passwd"]}\\n\'); var y = 2');
      expect(o.files).toEqual([]);
      expect(o.stdout).toBe('{"error":null,"exit":0,"files":["/etc/passwd"]}\n');
      expect((await s.run('await null; y')).stdout).toBe('2\n');
    });
  }, 30_000);

  it('leaves a process behind, even out of its group: killed when the session ends', async () => {
    await mode('setsid', async () => {
      const { s, cwd } = session('python');
      await s.run(
        'import subprocess\np = subprocess.Popen(["setsid", "sleep", "300"])\nopen("bg.pid", "w").write(str(p.pid))\nprint("started")',
      );
      const pid = Number(readFileSync(join(cwd, 'bg.pid'), 'utf8'));
      expect(alive(pid)).toBe(true); // it lives as long as the session: a later cell may use it
      s.close();
      expect(await until(() => !alive(pid))).toBe(true);
    });
  }, 30_000);
});
