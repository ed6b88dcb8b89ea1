// --sandbox: run code under bubblewrap (bwrap) with no network and a read-only view of the
// machine, except the workspace (read-write) and a private /tmp. Whether bwrap works here is
// probed once: some containers need --unshare-user, some cannot create namespaces at all.
import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { packageRoot } from '../util/package-root.js';
import { unixSocketFilter } from './seccomp.js';
import { EngineError, opt, say } from '../errors.js';

/** The file descriptor bwrap reads the seccomp filter from (the code runner passes it as fd 3). */
export const SECCOMP_FD = 3;

/** The seccomp filter every sandbox gets: no Unix-domain sockets (host services), see seccomp.ts. */
export function sandboxFilter(): Buffer | undefined {
  return unixSocketFilter();
}

export type SandboxSupport = { ok: true; extra: string[] } | { ok: false; reason: string };

let probed: SandboxSupport | undefined;

/** The filesystem every sandbox (and the probe) starts from: / read-only, a minimal /dev, its own /proc. */
const READ_ONLY_SYSTEM = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];

function tryBwrap(extra: string[]): { ok: boolean; detail: string } {
  // The probe loads the same seccomp filter (from stdin here), so a sandbox that starts is one that has it.
  const r = spawnSync(
    'bwrap',
    [...extra, ...READ_ONLY_SYSTEM, '--unshare-net', '--unshare-pid', '--die-with-parent', '--seccomp', '0', 'true'],
    {
      encoding: 'utf8',
      timeout: 10_000,
      input: sandboxFilter(),
    },
  );
  if (r.error)
    return {
      ok: false,
      detail: (r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'bwrap (bubblewrap) is not installed' : r.error.message,
    };
  return { ok: r.status === 0, detail: (r.stderr || `exit ${r.status}`).trim() };
}

/** Whether --sandbox can work on this machine (cached). */
export function sandboxSupport(): SandboxSupport {
  if (probed) return probed;
  if (!sandboxFilter())
    return (probed = { ok: false, reason: `the sandbox's filter of Unix sockets is built for x64 and arm64 only, not ${process.arch}` });
  const plain = tryBwrap([]);
  if (plain.ok) return (probed = { ok: true, extra: [] });
  if (/not installed/.test(plain.detail))
    return (probed = { ok: false, reason: `${plain.detail}; install it (apt-get install bubblewrap) to use the sandbox` });
  const user = tryBwrap(['--unshare-user']);
  if (user.ok) return (probed = { ok: true, extra: ['--unshare-user'] });
  return (probed = { ok: false, reason: `bwrap cannot create a sandbox here: ${plain.detail}` });
}

const underTmp = (p: string) => p === '/tmp' || p.startsWith('/tmp/');

/**
 * What the sandbox's private /tmp would hide but the command needs to read: sop's own files (the
 * session drivers it runs, when sop is installed or cloned under /tmp) and the absolute paths
 * under /tmp that `argv` names (an MCP server's script). They are bound back, read-only.
 */
function keptUnderTmp(argv: readonly string[], readOnly: readonly string[] = []): string[] {
  const paths = [packageRoot(), ...argv.filter((a) => a.startsWith('/')), ...readOnly].filter((p) => underTmp(p) && existsSync(p));
  // Folders are bound by their real path; a folder inside another bound one is there already (and
  // binding over a symbolic link in it, such as a linked node_modules, would fail).
  const real = new Map(paths.map((p) => [p, realpathSync(p)]));
  const binds = [...new Set([...real.values()].filter(underTmp))].sort();
  const kept = binds.filter((p) => !binds.some((q) => q !== p && p.startsWith(`${q}/`)));
  const within = (p: string) => kept.some((q) => p === q || p.startsWith(`${q}/`));
  // a path reached through a link (not itself inside a bound folder) is recreated as that link
  const links = [...real].filter(([p, r]) => p !== r && !within(p) && within(r));
  return [...kept.flatMap((p) => ['--ro-bind', p, p]), ...links.flatMap(([p, r]) => ['--symlink', r, p])];
}

/**
 * The bwrap command line wrapping `argv`, with `workspace` the only writable folder; `readOnly`
 * folders (an MCP server's folder, its node_modules) stay readable when they are under /tmp.
 */
export function sandboxArgv(workspace: string, argv: string[], readOnly: readonly string[] = [], o: { network?: boolean } = {}): string[] {
  const support = sandboxSupport();
  if (!support.ok) throw new EngineError(say`${opt('sandbox')}: ${support.reason}`, 'SANDBOX');
  const ws = realpathSync(workspace);
  return [
    'bwrap',
    ...support.extra,
    ...READ_ONLY_SYSTEM,
    '--tmpfs',
    '/tmp',
    ...keptUnderTmp(argv, readOnly),
    '--bind',
    ws,
    ws,
    // network in the sandbox only as an explicit opt-in (--sandbox-network, a code command's `network: true`)
    ...(o.network ? [] : ['--unshare-net']),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--die-with-parent',
    '--new-session',
    '--seccomp',
    String(SECCOMP_FD), // files: no Unix sockets, so no host services through socket files
    '--chdir',
    ws,
    '--',
    ...argv,
  ];
}
