// The `sop` command line. Each command's module is imported only when it runs, so
// `sop --help` and `sop validate` start fast.
import yargs, { type Argv } from 'yargs';

const collect = (v: unknown): string[] => (v === undefined ? [] : Array.isArray(v) ? v.map(String) : [String(v)]);

export function buildCli(argv: string[]): Argv {
  return (
    yargs(argv)
      .scriptName('sop')
      .usage('$0 <command> [options]\n\nRun multi-agent simulations described as JSON SOP files.')
      .command(
        'run <file>',
        'Run a SOP (or an Agents 1.0 config) and write a run folder',
        (y) =>
          y
            .positional('file', {
              type: 'string',
              demandOption: true,
              describe: 'SOP file (.sop.json), or the name of a built-in SOP (sop list shows them)',
            })
            .option('llm', {
              type: 'string',
              describe:
                "openai | mock | replay:CASSETTE | local:MODEL.gguf (a GGUF model in process; local:hf:USER/REPO/FILE.gguf) (default: the SOP's llm.provider, else openai)",
            })
            .option('model', { type: 'string', describe: 'Use this model for every call' })
            .option('base-url', { type: 'string', describe: 'OpenAI-compatible server URL (or OPENAI_BASE_URL)' })
            .option('max-turns', { type: 'number', describe: 'Stop after this many turns (default 200)' })
            .option('concurrency', {
              type: 'number',
              describe: 'Population states: LLM calls a step makes at once (default 64; results never depend on it)',
            })
            .option('seed', { type: 'number', describe: 'Seed for random speaker choice (default 1)' })
            .option('record', { type: 'string', describe: 'Record every LLM call to this cassette file' })
            .option('out', { type: 'string', default: 'runs', describe: 'Folder where run folders are created' })
            .option('input', { type: 'string', array: true, describe: 'An input of the SOP, as name=value (repeatable)' })
            .option('goal', { type: 'string', describe: 'Shorthand for --input goal=TEXT' })
            .option('answers', {
              type: 'string',
              describe:
                'Human answers, one per line or a JSON list (for unattended runs); they never approve code: use --auto-run or --yes',
            })
            .option('json', { type: 'boolean', default: false, describe: 'Print run events as JSON lines on stdout' })
            .option('json-prompts', {
              type: 'boolean',
              default: false,
              describe: 'With --json, also print a "prompt" event (the messages sent, secrets redacted) before each llm_call',
            })
            .option('quiet', {
              type: 'boolean',
              default: false,
              describe: 'Print only the closing line (outcome, usage, run folder) and warnings',
            })
            .option('timeout', {
              type: 'number',
              describe:
                'Seconds an LLM request may wait for its answer, or go without new content in the middle of it (keep-alives do not count), before it is retried; a streamed answer must be whole within 10 x this, the streamed attempts of one call within 30 x this (default 120)',
            })
            .option('max-reply-bytes', { type: 'number', describe: 'Refuse an LLM reply larger than this many bytes (default 524288)' })
            .option('pricing', {
              type: 'string',
              describe: 'Prices of models (JSON like pricing.json) over the shipped pricing.json, for the cost',
            })
            .option('budget-tokens', {
              type: 'number',
              describe: "Stop (or move to the SOP budget's on_exhausted state) before a call would take the run past this many tokens",
            })
            .option('budget-usd', { type: 'number', describe: 'The same, in US dollars (priced with pricing.json)' })
            .option('trace-content', {
              type: 'boolean',
              default: false,
              describe: 'With OTEL_EXPORTER_OTLP_ENDPOINT set (tracing on): add prompts and replies, redacted, to the spans',
            })
            // memory (docs/memory.md)
            .option('embedder', {
              type: 'string',
              describe: 'Embeddings for retrieval: local (default) | transformers:MODEL_OR_FOLDER | openai:MODEL',
            })
            .option('top-k', {
              type: 'number',
              describe: "Earlier messages retrieved into each prompt by similarity (default: the SOP's, else 0)",
            })
            .option('max-chat-history', {
              type: 'number',
              describe:
                "Recent messages shown to agents (more until the next summary refresh), and the summary cadence (overrides the SOP's)",
            })
            // agents-v1 (docs/agents-v1.md)
            .option('compat', {
              choices: ['agents-v1'] as const,
              describe:
                'Reproduce the safe Agents 1.0 quirks (re-entry without a begin turn, " " opening line, call_last_prompt dropped, last prompts kept in memory)',
            })
            // actions (docs/executors.md)
            .option('auto-run', {
              type: 'boolean',
              default: false,
              describe: 'Run code written by agents without asking for approval first',
            })
            .option('yes', {
              type: 'boolean',
              default: false,
              describe: 'Accept every question, review and approval without asking (unattended runs)',
            })
            .option('tests', {
              type: 'string',
              describe:
                "A folder of your test files (test_*.py), run with every function ExtendLibrary tests or saves; a save is refused while they fail (the SOP's tests input)",
            })
            .option('sandbox', {
              type: 'boolean',
              describe:
                'Code runs under bubblewrap (no network, read-only filesystem except the workspace) when it works here; --sandbox requires it, --no-sandbox turns it off (with a warning); with --sandbox, stdio MCP servers run under it too',
            })
            .option('sandbox-network', {
              type: 'boolean',
              describe:
                'Give code network inside the sandbox (pip install, downloads), with a warning; files stay read-only except the workspace, where installs go',
            })
            // mcp (docs/tools.md)
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
            .option('allow-base-url', {
              type: 'string',
              array: true,
              describe:
                'Let the SOP send its LLM calls, with your OPENAI_API_KEY, to this server it names (llm.base_url): URL (repeatable; docs/tools.md)',
            })
            .option('allow-base-url-env', {
              type: 'string',
              array: true,
              describe: 'Let the SOP send its LLM calls, with the key in VAR, to this server it names: URL=VAR (repeatable)',
            })
            .option('bind', {
              type: 'string',
              array: true,
              describe:
                'Bind a tool slot to an MCP tool: SLOT=server/tool, e.g. web_search=search/web_search (repeatable; wins over the SOP)',
            })
            .option('memory-dir', {
              type: 'string',
              describe:
                "Keep the memory files (plan, logs, code_library) and the code library (library.py) in this folder, across runs (default: the SOP's memory_dir, else the run folder)",
            })
            // secrets (docs/executors.md)
            .option('redact', {
              type: 'string',
              array: true,
              describe:
                'Treat the value of this environment variable as a secret (repeatable); *_KEY, *_TOKEN, *_SECRET, *_PASS, *_PASSWORD, *_PAT, *_CREDENTIALS and URL credentials are already',
            }),
        async (a) => {
          const { runCommand } = await import('./run-command.js');
          process.exitCode = await runCommand({
            file: a.file,
            llm: a.llm,
            model: a.model,
            baseUrl: a['base-url'],
            maxTurns: a['max-turns'],
            concurrency: a.concurrency,
            seed: a.seed,
            record: a.record,
            out: a.out,
            inputs: collect(a.input),
            goal: a.goal,
            answers: a.answers,
            json: a.json,
            jsonPrompts: a['json-prompts'],
            quiet: a.quiet,
            timeoutMs: a.timeout !== undefined ? a.timeout * 1000 : undefined,
            maxReplyBytes: a['max-reply-bytes'],
            embedder: a.embedder,
            topK: a['top-k'],
            maxChatHistory: a['max-chat-history'],
            compat: a.compat,
            autoRun: a['auto-run'],
            yes: a.yes,
            sandbox: a.sandbox,
            sandboxNetwork: a['sandbox-network'],
            bind: collect(a.bind),
            allowMcp: collect(a['allow-mcp']),
            allowMcpEnv: collect(a['allow-mcp-env']),
            allowBaseUrl: collect(a['allow-base-url']),
            allowBaseUrlEnv: collect(a['allow-base-url-env']),
            redact: collect(a.redact),
            pricing: a.pricing,
            memoryDir: a['memory-dir'],
            budgetTokens: a['budget-tokens'],
            budgetUsd: a['budget-usd'],
            traceContent: a['trace-content'],
            tests: a.tests,
          });
        },
      )
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
              describe: "With --check-tools: start the SOP's MCP servers without asking (their ${VAR} still need --allow-mcp-env)",
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
          const { validateCommand } = await import('./validate-command.js');
          // with --check-tools a file is "ok" only once its tools are too: the tools check says it, or the problem
          process.exitCode = validateCommand(collect(a.files), { quiet: a.quiet || a['check-tools'] === true });
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
          y
            .positional('file', { type: 'string', demandOption: true, describe: 'SOP file' })
            .option('runs', { type: 'number', default: 5, describe: 'Dry runs, with seeds 1..N (different judge paths)' })
            .option('max-turns', { type: 'number', describe: 'Stop each dry run after this many turns (default 200)' })
            .option('pricing', { type: 'string', describe: 'Prices of models over the shipped pricing.json' })
            .option('input', { type: 'string', array: true, describe: 'An input of the SOP, as name=value (repeatable)' })
            .option('goal', { type: 'string', describe: 'Shorthand for --input goal=TEXT' })
            .option('json', { type: 'boolean', default: false, describe: 'Print the report as one JSON object' })
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
      )
      // --- durable runs: resume, fork, runs, show (src/journal, docs/durability.md) ---
      .command(
        'resume <dir>',
        'Continue an interrupted or killed run from its last turn boundary (options not given: as its last resume, else its start, had them)',
        (y) => continueOptions(y.positional('dir', { type: 'string', demandOption: true, describe: 'Run folder' })),
        async (a) => {
          const { resumeCommand } = await import('./resume-command.js');
          process.exitCode = await resumeCommand({ dir: a.dir, ...continueArgs(a) });
        },
      )
      .command(
        'fork <dir>',
        'Start a new run from the state of a run after a given turn (e.g. to try another model; options not given: as at that turn)',
        (y) =>
          continueOptions(y.positional('dir', { type: 'string', demandOption: true, describe: 'Run folder' }))
            .option('at', { type: 'number', describe: 'Turn to branch after (0: before the first turn)' })
            .option('step', {
              type: 'number',
              describe: "Population states: branch before this step of the run's population state (the turn before it)",
            })
            .option('state', { type: 'string', describe: 'With --step: the population state (default: the first one the run visited)' })
            .check((a) => (a.at === undefined) !== (a.step === undefined) || 'give one of --at TURN or --step STEP')
            .option('out', { type: 'string', describe: 'Folder for the new run folder (default: next to the original)' }),
        async (a) => {
          const { forkCommand } = await import('./fork-command.js');
          process.exitCode = await forkCommand({ dir: a.dir, at: a.at, step: a.step, state: a.state, out: a.out, ...continueArgs(a) });
        },
      )
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
            .conflicts('csv', 'json')
            .example('$0 query runs/RUN "select step, count(*) as actions from actions group by step order by step"', 'Actions per step')
            .example(
              `$0 query runs/RUN "select a.party, count(*) from actions x join agents a on a.id = x.agent where x.name = 'repost' group by 1" --csv`,
              'Reposts by party, as CSV',
            )
            .epilog(
              'The database is built from the journal when it is missing or older than it. Queries cannot read or write files. More: docs/population.md#results',
            ),
        async (a) => {
          const { queryCommand } = await import('./query-command.js');
          process.exitCode = await queryCommand({ dir: a.dir, sql: a.sql, format: a.json ? 'json' : a.csv ? 'csv' : 'table' });
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
      )
      // --- many runs: sweep, worker (src/sweep, docs/sweep.md) ---
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
            .option('concurrency', { type: 'number', describe: 'Runs at once in this process (default 8)' })
            .option('threads', {
              type: 'number',
              describe: 'Worker threads sharing those runs (default: one per core once there are at least 2 x --concurrency runs)',
            })
            .option('llm', {
              type: 'string',
              describe:
                "openai | mock | replay:CASSETTE | local:MODEL.gguf (a GGUF model in process; local:hf:USER/REPO/FILE.gguf) (default: the SOP's llm.provider, else openai)",
            })
            .option('base-url', { type: 'string', describe: 'OpenAI-compatible server URL (or OPENAI_BASE_URL)' })
            .option('allow-base-url', {
              type: 'string',
              array: true,
              describe:
                "Let the SOP send its LLM calls, with OPENAI_API_KEY, to this server it names: URL (repeatable; on a queue, the workers' flag decides)",
            })
            .option('allow-base-url-env', {
              type: 'string',
              array: true,
              describe: 'The same, with the key in VAR: URL=VAR (repeatable)',
            })
            .option('max-turns', { type: 'number', describe: 'Stop each run after this many turns (default 200)' })
            .option('timeout', { type: 'number', describe: 'Seconds an LLM request may take (default 120)' })
            .option('yes', { type: 'boolean', default: false, describe: 'Accept every question, review and approval without asking' })
            .option('auto-run', { type: 'boolean', default: false, describe: 'Run code written by agents without asking' })
            .option('pricing', { type: 'string', describe: 'Prices of models over the shipped pricing.json, for the cost' })
            .option('budget-tokens', {
              type: 'number',
              describe: 'Stop each run (status budget) before a call would take it past this many tokens',
            })
            .option('budget-usd', { type: 'number', describe: 'The same, in US dollars (priced with pricing.json)' })
            .option('answers', {
              type: 'string',
              describe: 'Human answers for every run (each reads the file from its start): one per line or a JSON list',
            })
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
            .example(
              '$0 sweep debate.sop.json --seeds 1-500 --queue redis://127.0.0.1:6379 --out /shared/debates',
              'On sop worker processes',
            )
            .epilog('Run the same command again to continue a stopped sweep. More: docs/sweep.md, docs/scale.md'),
        async (a) => {
          const { sweepCommand } = await import('./sweep-command.js');
          process.exitCode = await sweepCommand({
            file: a.file,
            out: a.out,
            seeds: a.seeds,
            inputs: a.inputs,
            input: collect(a.input),
            model: a.model,
            repeat: a.repeat,
            concurrency: a.concurrency,
            threads: a.threads,
            llm: a.llm,
            baseUrl: a['base-url'],
            allowBaseUrl: collect(a['allow-base-url']),
            allowBaseUrlEnv: collect(a['allow-base-url-env']),
            maxTurns: a['max-turns'],
            timeoutMs: a.timeout !== undefined ? a.timeout * 1000 : undefined,
            yes: a.yes,
            autoRun: a['auto-run'],
            pricing: a.pricing,
            budgetTokens: a['budget-tokens'],
            budgetUsd: a['budget-usd'],
            answers: a.answers,
            queue: a.queue,
            detach: a.detach,
            collect: a.collect,
            attempts: a.attempts,
          });
        },
      )
      .command(
        'worker',
        'Run the runs that sop sweep --queue puts on a BullMQ queue in Redis (on any machine with the SOP files)',
        (y) =>
          y
            .option('queue', {
              type: 'string',
              demandOption: true,
              describe: 'Redis of the queue: redis:// or rediss://[USER:PASSWORD@]HOST:PORT',
            })
            .option('concurrency', { type: 'number', default: 4, describe: 'Runs at once in this worker' })
            .option('out', { type: 'string', describe: "Keep run folders here instead of the sweep's --out (when it is not shared)" })
            .option('lock-ms', {
              type: 'number',
              describe: 'Milliseconds before the run of a worker that stopped answering goes to another (default 10000)',
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
            .example('$0 worker --queue redis://127.0.0.1:6379 --concurrency 8', 'Run queued sweep runs until Ctrl-C or SIGTERM')
            .example(
              '$0 worker --queue rediss://sop:PASSWORD@redis-host:6380 --root /shared --allow-base-url https://llm.internal/v1',
              'Jobs under /shared, LLM calls to one server',
            )
            .epilog(
              "Needs SOP_QUEUE_SECRET, the same as the sweep's: jobs not signed with it are refused. A job that names a file or folder outside --root, " +
                'or asks for what this worker does not allow, is recorded failed with the reason and nothing of it runs. More: docs/scale.md',
            ),
        async (a) => {
          const { workerCommand } = await import('./worker-command.js');
          process.exitCode = await workerCommand({
            queue: a.queue,
            concurrency: a.concurrency,
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
          });
        },
      )
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
      })
  );
}

/** Options shared by resume and fork (defaults come from the journaled run). */
function continueOptions<T>(y: Argv<T>) {
  return y
    .option('llm', { type: 'string', describe: 'openai | mock | replay:CASSETTE | local:MODEL.gguf (default: as the run was started)' })
    .option('model', { type: 'string', describe: 'Use this model for every call' })
    .option('base-url', { type: 'string', describe: 'OpenAI-compatible server URL' })
    .option('max-turns', { type: 'number', describe: 'Stop after this many turns in all' })
    .option('concurrency', { type: 'number', describe: 'Population states: LLM calls a step makes at once (default 64)' })
    .option('record', {
      type: 'string',
      describe:
        "Record the LLM calls to this cassette file; the run's own --record file is continued (its earlier calls kept), so it replays the whole run",
    })
    .option('answers', { type: 'string', describe: "Human answers file (default: the run's own, continued where it was)" })
    .option('auto-run', {
      type: 'boolean',
      default: false,
      describe: 'Run code without asking, and again code a crash interrupted (default: as the run was started)',
    })
    .option('redact', {
      type: 'string',
      array: true,
      describe: "Treat the value of this environment variable as a secret (repeatable; added to the run's own)",
    })
    .option('json', { type: 'boolean', default: false, describe: 'Print run events as JSON lines on stdout' })
    .option('json-prompts', {
      type: 'boolean',
      default: false,
      describe: 'With --json, also print a "prompt" event (the messages sent, secrets redacted) before each llm_call',
    })
    .option('quiet', { type: 'boolean', default: false, describe: 'Print only the closing line (outcome, usage, run folder) and warnings' })
    .option('timeout', {
      type: 'number',
      describe: 'Seconds an LLM request may wait for its answer, or go without new content in the middle of it (keep-alives do not count)',
    })
    .option('max-reply-bytes', {
      type: 'number',
      describe: 'Refuse an LLM reply larger than this many bytes (default: as the run was started, else 524288)',
    })
    .option('pricing', { type: 'string', describe: 'Prices of models over the shipped pricing.json (default: as the run was started)' })
    .option('budget-tokens', { type: 'number', describe: 'A token budget for the whole run (default: as the run was started)' })
    .option('budget-usd', { type: 'number', describe: 'A budget in US dollars for the whole run (default: as the run was started)' })
    .option('allow-mcp', {
      type: 'string',
      array: true,
      describe: 'Let the MCP server NAME start without asking, besides those allowed when the run started (repeatable)',
    })
    .option('allow-mcp-env', {
      type: 'string',
      array: true,
      describe: 'Let MCP server NAME read the environment variable VAR: NAME=VAR (repeatable; allows NAME too)',
    })
    .option('allow-base-url', {
      type: 'string',
      array: true,
      describe:
        'Let the SOP send its LLM calls, with OPENAI_API_KEY, to this server it names, besides those allowed when the run started: URL (repeatable)',
    })
    .option('allow-base-url-env', {
      type: 'string',
      array: true,
      describe: 'The same, with the key in VAR: URL=VAR (repeatable)',
    });
}

function continueArgs(a: {
  llm?: string;
  model?: string;
  'base-url'?: string;
  'max-turns'?: number;
  concurrency?: number;
  record?: string;
  answers?: string;
  'auto-run': boolean;
  json: boolean;
  'json-prompts': boolean;
  quiet: boolean;
  timeout?: number;
  'max-reply-bytes'?: number;
  redact?: string[];
  pricing?: string;
  'budget-tokens'?: number;
  'budget-usd'?: number;
  'allow-mcp'?: string[];
  'allow-mcp-env'?: string[];
  'allow-base-url'?: string[];
  'allow-base-url-env'?: string[];
}) {
  return {
    llm: a.llm,
    model: a.model,
    baseUrl: a['base-url'],
    maxTurns: a['max-turns'],
    concurrency: a.concurrency,
    record: a.record,
    answers: a.answers,
    redact: collect(a.redact),
    autoRun: a['auto-run'],
    json: a.json,
    jsonPrompts: a['json-prompts'],
    quiet: a.quiet,
    timeoutMs: a.timeout !== undefined ? a.timeout * 1000 : undefined,
    maxReplyBytes: a['max-reply-bytes'],
    pricing: a.pricing,
    budgetTokens: a['budget-tokens'],
    budgetUsd: a['budget-usd'],
    allowMcp: collect(a['allow-mcp']),
    allowMcpEnv: collect(a['allow-mcp-env']),
    allowBaseUrl: collect(a['allow-base-url']),
    allowBaseUrlEnv: collect(a['allow-base-url-env']),
  };
}
