// `sop plan`: its options and how they map to planCommand (./plan-command.ts), imported only when it runs.
import type { Argv, Options } from 'yargs';
import { collect } from './collect.js';
import { withDryRunOptions } from './dry-run-options.js';

/** The options of `sop plan` besides those of every dry run (./dry-run-options.ts). */
const PLAN_OPTIONS = {
  llm: { type: 'string', choices: ['mock'], describe: "mock: predict a run with --llm mock (the mock's replies)" },
  'reply-tokens': {
    type: 'number',
    describe: "Tokens of a model's free-text reply (an agent's turn, a summary), within its max_tokens (default 150)",
  },
  concurrency: { type: 'number', describe: 'Population states: LLM calls a step makes at once (default 64, as sop run)' },
  latency: { type: 'string', describe: 'Time of one LLM call: 1.5s, 800ms (default 1.5s; 0s beside --tokens-per-second)' },
  'tokens-per-second': { type: 'number', describe: 'Completion tokens a second of one call, added to --latency' },
  sample: { type: 'number', describe: 'Population states of more agents are dry-run with this many, and extrapolated (default 1000)' },
  seed: { type: 'number', describe: "The dry run's seed (default 1; with --run, the run's)" },
  yes: { type: 'boolean', describe: 'Load the JavaScript modules the SOP names in "plugins" without asking (docs/population.md#plugins)' },
  budget: {
    type: 'number',
    describe: 'A SOP with a "calibrate" block: predict sop calibrate --budget N (its runs, calls, tokens and cost)',
  },
  run: {
    type: 'string',
    describe: 'A run folder: its realised figures beside the prediction (its SOP, seed, inputs, LLM); the prediction kept in RUN/plan.json',
  },
} as const satisfies Record<string, Options>;

export function withPlanCommand<T>(y: Argv<T>): Argv<T> {
  return y.command(
    'plan [file]',
    'Predict a run of a SOP per state and per population step: LLM calls, prompt and completion tokens, cached share, cost and wall time',
    (y) =>
      withDryRunOptions(y)
        .positional('file', { type: 'string', describe: 'SOP file (optional with --run: the SOP that run ran)' })
        .options(PLAN_OPTIONS)
        .example('$0 plan examples/debate/debate.sop.json', 'Calls, tokens, cached share, cost and time per state')
        .example('$0 plan examples/social-spread/social-spread.sop.json --concurrency 256 --latency 0.8s', 'A step at 256 calls at once')
        .example('$0 plan --run runs/20250101-120000-debate-ab12', 'Predicted beside realised for a run')
        .epilog('Exit code 1 when the dry run failed. More: docs/plan.md'),
    async (a) => {
      const { planCommand } = await import('./plan-command.js');
      // yargs gives each --kebab-case option its camelCase name too: the command's option names
      process.exitCode = await planCommand({ ...a, inputs: collect(a.input) });
    },
  );
}
