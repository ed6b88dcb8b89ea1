// --sandbox: run code under bubblewrap (bwrap) with no network and a read-only view of the
// machine, except the workspace (read-write) and a private /tmp. Whether bwrap works here is
// probed once: some containers need --unshare-user, some cannot create namespaces at all.
import { spawnSync } from 'node:child_process';
import { realpathSync } from 'node:fs';

export type SandboxSupport = { ok: true; extra: string[] } | { ok: false; reason: string };

let probed: SandboxSupport | undefined;

function tryBwrap(extra: string[]): { ok: boolean; detail: string } {
  const r = spawnSync('bwrap', [...extra, '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-net', '--unshare-pid', '--die-with-parent', 'true'], {
    encoding: 'utf8', timeout: 10_000,
  });
  if (r.error) return { ok: false, detail: (r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'bwrap (bubblewrap) is not installed' : r.error.message };
  return { ok: r.status === 0, detail: (r.stderr || `exit ${r.status}`).trim() };
}

/** Whether --sandbox can work on this machine (cached). */
export function sandboxSupport(): SandboxSupport {
  if (probed) return probed;
  const plain = tryBwrap([]);
  if (plain.ok) return (probed = { ok: true, extra: [] });
  if (/not installed/.test(plain.detail)) return (probed = { ok: false, reason: `${plain.detail}; install it (apt-get install bubblewrap) to use --sandbox` });
  const user = tryBwrap(['--unshare-user']);
  if (user.ok) return (probed = { ok: true, extra: ['--unshare-user'] });
  return (probed = { ok: false, reason: `bwrap cannot create a sandbox here: ${plain.detail}` });
}

/** The bwrap command line wrapping `argv`, with `workspace` the only writable folder. */
export function sandboxArgv(workspace: string, argv: string[]): string[] {
  const support = sandboxSupport();
  if (!support.ok) throw new Error(`--sandbox: ${support.reason}`);
  const ws = realpathSync(workspace);
  return [
    'bwrap', ...support.extra,
    '--ro-bind', '/', '/',
    '--dev', '/dev',
    '--proc', '/proc',
    '--tmpfs', '/tmp',
    '--bind', ws, ws,
    '--unshare-net', '--unshare-pid', '--unshare-ipc', '--unshare-uts',
    '--die-with-parent', '--new-session',
    '--chdir', ws,
    '--', ...argv,
  ];
}
