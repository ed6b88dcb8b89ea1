// `sop run`: its options and how they map to runCommand (./run-command.ts), imported only when it runs.
import type { Argv } from 'yargs';
import { collect } from './collect.js';
import { stepArgs, stepFlags } from './step-flags.js';

export function withRunCommand<T>(y: Argv<T>): Argv<T> {
  return y.command(
    'run <file>',
    'Run a SOP (or an Agents 1.0 config) and write a run folder',
    (y) =>
      stepFlags(
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
          .option('max-turns', { type: 'number', describe: 'Stop after this many turns (default 200)' }),
        false,
      )
        .option('seed', { type: 'number', describe: 'Seed for random speaker choice (default 1)' })
        .option('record', { type: 'string', describe: 'Record every LLM call to this cassette file' })
        .option('out', { type: 'string', default: 'runs', describe: 'Folder where run folders are created' })
        .option('input', { type: 'string', array: true, describe: 'An input of the SOP, as name=value (repeatable)' })
        .option('goal', { type: 'string', describe: 'Shorthand for --input goal=TEXT' })
        .option('answers', {
          type: 'string',
          describe: 'Human answers, one per line or a JSON list (for unattended runs); they never approve code: use --auto-run or --yes',
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
          describe: "Recent messages shown to agents (more until the next summary refresh), and the summary cadence (overrides the SOP's)",
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
        .option('plan', {
          type: 'boolean',
          describe:
            'Predict the run with sop plan before it starts; RUN/plan.json, usage.json and sop runs show it beside the run (docs/plan.md)',
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
          describe: 'Bind a tool slot to an MCP tool: SLOT=server/tool, e.g. web_search=search/web_search (repeatable; wins over the SOP)',
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
        ...stepArgs(a),
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
        plan: a.plan,
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
  );
}
