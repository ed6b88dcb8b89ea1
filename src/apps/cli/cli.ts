// The `sop` command line. Each command's module is imported only when it runs, so
// `sop --help` and `sop validate` start fast.
import yargs, { type Argv } from 'yargs';
import { collect } from './collect.js';
import { withRunCommand } from './command-run.js';
import { withContinueCommands } from './commands-continue.js';
import { withManyRunsCommands } from './commands-many-runs.js';
import { withPlanCommand } from './command-plan.js';
import { withDryRunOptions } from './dry-run-options.js';

export function buildCli(argv: string[]): Argv {
  const top = yargs(argv).scriptName('sop').usage('$0 <command> [options]\n\nRun multi-agent simulations described as JSON SOP files.');
  const single = withPlanCommand(withRunCommand(top))
    .command(
      'list',
      'List the built-in SOPs (sops/ of the package) with their descriptions',
      (y) => y,
      async () => {
        const { listCommand } = await import('./builtin-sops.js');
        process.exitCode = listCommand();
      },
    )
    .command(
      'validate <files..>',
      'Check SOP files: the schema, the graph rules, every template, and what run checks at start-up (sub-flow files, command arguments)',
      (y) =>
        y
          .positional('files', { type: 'string', array: true, demandOption: true, describe: 'SOP files' })
          .option('quiet', { type: 'boolean', default: false, describe: 'Print errors only' })
          .option('check-tools', {
            type: 'boolean',
            default: false,
            describe:
              "Start the SOP's MCP servers, with your approval as a run asks it, and check that every tool its states grant is one a server lists",
          })
          .option('yes', {
            type: 'boolean',
            default: false,
            describe:
              'Load the JavaScript modules the SOP names in "plugins" without asking; with --check-tools, start its MCP servers without asking too (their ${VAR} still need --allow-mcp-env)',
          })
          .option('allow-mcp', {
            type: 'string',
            array: true,
            describe: 'Let the MCP server NAME of the SOP start without asking (repeatable; docs/tools.md)',
          })
          .option('allow-mcp-env', {
            type: 'string',
            array: true,
            describe:
              'Let MCP server NAME read the environment variable VAR through ${VAR} in its declaration: NAME=VAR (repeatable; allows NAME too)',
          })
          .option('sandbox', {
            type: 'boolean',
            describe: 'With --check-tools: stdio MCP servers run under bubblewrap when it works here (default); --no-sandbox: not',
          })
          .option('allow-base-url', {
            type: 'string',
            array: true,
            describe:
              'With --check-tools: an LLM server the SOP names that a run may send calls to, with OPENAI_API_KEY: URL (repeatable); the others are told',
          })
          .option('allow-base-url-env', {
            type: 'string',
            array: true,
            describe: 'With --check-tools: the same, with the key in VAR: URL=VAR (repeatable)',
          }),
      async (a) => {
        const { validateWithPlugins } = await import('./validate-command.js');
        // with --check-tools a file is "ok" only once its tools are too: the tools check says it, or the problem
        process.exitCode = await validateWithPlugins(collect(a.files), { quiet: a.quiet || a['check-tools'] === true, yes: a.yes });
        if (a['check-tools'] && process.exitCode === 0) {
          const { checkToolsCommand } = await import('./check-tools-command.js'); // mcp
          process.exitCode = await checkToolsCommand(collect(a.files), {
            quiet: a.quiet,
            yes: a.yes,
            allowMcp: collect(a['allow-mcp']),
            allowMcpEnv: collect(a['allow-mcp-env']),
            allowBaseUrl: collect(a['allow-base-url']),
            allowBaseUrlEnv: collect(a['allow-base-url-env']),
            sandbox: a.sandbox,
          });
        }
      },
    )
    .command(
      'check <file>',
      'Estimate what a SOP costs: dry-run it with the mock over several seeds, and print LLM calls, tokens, cost per model and warnings',
      (y) =>
        withDryRunOptions(
          y
            .positional('file', { type: 'string', demandOption: true, describe: 'SOP file' })
            .option('runs', { type: 'number', default: 5, describe: 'Dry runs, with seeds 1..N (different judge paths)' }),
        )
          .option('allow-base-url', {
            type: 'string',
            array: true,
            describe:
              'An LLM server the SOP names that a real run may send calls to, with OPENAI_API_KEY: URL (repeatable); the others are warned of',
          })
          .option('allow-base-url-env', {
            type: 'string',
            array: true,
            describe: 'The same, with the key in VAR: URL=VAR (repeatable)',
          })
          .example('$0 check examples/debate/debate.sop.json', 'Calls, tokens and cost per run over 5 dry runs')
          .example('$0 check sops/coder.sop.json --goal "sum a CSV column" --runs 10 --json', 'A SOP with a required input, as JSON')
          .epilog('Exit code 1 when a dry run failed. More: docs/cost.md'),
      async (a) => {
        const { checkCommand } = await import('./check-command.js');
        process.exitCode = await checkCommand({
          file: a.file,
          runs: a.runs,
          maxTurns: a['max-turns'],
          pricing: a.pricing,
          inputs: collect(a.input),
          goal: a.goal,
          json: a.json,
          allowBaseUrl: collect(a['allow-base-url']),
          allowBaseUrlEnv: collect(a['allow-base-url-env']),
        });
      },
    )
    .command(
      'graph <file>',
      'Print the state graph as a Mermaid diagram',
      (y) => y.positional('file', { type: 'string', demandOption: true, describe: 'SOP file' }),
      async (a) => {
        const { graphCommand } = await import('./graph-command.js');
        process.exitCode = graphCommand(a.file);
      },
    )
    .command(
      'import <file>',
      'Convert an Agents 1.0 config into a SOP file, reporting every key it cannot carry',
      (y) =>
        y
          .positional('file', { type: 'string', demandOption: true, describe: 'Agents 1.0 config (JSON)' })
          .option('o', { alias: 'out', type: 'string', describe: 'Write the SOP here (default: print it)' })
          .option('force', { type: 'boolean', default: false, describe: 'Overwrite the output file' }),
      async (a) => {
        const { importCommand } = await import('./import-command.js');
        process.exitCode = importCommand({ file: a.file, out: a.o, force: a.force });
      },
    );
  // --- durable runs: resume, fork, runs, show (src/features/journal, docs/durability.md) ---
  const durable = withContinueCommands(single)
    .command(
      'runs',
      'List run folders with their status (finished, max_turns, budget, failed, interrupted, running, killed)',
      (y) =>
        y
          .option('out', { type: 'string', default: 'runs', describe: 'Folder holding the run folders' })
          .option('json', { type: 'boolean', default: false, describe: 'One JSON object per run' }),
      async (a) => {
        const { runsCommand } = await import('./runs-command.js');
        process.exitCode = runsCommand({ out: a.out, json: a.json });
      },
    )
    .command(
      'view [dir]',
      'Look at runs in the browser: a local, read-only web viewer of a run folder (or of every run under --out), live while they run',
      (y) =>
        y
          .positional('dir', { type: 'string', describe: 'Run folder (default: list the runs under --out)' })
          .option('out', { type: 'string', default: 'runs', describe: 'Folder holding the run folders' })
          .option('port', { type: 'number', default: 0, describe: 'Port to listen on (0: any free port)' })
          .option('host', { type: 'string', default: '127.0.0.1', describe: 'Address to listen on' })
          .option('open', { type: 'boolean', default: true, describe: 'Open a browser on the URL (--no-open: only print it)' })
          .option('as', { type: 'string', describe: 'With a run folder: show the transcript as this agent may see it (audiences)' }),
      async (a) => {
        const { viewCommand } = await import('./view-command.js');
        process.exitCode = await viewCommand({ dir: a.dir, out: a.out, host: a.host, port: a.port, open: a.open, as: a.as });
      },
    )
    .command(
      'show <dir>',
      'Print the transcript of a run, derived from its journal',
      (y) =>
        y
          .positional('dir', { type: 'string', demandOption: true, describe: 'Run folder' })
          .option('format', {
            choices: ['markdown', 'jsonl', 'events'] as const,
            default: 'markdown' as const,
            describe: "markdown transcript, jsonl messages, or the journal's effective events",
          })
          .option('prompts', { type: 'boolean', default: false, describe: 'Print the messages each LLM call was sent instead' })
          .option('turn', { type: 'number', describe: 'With --prompts: only the calls of this turn' })
          .option('agent', { type: 'string', describe: 'With --prompts: only the calls of this agent' }),
      async (a) => {
        const { showCommand } = await import('./show-command.js');
        process.exitCode = showCommand({ dir: a.dir, format: a.format, prompts: a.prompts, turn: a.turn, agent: a.agent });
      },
    )
    // --- population results: query, export (src/api/results-db.ts, docs/population.md#results) ---
    .command(
      'query <dir> <sql>',
      "Run SQL over a run's population tables (RUN/population.duckdb: run, agents, steps, actions, metrics, surveys), read-only",
      (y) =>
        y
          .positional('dir', { type: 'string', demandOption: true, describe: 'Run folder of a SOP with population states' })
          .positional('sql', {
            type: 'string',
            demandOption: true,
            describe: 'SQL (DuckDB); the result of the last statement is printed',
          })
          .option('csv', { type: 'boolean', describe: 'Print CSV (a header row; NULL as an empty field)' })
          .option('json', { type: 'boolean', describe: 'Print one JSON array of row objects' })
          .option('timeout', {
            type: 'number',
            default: 60,
            describe: 'Seconds the query may run; past them it is stopped with one line (exit 1)',
          })
          .option('memory-limit', {
            type: 'string',
            describe:
              "Memory the query may use, such as 2GB or 512MiB (default: a quarter of the machine's memory); past it, one line (exit 1)",
          })
          .conflicts('csv', 'json')
          .example('$0 query runs/RUN "select step, count(*) as actions from actions group by step order by step"', 'Actions per step')
          .example(
            `$0 query runs/RUN "select a.party, count(*) from actions x join agents a on a.id = x.agent where x.name = 'repost' group by 1" --csv`,
            'Reposts by party, as CSV',
          )
          .epilog(
            'The database is built from the journal when it is missing or older than it. Queries cannot read or write files, and are stopped past --timeout or --memory-limit. More: docs/population.md#results',
          ),
      async (a) => {
        const { queryCommand } = await import('./query-command.js');
        process.exitCode = await queryCommand({
          dir: a.dir,
          sql: a.sql,
          format: a.json ? 'json' : a.csv ? 'csv' : 'table',
          timeoutMs: a.timeout * 1000,
          ...(a.memoryLimit !== undefined ? { memoryLimit: a.memoryLimit } : {}),
        });
      },
    )
    .command(
      'export <dir>',
      "Write a run's population tables (run, agents, steps, actions, metrics, surveys) as files",
      (y) =>
        y
          .positional('dir', { type: 'string', demandOption: true, describe: 'Run folder of a SOP with population states' })
          .option('parquet', {
            type: 'string',
            demandOption: true,
            describe: 'Folder to write TABLE.parquet files into (made if missing)',
          })
          .example('$0 export runs/RUN --parquet results/', 'results/agents.parquet, results/actions.parquet, ...')
          .epilog('More: docs/population.md#results'),
      async (a) => {
        const { exportCommand } = await import('./export-command.js');
        process.exitCode = await exportCommand({ dir: a.dir, parquet: a.parquet });
      },
    );
  // --- many runs: sweep, worker (src/apps/sweep, docs/sweep.md) ---
  const cli = withManyRunsCommands(durable)
    .demandCommand(1, 'Name a command (sop --help lists them).')
    .strict()
    .recommendCommands()
    .example('$0 run examples/debate/debate.sop.json --llm replay:examples/debate/debate.cassette.json', 'Replay the debate offline')
    .example('$0 run examples/debate/debate.sop.json --llm mock --max-turns 20', 'Dry-run a SOP with placeholder replies')
    .example('$0 validate sops/*.json', 'Check SOP files')
    .help()
    .alias('h', 'help')
    .version()
    .wrap(Math.min(110, process.stdout.columns || 100))
    .fail((msg, err) => {
      if (err) throw err;
      process.stderr.write(`${msg}\n\nRun "sop --help" for usage.\n`);
      process.exit(2);
    });
  skipHelpCache(cli);
  return cli;
}

/**
 * yargs lays out a command's whole help text each time it runs the command, in case the handler
 * later calls showHelp() (its command.js calls cacheHelpMessage() after the handler starts): for
 * `sop run`'s options, 40 to 70 ms of CPU in every run, and `sop` never shows help from a handler.
 * `--help` and usage errors lay out their text themselves and are unchanged. Skipped (yargs keeps
 * its cache) if a later yargs changes this internal.
 */
function skipHelpCache(cli: Argv): void {
  const internal = (cli as unknown as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: unknown } } })
    .getInternalMethods?.()
    .getUsageInstance?.();
  if (internal && typeof internal.cacheHelpMessage === 'function') internal.cacheHelpMessage = () => undefined;
}
