// The global setup of the test run (vitest.config.ts): at its end, no process a test file started
// (tagged by test/helpers/leftovers-file.ts) may still be running. One that is, say one a test
// file's own check could not see (started after it), is named and killed, and the run fails.
import { reapLeftovers } from './processes.js';

export default function setup(): () => Promise<void> {
  const run = process.env.SOP_TEST_RUN_ID;
  return async () => {
    if (run === undefined) return;
    const left = await reapLeftovers(`${run}:`);
    if (left.length === 0) return;
    process.exitCode = 1;
    console.error(
      `\nThe test run left ${left.length} process${left.length === 1 ? '' : 'es'} running (killed now):\n` +
        left.map((p) => `  ${p.tag.slice(run.length + 1)}: ${p.pid} ${p.command}`).join('\n'),
    );
  };
}
