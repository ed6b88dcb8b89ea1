// `sop plan`: its options and how they map to planCommand (./plan-command.ts), imported only when it runs.
import type { Argv } from 'yargs';
import { collect } from './collect.js';

export function withPlanCommand<T>(y: Argv<T>): Argv<T> {
  return y.command(
    'plan [file]',
    'Predict a run of a SOP per state and per population step: LLM calls, prompt and completion tokens, cached share, cost and wall time',
    (y) =>
      y
        .positional('file', { type: 'string', describe: 'SOP file (optional with --run: the SOP that run ran)' })
        .option('llm', { type: 'string', choices: ['mock'], describe: "mock: predict a run with --llm mock (the mock's replies)" })
        .option('reply-tokens', {
          type: 'number',
          describe: "Tokens of a model's free-text reply (an agent's turn, a summary), within the call's max_tokens (default 150)",
        })
        .option('concurrency', { type: 'number', describe: 'Population states: LLM calls a step makes at once (default 64, as sop run)' })
        .option('latency', { type: 'string', describe: 'Time of one LLM call: 1.5s, 800ms (default 1.5s; 0s beside --tokens-per-second)' })
        .option('tokens-per-second', { type: 'number', describe: 'Completion tokens a second of one call, added to --latency' })
        .option('sample', {
          type: 'number',
          describe: 'Population states of more agents are dry-run with this many, and extrapolated (default 1000)',
        })
        .option('seed', { type: 'number', describe: "The dry run's seed (default 1; with --run, the run's)" })
        .option('max-turns', { type: 'number', describe: 'Stop the dry run after this many turns (default 200)' })
        .option('pricing', { type: 'string', describe: 'Prices of models over the shipped pricing.json' })
        .option('input', { type: 'string', array: true, describe: 'An input of the SOP, as name=value (repeatable)' })
        .option('goal', { type: 'string', describe: 'Shorthand for --input goal=TEXT' })
        .option('run', {
          type: 'string',
          describe:
            'A run folder: show its realised figures beside the prediction (its SOP, seed, inputs and LLM), and keep the prediction in RUN/plan.json',
        })
        .option('json', { type: 'boolean', default: false, describe: 'Print the plan as one JSON object' })
        .example('$0 plan examples/debate/debate.sop.json', 'Calls, tokens, cached share, cost and time per state')
        .example(
          '$0 plan examples/social-spread/social-spread.sop.json --concurrency 256 --latency 0.8s',
          'A population step at 256 calls at once',
        )
        .example('$0 plan --run runs/20250101-120000-debate-ab12', 'Predicted beside realised for a run')
        .epilog('Exit code 1 when the dry run failed. More: docs/plan.md'),
    async (a) => {
      const { planCommand } = await import('./plan-command.js');
      process.exitCode = await planCommand({
        file: a.file,
        run: a.run,
        llm: a.llm,
        replyTokens: a['reply-tokens'],
        concurrency: a.concurrency,
        latency: a.latency,
        tokensPerSecond: a['tokens-per-second'],
        sample: a.sample,
        seed: a.seed,
        maxTurns: a['max-turns'],
        pricing: a.pricing,
        inputs: collect(a.input),
        goal: a.goal,
        json: a.json,
      });
    },
  );
}
