// What the commands that read a SOP file (sop run, validate, plan, sweep, worker) do before they
// load it: load the JavaScript modules it names in "plugins", each with the user's approval
// (src/api/plugins.ts): --yes, a yes at the terminal (shown the module's path), or an entry of the
// allow file; a worker only inside its --root.
import { askYesNo } from '../../core/io/human.js';
import { filePluginEntries, loadSopFilePlugins } from '../../api/plugins.js';

export async function approveSopPlugins(file: string, o: { yes?: boolean; command: string; roots?: readonly string[] }): Promise<string[]> {
  const terminal = process.stdin.isTTY === true && process.stderr.isTTY === true && o.command !== 'sop worker';
  return loadSopFilePlugins(file, {
    unattended: o.yes === true,
    allow: () => filePluginEntries(),
    command: o.command,
    ...(terminal ? { ask: askYesNo } : {}),
    ...(o.roots ? { roots: o.roots } : {}),
  });
}
