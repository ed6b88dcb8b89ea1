// Whether a run's code is sandboxed: by default under bubblewrap when it works here, and
// unsandboxed with a warning when it does not; `--sandbox` requires it (the run refuses to
// start without it), `--no-sandbox` turns it off (with a warning, since code then runs as you).
import type { Sop } from '../../../format/sop/types.js';
import { sandboxSupport } from '../../../shared/sandbox/sandbox.js';
import { EngineError, opt, say, type Message } from '../../../shared/errors.js';

/** true: --sandbox (required); false: --no-sandbox; undefined: when available. */
export type SandboxFlag = boolean | undefined;

/** Executors that run code written by an agent (a sub-SOP may run some too). */
const RUNS_CODE = new Set(['code', 'library', 'sop']);

/** Whether a SOP has commands that may run code. */
export function sopRunsCode(sop: Sop): boolean {
  return Object.values(sop.states).some((s) => Object.values(s.commands ?? {}).some((c) => RUNS_CODE.has(c.executor)));
}

/**
 * The run's sandbox setting and the warning to print, if any (only for SOPs that run code).
 * Throws when --sandbox is given and bubblewrap cannot work here.
 */
export function resolveSandbox(flag: SandboxFlag, runsCode: boolean): { sandbox: boolean; warning?: Message } {
  if (flag === false) {
    return {
      sandbox: false,
      ...(runsCode
        ? {
            warning: say`${opt('sandbox', { set: false })}: code written by agents runs unsandboxed, as you: with your network, every file you can write, and the environment of sop itself (/proc)`,
          }
        : {}),
    };
  }
  const support = sandboxSupport();
  if (support.ok) return { sandbox: true };
  if (flag === true) throw new EngineError(say`${opt('sandbox')}: ${support.reason}`, 'SANDBOX');
  return {
    sandbox: false,
    ...(runsCode
      ? {
          warning: say`code runs without a sandbox: ${support.reason} (${opt('sandbox', { set: true })} requires one; ${opt('sandbox', { set: false })} turns it off without this warning)`,
        }
      : {}),
  };
}

/** Code commands of the SOP that ask for network in the sandbox (`"network": true` in their settings). */
export function commandsWithNetwork(sop: Sop): string[] {
  return Object.entries(sop.states).flatMap(([state, s]) =>
    Object.entries(s.commands ?? {})
      .filter(([, c]) => c.executor === 'code' && (c.settings as { network?: unknown } | undefined)?.network === true)
      .map(([name]) => `${state}/${name}`),
  );
}

/**
 * Whether code gets network inside the sandbox: only when asked (`flag`: --sandbox-network, or
 * a code command's `network: true`), and then with a warning. Without the sandbox code has the
 * network anyway (its own warning says so).
 */
export function resolveNetwork(flag: boolean | undefined, sop: Sop, sandbox: boolean): { network: boolean; warning?: Message } {
  const asked = commandsWithNetwork(sop);
  if (flag !== true && asked.length === 0) return { network: false };
  if (!sandbox) return { network: false };
  const why = flag === true ? [opt('sandboxNetwork')] : `"network": true in ${asked.join(', ')}`;
  return {
    network: true,
    warning: say`code runs in the sandbox with network (${why}): it can reach the internet and services of this machine and your network; files stay read-only except the workspace, where pip installs go`,
  };
}
