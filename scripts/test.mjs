// `npm test`, after the build: the three tiers of test/README.md as two vitest processes.
//   1. The model tier (the real local model: minutes of native CPU) alone, in a process group of
//      its own with a deadline: SOP_TEST_MODEL_DEADLINE seconds (default 1800) times
//      SOP_TEST_TIME_SCALE. At the deadline the group is killed and the tier fails, saying so: a
//      model stuck in native code cannot take the other tiers down, nor hold the run.
//   2. The unit and cli tiers together; vitest's summary of them ends the output.
// The exit code is 0 only when both passed. Arguments are passed to both vitest processes
// (`npm test -- --reporter=verbose`).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const vitest = createRequire(import.meta.url).resolve('vitest/vitest.mjs');
const scale = Number(process.env.SOP_TEST_TIME_SCALE || 1);
if (!Number.isFinite(scale) || scale < 1) {
  console.error(`error: SOP_TEST_TIME_SCALE must be a number >= 1, not ${JSON.stringify(process.env.SOP_TEST_TIME_SCALE)}`);
  process.exit(2);
}
const deadlineS = Number(process.env.SOP_TEST_MODEL_DEADLINE || 1800) * scale;
const extra = process.argv.slice(2);
// One run id for both processes: the tag of the processes their test files start (test/helpers/processes.ts).
process.env.SOP_TEST_RUN_ID ??= `${process.pid}-${Date.now().toString(36)}`;

/** Runs vitest with `args` in its own process group; resolves with its exit code (null: killed at the deadline). */
function runVitest(args, deadlineMs) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [vitest, 'run', ...args, ...extra], { stdio: 'inherit', detached: true });
    let timer;
    let late = false;
    const kill = (signal) => {
      try {
        process.kill(-child.pid, signal); // the group: vitest and every worker and process under it
      } catch {
        // already gone
      }
    };
    if (deadlineMs !== undefined)
      timer = setTimeout(() => {
        late = true;
        kill('SIGTERM');
        setTimeout(() => kill('SIGKILL'), 10_000).unref();
      }, deadlineMs);
    // Ctrl-C of npm test reaches this process: pass it on (the group does not share our terminal's signals).
    const onSignal = (signal) => kill(signal);
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
      kill('SIGKILL'); // anything of the group still running once vitest itself has ended
      resolve(late ? null : (code ?? (signal ? 1 : 0)));
    });
  });
}

const model = await runVitest(['--project', 'model'], deadlineS * 1000);
const modelVerdict =
  model === null
    ? `the model tier did not finish within its deadline of ${deadlineS} s (SOP_TEST_MODEL_DEADLINE x SOP_TEST_TIME_SCALE) and was stopped`
    : model === 0
      ? 'the model tier passed'
      : `the model tier failed (exit code ${model})`;
console.log(`\n${modelVerdict}; now the unit and cli tiers\n`);
const rest = await runVitest(['--project', 'unit', '--project', 'cli']);
if (model !== 0) console.error(`\n${modelVerdict} (its output is above the unit and cli tiers')`);
process.exit(model === 0 && rest === 0 ? 0 : 1);
