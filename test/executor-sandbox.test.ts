// --sandbox: code runs under bubblewrap with no network and a read-only filesystem except the
// workspace. Skipped, with the reason, where bwrap is not installed or cannot create a sandbox
// (.ci/run installs it).
import { messageText } from '../src/shared/errors.js';
import { cliMessage } from '../src/apps/cli/errors.js';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { createServer, type Server } from 'node:net';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executor as code } from '../src/features/actions/executors/code.js';
import { SECCOMP_FD, sandboxArgv, sandboxFilter, sandboxSupport } from '../src/shared/sandbox/sandbox.js';
import { resolveNetwork } from '../src/features/actions/executors/sandbox-mode.js';
import type { Sop } from '../src/format/sop/types.js';
import { execContext, tempDir } from './helpers/executor-context.js';
import { until } from './helpers/until.js';

const support = sandboxSupport();
const skipReason = support.ok ? '' : ` (skipped: ${support.reason})`;
if (!support.ok) console.warn(`--sandbox tests skipped: ${support.reason}`);

describe.skipIf(!support.ok)(`code executor with --sandbox${skipReason}`, () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((s) => s.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connect = (p: number) =>
    [
      'import socket',
      'try:',
      `    s = socket.create_connection(("127.0.0.1", ${p}), timeout=3)`,
      '    print("connected:", s.recv(100).decode().strip())',
      'except OSError as e:',
      '    print("no network:", type(e).__name__)',
    ].join('\n');

  it('has no network (the same code reaches the host without the sandbox)', async () => {
    const open = await code.run({ language: 'python', code: connect(port) }, execContext());
    expect(open.result).toContain('connected: hello from the host');
    const boxed = await code.run({ language: 'python', code: connect(port) }, execContext({ sandbox: true }));
    expect(boxed.result).toContain('The python code ran in the sandbox: exit code 0.');
    expect(boxed.result).toContain('no network:');
    expect(boxed.result).not.toContain('connected:');
  });

  it('has network only when asked (--sandbox-network): files stay boxed, installs go to the workspace', async () => {
    const ctx = execContext({ sandbox: true, sandboxNetwork: true });
    const asked = await code.run({ language: 'python', code: connect(port) }, ctx);
    expect(asked.result).toContain('The python code ran in the sandbox: exit code 0.');
    expect(asked.result).toContain('connected: hello from the host');
    const where = await code.run(
      { language: 'python', code: 'import os, site\nprint(os.environ["PIP_USER"], site.getuserbase())\nopen("/etc/sop-net-test", "w")' },
      ctx,
    );
    expect(where.result).toMatch(/stdout:\n1 .*\/\.python\n/);
    expect(where.result).toMatch(/Read-only file system|Permission denied/);
  });

  it('keeps a file under /tmp that the command names readable (read-only), though /tmp is private', async () => {
    const dir = mkdtempSync('/tmp/sop-sandbox-arg-');
    const file = join(dir, 'script.sh');
    const script = 'echo "script ran"\necho changed >> "$0" 2>/dev/null || echo "script read-only"\nls /tmp\n';
    const sibling = mkdtempSync('/tmp/sop-sandbox-unnamed-'); // under /tmp, not named by the command
    writeFileSync(file, script);
    const ws = tempDir('sop-sandbox-ws-');
    try {
      const [cmd, ...args] = sandboxArgv(ws, ['/bin/sh', file]);
      const child = spawn(cmd!, args, { stdio: ['ignore', 'pipe', 'pipe', 'pipe'] });
      (child.stdio[SECCOMP_FD] as Writable).end(sandboxFilter()!);
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(0);
      expect(out).toMatch(/^script ran\nscript read-only\n/);
      // /tmp holds only what was bound back: the script's folder, not the rest of the host's /tmp
      expect(out).toContain(basename(dir));
      expect(out).not.toContain(basename(sibling));
      expect(readFileSync(file, 'utf8')).toBe(script);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(sibling, { recursive: true, force: true });
    }
  });

  it('writes only inside the workspace', async () => {
    const outside = tempDir('sop-outside-');
    const ctx = execContext({ sandbox: true });
    const r = await code.run(
      {
        language: 'bash',
        code: `echo inside > in.txt && echo ok-inside\necho outside > "${outside}/out.txt" || echo refused-outside\ntouch "$HOME/sop-sandbox-probe" || echo refused-home`,
      },
      ctx,
    );
    expect(r.result).toContain('ok-inside');
    expect(r.result).toContain('refused-outside');
    expect(r.result).toContain('refused-home');
    expect(r.result).toContain('Read-only file system');
    expect(readFileSync(join(ctx.ws.root, 'in.txt'), 'utf8')).toBe('inside\n');
    expect(existsSync(join(outside, 'out.txt'))).toBe(false);
    expect(existsSync(join(process.env.HOME ?? '/root', 'sop-sandbox-probe'))).toBe(false);
  });

  it('still kills sandboxed code, and what it started, at the timeout', async () => {
    const r = await code.run(
      { language: 'bash', code: 'sleep 317 & sleep 318' },
      execContext({ sandbox: true, settings: { timeout_ms: 800 } }),
    );
    expect(r.ok).toBe(false);
    expect(r.result).toContain('killed after the 0.8 s timeout');
    const running = () =>
      readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .some((p) => {
          try {
            return /^sleep\0(317|318)\0/.test(readFileSync(`/proc/${p}/cmdline`, 'utf8'));
          } catch {
            return false;
          }
        });
    expect(await until(() => !running(), { timeoutMs: 3000, intervalMs: 50 })).toBe(true);
  });
});

describe('network in the sandbox is an explicit opt-in', () => {
  const sop = (network?: boolean) =>
    ({
      states: { s: { commands: { run_code: { executor: 'code', settings: { language: 'python', ...(network ? { network } : {}) } } } } },
    }) as unknown as Sop;
  it('is off unless --sandbox-network or a code command asks, and said with a warning when on', () => {
    expect(resolveNetwork(undefined, sop(), true)).toEqual({ network: false });
    const flagged = resolveNetwork(true, sop(), true);
    expect(flagged.network).toBe(true);
    expect(messageText(flagged.warning!)).toMatch(/with network \(options\.sandboxNetwork\)/); // the API's name
    expect(cliMessage(flagged.warning!)).toMatch(/with network \(--sandbox-network\)/); // the CLI's, from the option as data
    const asked = resolveNetwork(undefined, sop(true), true);
    expect(asked.network).toBe(true);
    expect(messageText(asked.warning!)).toMatch(/"network": true in s\/run_code/);
    expect(resolveNetwork(true, sop(), false)).toEqual({ network: false }); // unsandboxed code has it anyway (its own warning)
  });
});
