// `sop sweep` and `sop worker` (src/apps/sweep, docs/sweep.md): many runs, in this process or on workers.
import type { Argv } from 'yargs';
import { collect } from './collect.js';
import { tableArgs, tableFlags } from './option-flags.js';

export function withManyRunsCommands<T>(y: Argv<T>): Argv<T> {
  return y
    .command(
      'sweep <file>',
      'Run a SOP over a grid of seeds, input rows and models (in this process, or on sop workers via --queue); writes OUT/results.jsonl and OUT/summary.md',
      (y) =>
        y
          .positional('file', { type: 'string', demandOption: true, describe: 'SOP file (.sop.json)' })
          .option('out', {
            type: 'string',
            default: 'sweep',
            describe: 'Folder for results.jsonl, summary.md and runs/ (run again to continue)',
          })
          .option('seeds', { type: 'string', describe: 'Seeds: 1-100, or a list like 1,5,9-12 (default 1)' })
          .option('inputs', { type: 'string', describe: 'One run per row of this .jsonl or .csv file; its columns are SOP inputs' })
          .option('input', { type: 'string', array: true, describe: 'An input for every run, as name=value (repeatable)' })
          .option('model', { type: 'string', describe: 'Models, comma-separated, crossed with the rest of the grid' })
          .option('repeat', { type: 'number', default: 1, describe: 'Runs of each grid point' })
          .option('independent', {
            type: 'boolean',
            default: false,
            describe:
              "A SOP with experiment arms: run each arm on its own seeds (the seed hashed with the arm's name), not on common random numbers",
          })
          .option('concurrency', { type: 'number', describe: 'Runs at once in this process (default 8)' })
          .option('threads', {
            type: 'number',
            describe: 'Worker threads sharing those runs (default: one per core once there are at least 2 x --concurrency runs)',
          })
          .options(tableFlags('sweep'))
          .option('queue', {
            type: 'string',
            describe:
              'Put the runs on a BullMQ queue in Redis (redis:// or rediss://[USER:PASSWORD@]HOST:PORT) for sop worker processes; needs SOP_QUEUE_SECRET',
          })
          .option('detach', { type: 'boolean', default: false, describe: 'With --queue: queue the runs and return at once' })
          .option('collect', {
            type: 'boolean',
            default: false,
            describe: 'With --queue: queue nothing, wait for the queued runs and gather their results',
          })
          .option('attempts', {
            type: 'number',
            describe: 'With --queue: attempts of a run before it is recorded as failed (default 3)',
          })
          .example('$0 sweep examples/debate/debate.sop.json --llm mock --seeds 1-12 --concurrency 4 --out OUT', '12 dry-run debates')
          .example('$0 sweep support.sop.json --inputs tickets.csv --model gpt-4o-mini,gpt-4o --out support-sweep', 'Each row × 2 models')
          .example('$0 sweep debate.sop.json --seeds 1-500 --queue redis://127.0.0.1:6379 --out /shared/debates', 'On sop worker processes')
          .example('$0 sweep model.sop.json --seeds 1-30 --out OUT && $0 report OUT --check', "Compare the sweep with the SOP's targets")
          .epilog('Run the same command again to continue a stopped sweep. More: docs/sweep.md, docs/scale.md'),
      async (a) => {
        const { sweepCommand } = await import('./sweep-command.js');
        process.exitCode = await sweepCommand({
          ...tableArgs('sweep', a), // the option table's flags (src/api/option-table.ts)
          file: a.file,
          out: a.out,
          seeds: a.seeds,
          inputs: a.inputs,
          input: collect(a.input),
          model: a.model,
          repeat: a.repeat,
          independent: a.independent,
          concurrency: a.concurrency,
          threads: a.threads,
          queue: a.queue,
          detach: a.detach,
          collect: a.collect,
          attempts: a.attempts,
        });
      },
    )
    .command(
      'calibrate <file>',
      "Fit the SOP's calibrate.parameters to its targets by ABC-SMC (runs in this process, or on sop workers via --queue); writes DIR/report.md, the posterior (calibration.duckdb, posterior.parquet) and continues a stopped calibration",
      (y) =>
        y
          .positional('file', { type: 'string', demandOption: true, describe: 'SOP file (.sop.json) with a "calibrate" block' })
          .option('budget', { type: 'number', demandOption: true, describe: 'Runs in all (every round, kept or not)' })
          .option('out', {
            type: 'string',
            default: 'calibration',
            describe: 'Folder for report.md, the posterior, the saved rounds and runs/ (the same command continues it)',
          })
          .option('seed', { type: 'number', describe: 'Seed of the calibration: the same seed gives the same posterior (default 1)' })
          .option('population', {
            type: 'number',
            describe: 'Particles in a population (default: a sixtieth of the particles the budget pays for, 20 to 1000)',
          })
          .option('input', { type: 'string', array: true, describe: 'An input for every run, as name=value (repeatable)' })
          .option('json', {
            type: 'boolean',
            default: false,
            describe: 'Print {"parameters": {NAME: {median, lo90, hi90, prior_width}}, "runs": N} on stdout',
          })
          .option('keep-runs', { type: 'boolean', default: false, describe: "Keep every run's folder (default: only the population's)" })
          .option('concurrency', { type: 'number', describe: 'Runs at once in this process (default 8)' })
          .option('threads', { type: 'number', describe: 'Worker threads sharing those runs (default: one per core)' })
          .options(tableFlags('sweep'))
          .option('queue', {
            type: 'string',
            describe:
              'Put the runs on the BullMQ queue in Redis that sop worker processes take them from (as sop sweep --queue); needs SOP_QUEUE_SECRET',
          })
          .option('attempts', { type: 'number', describe: 'With --queue: attempts of a run before it is recorded as failed (default 3)' })
          .example('$0 calibrate examples/calibration/cascade.sop.json --budget 2000 --out OUT', 'Fit theta and p; OUT/report.md')
          .example(
            '$0 calibrate model.sop.json --budget 2000 --queue redis://127.0.0.1:6379 --out /shared/cal',
            'Runs on sop worker processes',
          )
          .epilog(
            'Run the same command again to continue a stopped or killed calibration from its last completed round. More: docs/calibrate.md',
          ),
      async (a) => {
        const { calibrateCommand } = await import('./calibrate-command.js');
        process.exitCode = await calibrateCommand({
          ...tableArgs('sweep', a),
          file: a.file,
          out: a.out,
          budget: a.budget,
          seed: a.seed,
          population: a.population,
          input: collect(a.input),
          json: a.json,
          keepRuns: a['keep-runs'],
          concurrency: a.concurrency,
          threads: a.threads,
          queue: a.queue,
          attempts: a.attempts,
        });
      },
    )
    .command(
      'worker',
      'Run the runs that sop sweep --queue puts on a BullMQ queue in Redis (on any machine with the SOP files), or with --shards answer the population steps of sop run --shard-over',
      (y) =>
        y
          .option('queue', {
            type: 'string',
            demandOption: true,
            describe: 'Redis of the queue: redis:// or rediss://[USER:PASSWORD@]HOST:PORT',
          })
          .option('concurrency', { type: 'number', default: 4, describe: 'Runs at once in this worker' })
          .option('shared-limit', {
            type: 'number',
            describe:
              'LLM calls at once to each server, shared through this Redis by every worker started with --shared-limit (the last one started sets it; shard workers too)',
          })
          .option('out', { type: 'string', describe: "Keep run folders here instead of the sweep's --out (when it is not shared)" })
          .option('lock-ms', {
            type: 'number',
            describe:
              'Milliseconds before the run (or shard) of a worker that stopped answering goes to another (default 10000; 5000 with --shards)',
          })
          .option('root', {
            type: 'string',
            array: true,
            describe:
              "A folder the jobs' SOP files, runs folders and other files must be in, symlinks resolved (repeatable; default: this folder)",
          })
          .option('auto-run', {
            type: 'boolean',
            default: false,
            describe: "Let jobs run agents' code without asking (a sweep's --auto-run)",
          })
          .option('yes', { type: 'boolean', default: false, describe: "Let jobs accept every approval without asking (a sweep's --yes)" })
          .option('allow-base-url', {
            type: 'string',
            array: true,
            describe:
              "An LLM server jobs may send their calls (and this worker's OPENAI_API_KEY) to: a sweep's --base-url, or a server the SOP names (repeatable)",
          })
          .option('allow-base-url-env', {
            type: 'string',
            array: true,
            describe: "A server the jobs' SOPs name that may be sent this worker's key in VAR: URL=VAR (repeatable)",
          })
          .option('allow-answers', {
            type: 'boolean',
            default: false,
            describe: "Let jobs read an answers file (a sweep's --answers) inside --root",
          })
          .option('allow-pricing', {
            type: 'boolean',
            default: false,
            describe: "Let jobs read a pricing file (a sweep's --pricing) inside --root",
          })
          .option('allow-replay', {
            type: 'boolean',
            default: false,
            describe: 'Let jobs replay a cassette (--llm replay:FILE) inside --root',
          })
          // shards (docs/scale.md#one-step-over-many-workers)
          .option('shards', {
            type: 'boolean',
            default: false,
            describe: "Answer the LLM calls of population steps that sop run --shard-over queues (shard jobs), instead of sweeps' runs",
          })
          .option('llm', { type: 'string', describe: 'With --shards: openai | mock, the provider every call is asked of (default openai)' })
          .option('base-url', {
            type: 'string',
            describe:
              "With --shards: this worker's OpenAI-compatible server (or OPENAI_BASE_URL), with its OPENAI_API_KEY; jobs never name one",
          })
          .option('model', { type: 'string', describe: 'With --shards: ask every call of this model, whatever the job names' })
          .option('allow-model', {
            type: 'string',
            array: true,
            describe:
              "With --shards: a model name jobs may ask for (repeatable; '*': any); without it or --model, only the mock takes a job's model",
          })
          .option('shard-concurrency', { type: 'number', describe: 'With --shards: LLM calls this worker makes at once (default 64)' })
          .example('$0 worker --queue redis://127.0.0.1:6379 --concurrency 8', 'Run queued sweep runs until Ctrl-C or SIGTERM')
          .example(
            '$0 worker --queue redis://127.0.0.1:6379 --shards --base-url http://127.0.0.1:8000/v1 --allow-model qwen2.5-7b',
            'Answer population steps of sop run --shard-over with this server',
          )
          .example(
            '$0 worker --queue redis://127.0.0.1:6379 --shared-limit 300',
            'At most 300 LLM calls at once to each server, across all such workers',
          )
          .example(
            '$0 worker --queue rediss://sop:PASSWORD@redis-host:6380 --root /shared --allow-base-url https://llm.internal/v1',
            'Jobs under /shared, LLM calls to one server',
          )
          .epilog(
            "Needs SOP_QUEUE_SECRET, the same as the sweep's: jobs not signed with it are refused. A job that names a file or folder outside --root (its SOP's population, edge-list, knowledge and sub-flow files too), " +
              'or asks for what this worker does not allow, is recorded failed with the reason and nothing of it runs. More: docs/scale.md',
          ),
      async (a) => {
        const { workerCommand } = await import('./worker-command.js');
        process.exitCode = await workerCommand({
          queue: a.queue,
          concurrency: a.concurrency,
          sharedLimit: a['shared-limit'],
          out: a.out,
          lockMs: a['lock-ms'],
          root: collect(a.root),
          autoRun: a['auto-run'],
          yes: a.yes,
          allowBaseUrl: collect(a['allow-base-url']),
          allowBaseUrlEnv: collect(a['allow-base-url-env']),
          allowAnswers: a['allow-answers'],
          allowPricing: a['allow-pricing'],
          allowReplay: a['allow-replay'],
          shards: a.shards,
          llm: a.llm,
          baseUrl: a['base-url'],
          model: a.model,
          allowModel: collect(a['allow-model']),
          shardConcurrency: a['shard-concurrency'],
        });
      },
    )
    .command(
      'report <dir>',
      "Compare a run or a sweep with its SOP's targets: a table per target, DIR/report.md and a validity table in the results database",
      (y) =>
        y
          .positional('dir', { type: 'string', demandOption: true, describe: "A run folder, or a sweep's --out folder" })
          .option('check', { type: 'boolean', default: false, describe: 'Exit 1 when a target is missed (or not measured), naming it' })
          .option('verify', {
            type: 'boolean',
            default: false,
            describe:
              "Recompute DIR/provenance.json (the SOP's, data files' and model's SHA-256, the runs' outcomes) and name what changed; exit 1 if anything did",
          })
          .option('json', { type: 'boolean', default: false, describe: 'Print the results as JSON (one object per target)' })
          .example('$0 report OUT --check', "A sweep's targets; exit 1 naming each missed one")
          .example('$0 report OUT --verify', 'Has anything the sweep read or produced changed since?')
          .epilog('More: docs/validity.md'),
      async (a) => {
        const { reportCommand } = await import('./report-command.js');
        process.exitCode = await reportCommand({ dir: a.dir, check: a.check, verify: a.verify, json: a.json });
      },
    );
}
