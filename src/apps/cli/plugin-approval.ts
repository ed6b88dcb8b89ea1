// What the commands that read a SOP file (sop run, validate, plan, sweep, worker; resume and fork
// from the SOP in a run's journal) do before they
// load it: load the JavaScript modules it names in "plugins", each with the user's approval
// (src/api/plugins.ts): --yes, a yes at the terminal (shown the module's path), or an entry of the
// allow file; a worker only inside its --root.
import { askYesNo } from '../../core/io/human.js';
import { filePluginEntries, loadRunPlugins, loadSopFilePlugins } from '../../api/plugins.js';

type Approval = { yes?: boolean; command: string; roots?: readonly string[] };

function approval(o: Approval) {
  const terminal = process.stdin.isTTY === true && process.stderr.isTTY === true && o.command !== 'sop worker';
  return {
    unattended: o.yes === true,
    allow: () => filePluginEntries(),
    command: o.command,
    ...(terminal ? { ask: askYesNo } : {}),
    ...(o.roots ? { roots: o.roots } : {}),
  };
}

export async function approveSopPlugins(file: string, o: Approval): Promise<string[]> {
  return loadSopFilePlugins(file, approval(o));
}

/**
 * sop resume and sop fork: the modules the SOP in the run's journal names, approved as sop run
 * approves them, before the run's state is rebuilt. --yes counts only when given now: a journal
 * is a file like any other, and what it says the run was launched with approves no code.
 */
export async function approveRunPlugins(dir: string, o: Approval): Promise<string[]> {
  return loadRunPlugins(dir, approval(o));
}
