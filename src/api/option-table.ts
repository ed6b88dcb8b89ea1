// The one table of a run's options. Each option is declared here once: its name in the API
// (RunSopOptions, src/api/options.ts), its flag, the flag's type and unit, its default, whether a
// resume keeps it (the launch setting run_started records) and its help text for each command that
// takes it. The CLI's options of run, resume, fork and sweep (src/apps/cli/option-flags.ts), the
// launch settings (./launch.ts), the names errors give options (src/apps/cli/errors.ts) and the
// table of docs/api.md (`npm run docs:options`) are made from it. This file imports nothing that
// runs, so `sop --help` stays fast.
import { API_ONLY_OPTIONS } from './option-table-api.js';
import { POPULATION_OPTIONS } from './option-table-population.js';
import { SEAT_OPTIONS } from './option-table-seats.js';
import { TRUST_OPTIONS } from './option-table-trust.js';
import { both, type FlagUse, type OptionCommand, type OptionSpec, unionList } from './option-spec.js';

export type { FlagUse, OptionCommand, OptionSpec };

/** The options of a run, in the order the run command lists its flags. */
export const OPTIONS = {
  llm: {
    api: 'llm',
    flag: 'llm',
    type: 'string',
    default: "the SOP's llm.provider, else openai",
    resume: { key: 'llm', absolute: 'llm' },
    on: {
      run: "openai | mock | replay:CASSETTE | local:MODEL.gguf (a GGUF model in process; local:hf:USER/REPO/FILE.gguf) (default: the SOP's llm.provider, else openai)",
      ...both('openai | mock | replay:CASSETTE | local:MODEL.gguf (default: as the run was started)'),
      sweep:
        "openai | mock | replay:CASSETTE | local:MODEL.gguf (a GGUF model in process; local:hf:USER/REPO/FILE.gguf) (default: the SOP's llm.provider, else openai)",
    },
    doc: "`'openai'`, `'mock'`, `'replay:CASSETTE'`, `'local:MODEL.gguf'`, `'local'`, or a provider object",
  },
  model: {
    api: 'model',
    flag: 'model',
    type: 'string',
    on: { run: 'Use this model for every call', ...both('Use this model for every call') },
    doc: 'use this model for every call',
  },
  baseUrl: {
    api: 'baseUrl',
    flag: 'base-url',
    type: 'string',
    metavar: 'URL',
    default: "the SOP's llm.base_url, else OPENAI_BASE_URL",
    resume: { key: 'base_url' },
    on: {
      run: 'OpenAI-compatible server URL (or OPENAI_BASE_URL)',
      ...both('OpenAI-compatible server URL'),
      sweep: 'OpenAI-compatible server URL (or OPENAI_BASE_URL)',
    },
    doc: 'OpenAI-compatible server (with `llm` openai); it replaces every server the SOP names',
  },
  maxTurns: {
    api: 'maxTurns',
    flag: 'max-turns',
    type: 'number',
    metavar: 'N',
    default: '200',
    on: {
      run: 'Stop after this many turns (default 200)',
      ...both('Stop after this many turns in all'),
      sweep: 'Stop each run after this many turns (default 200)',
    },
    doc: 'stop after this many turns',
  },
  concurrency: {
    api: 'concurrency',
    flag: 'concurrency',
    type: 'number',
    default: '64',
    on: {
      run: 'Population states: LLM calls a step makes at once (default: 64; results never depend on it); the most, as calls at once adapt to 429s and rate-limit headers',
      ...both(
        'Population states: LLM calls a step makes at once (default: as the run was started; results never depend on it); the most, as calls at once adapt to 429s and rate-limit headers',
      ),
    },
    doc: 'population states: LLM calls a step makes at once (results never depend on it)',
  },
  shardOver: {
    api: 'shardOver',
    flag: 'shard-over',
    type: 'string',
    on: {
      run: "Population states: send each step's LLM calls, in shards, to sop worker --shards processes on this Redis (redis:// or rediss://[USER:PASSWORD@]HOST:PORT); needs SOP_QUEUE_SECRET (results never depend on the workers)",
      ...both(
        "Population states: send each step's LLM calls, in shards, to sop worker --shards processes on this Redis (redis:// or rediss://[USER:PASSWORD@]HOST:PORT); needs SOP_QUEUE_SECRET (results never depend on the workers)",
      ),
    },
    doc: "population states: send each step's LLM calls to `sop worker --shards` processes over this Redis, in shard jobs signed with SOP_QUEUE_SECRET ([scale.md](scale.md))",
  },
  shardSize: {
    api: 'shardSize',
    flag: 'shard-size',
    type: 'number',
    default: '1000',
    on: {
      run: 'With --shard-over: LLM calls per shard job (default 1000)',
      ...both('With --shard-over: LLM calls per shard job (default 1000)'),
    },
    doc: 'calls per shard job with `shardOver`',
  },
  llmMode: {
    api: 'llmMode',
    flag: 'llm-mode',
    type: 'string',
    choices: ['direct', 'batch'],
    default: "each state's llm_mode, else direct",
    resume: { key: 'llm_mode' },
    on: {
      run: "Population states: batch sends each step's calls as one batch file (OpenAI Batch API at batch prices, or vllm run-batch), direct one request each (default: each state's llm_mode, else direct)",
      ...both(
        "Population states: batch sends each step's calls as one batch file (OpenAI Batch API at batch prices, or vllm run-batch), direct one request each (default: as the run was started)",
      ),
    },
    doc: "population states: `'batch'` sends each step's calls as one batch file ([population.md](population.md#batch-mode)), `'direct'` one request each",
  },
  batchTarget: {
    api: 'batchTarget',
    flag: 'batch-target',
    type: 'string',
    choices: ['openai', 'vllm'],
    default: 'openai',
    resume: { key: 'batch_target' },
    on: {
      run: "Batch mode: openai (the Batch API of the run's server) or vllm (writes RUN/batches/*.input.jsonl and waits for the output file of the vllm run-batch command it prints) (default: openai)",
      ...both(
        "Batch mode: openai (the Batch API of the run's server) or vllm (writes RUN/batches/*.input.jsonl and waits for the output file of the vllm run-batch command it prints) (default: as the run was started)",
      ),
    },
    doc: "batch mode: `'openai'` (the OpenAI Batch API of the run's server) or `'vllm'` (a file for `vllm run-batch`, in the run folder)",
  },
  batchPollMs: {
    api: 'batchPollMs',
    flag: 'batch-poll',
    type: 'number',
    unit: { api: 'milliseconds', flag: 'seconds', scale: 1000 },
    default: '60000',
    resume: { key: 'batch_poll_ms' },
    on: {
      run: 'Batch mode: the longest wait between two polls of a batch, in seconds (default: 60)',
      ...both('Batch mode: the longest wait between two polls of a batch, in seconds (default: as the run was started)'),
    },
    doc: 'batch mode: the longest wait between two polls of a batch, in ms (the first is 1 s)',
  },
  localThreads: {
    api: false,
    flag: 'local-threads',
    type: 'number',
    on: {
      run: '--llm local: CPU threads of the model (as SOP_LOCAL_THREADS; default: the cores but one, at least 1, so other work does not stall its spinning threads)',
      ...both(
        '--llm local: CPU threads of the model (as SOP_LOCAL_THREADS; default: the cores but one, at least 1, so other work does not stall its spinning threads)',
      ),
    },
  },
  seed: {
    api: 'seed',
    flag: 'seed',
    type: 'number',
    default: '1',
    on: { run: 'Seed for random speaker choice (default 1)' },
    doc: 'the seed of random speaker choice',
  },
  record: {
    api: 'record',
    flag: 'record',
    type: 'string',
    metavar: 'FILE',
    on: {
      run: 'Record every LLM call to this cassette file',
      ...both(
        "Record the LLM calls to this cassette file; the run's own --record file is continued (its earlier calls kept), so it replays the whole run",
      ),
    },
    doc: 'record every LLM call to this cassette file',
  },
  out: {
    api: 'out',
    flag: 'out',
    type: 'string',
    on: {
      run: { help: 'Folder where run folders are created', default: 'runs' },
      fork: 'Folder for the new run folder (default: next to the original)',
    },
    doc: 'folder where the run folder (journal, transcripts, memory files, workspace) is created; omit it and the run is kept in memory',
  },
  inputs: {
    api: 'inputs',
    flag: 'input',
    type: 'array',
    metavar: 'NAME=VALUE',
    on: { run: 'An input of the SOP, as name=value (repeatable)' },
    doc: "the SOP's inputs",
  },
  goal: { api: false, flag: 'goal', type: 'string', on: { run: 'Shorthand for --input goal=TEXT' } },
  pluginOptions: {
    api: 'pluginOptions',
    flag: 'plugin-option',
    type: 'array',
    metavar: 'PLUGIN.OPTION=VALUE',
    on: { run: 'An option a plugin the SOP names declares, as PLUGIN.OPTION=VALUE (repeatable; a wrong one lists those it declares)' },
    doc: 'options of plugins of your own, by plugin name (`{ clock: { tick_ms: 500 } }`); each plugin is handed only those it declares',
  },
  answers: {
    api: 'answers',
    flag: 'answers',
    type: 'string',
    metavar: 'FILE',
    resume: { key: 'answers', absolute: 'path' },
    on: {
      run: 'Human answers, one per line or a JSON list (for unattended runs); they never approve code: use --auto-run or --yes',
      ...both("Human answers file (default: the run's own, continued where it was)"),
      sweep: 'Human answers for every run (each reads the file from its start): one per line or a JSON list',
    },
    doc: 'human turns and questions: an answers file, or the answers in order',
  },
  json: {
    api: false,
    flag: 'json',
    type: 'boolean',
    on: {
      run: { help: 'Print run events as JSON lines on stdout', default: false },
      ...both({ help: 'Print run events as JSON lines on stdout', default: false }),
    },
  },
  jsonPrompts: {
    api: false,
    flag: 'json-prompts',
    type: 'boolean',
    on: {
      run: { help: 'With --json, also print a "prompt" event (the messages sent, secrets redacted) before each llm_call', default: false },
      ...both({
        help: 'With --json, also print a "prompt" event (the messages sent, secrets redacted) before each llm_call',
        default: false,
      }),
    },
  },
  quiet: {
    api: false,
    flag: 'quiet',
    type: 'boolean',
    on: {
      run: { help: 'Print only the closing line (outcome, usage, run folder) and warnings', default: false },
      ...both({ help: 'Print only the closing line (outcome, usage, run folder) and warnings', default: false }),
    },
  },
  timeoutMs: {
    api: 'timeoutMs',
    flag: 'timeout',
    type: 'number',
    unit: { api: 'milliseconds', flag: 'seconds', scale: 1000 },
    default: "120000 (the SOP's llm.timeout_ms)",
    resume: { key: 'timeout_ms' },
    on: {
      run: 'Seconds an LLM request may wait for its answer, or go without new content in the middle of it (keep-alives do not count), before it is retried; a streamed answer must be whole within 10 x this, the streamed attempts of one call within 30 x this (default 120)',
      ...both('Seconds an LLM request may wait for its answer, or go without new content in the middle of it (keep-alives do not count)'),
      sweep: 'Seconds an LLM request may take (default 120)',
    },
    doc: 'timeout of one LLM request, in ms',
  },
  maxReplyBytes: {
    api: 'maxReplyBytes',
    flag: 'max-reply-bytes',
    type: 'number',
    default: "524288 (the SOP's llm.max_reply_bytes)",
    resume: { key: 'max_reply_bytes' },
    on: {
      run: 'Refuse an LLM reply larger than this many bytes (default 524288)',
      ...both('Refuse an LLM reply larger than this many bytes (default: as the run was started, else 524288)'),
    },
    doc: 'refuse an LLM reply larger than this many bytes',
  },
  pricing: {
    api: 'pricing',
    flag: 'pricing',
    type: 'string',
    metavar: 'FILE',
    resume: { key: 'pricing', absolute: 'path' },
    on: {
      run: 'Prices of models (JSON like pricing.json) over the shipped pricing.json, for the cost',
      ...both('Prices of models over the shipped pricing.json (default: as the run was started)'),
      sweep: 'Prices of models over the shipped pricing.json, for the cost',
    },
    doc: 'a pricing file whose models replace those of the shipped pricing.json ([cost.md](cost.md))',
  },
  budgetTokens: {
    api: ['budget', 'tokens'],
    flag: 'budget-tokens',
    type: 'number',
    resume: { key: 'budget_tokens' },
    on: {
      run: "Stop (or move to the SOP budget's on_exhausted state) before a call would take the run past this many tokens",
      ...both('A token budget for the whole run (default: as the run was started)'),
      sweep: 'Stop each run (status budget) before a call would take it past this many tokens',
    },
    doc: "a token budget of the whole run, besides the SOP's own `budget` ([cost.md](cost.md))",
  },
  budgetUsd: {
    api: ['budget', 'usd'],
    flag: 'budget-usd',
    type: 'number',
    resume: { key: 'budget_usd' },
    on: {
      run: 'The same, in US dollars (priced with pricing.json)',
      ...both('A budget in US dollars for the whole run (default: as the run was started)'),
      sweep: 'The same, in US dollars (priced with pricing.json)',
    },
    doc: 'a budget in US dollars of the whole run (priced with pricing.json)',
  },
  traceContent: {
    api: 'traceContent',
    flag: 'trace-content',
    type: 'boolean',
    default: 'false',
    resume: { key: 'trace_content' },
    on: {
      run: {
        help: 'With OTEL_EXPORTER_OTLP_ENDPOINT set (tracing on): add prompts and replies, redacted, to the spans',
        default: false,
      },
    },
    doc: 'with tracing on (OTEL_EXPORTER_OTLP_ENDPOINT): prompts and replies as span events, redacted',
  },
  embedder: {
    api: 'embedder',
    flag: 'embedder',
    type: 'string',
    default: "the SOP's environment.embedder, else local",
    on: { run: 'Embeddings for retrieval: local (default) | transformers:MODEL_OR_FOLDER | openai:MODEL' },
    doc: "an `Embedder`, or a spec (`local`, `transformers:MODEL`, `openai:MODEL`); loaded before the run when top_k is above 0 (an `openai:` one at `baseUrl`, else the SOP's server)",
  },
  topK: {
    api: 'topK',
    flag: 'top-k',
    type: 'number',
    metavar: 'N',
    default: "the SOP's environment.top_k, else 0",
    on: { run: "Earlier messages retrieved into each prompt by similarity (default: the SOP's, else 0)" },
    doc: 'retrieve this many relevant earlier messages into each prompt',
  },
  maxChatHistory: {
    api: 'maxChatHistory',
    flag: 'max-chat-history',
    type: 'number',
    default: "the SOP's",
    on: {
      run: "Recent messages shown to agents (more until the next summary refresh), and the summary cadence (overrides the SOP's)",
    },
    doc: 'the recent window of every agent, in messages',
  },
  compat: {
    api: 'compat',
    flag: 'compat',
    choices: ['agents-v1'],
    on: {
      run: 'Reproduce the safe Agents 1.0 quirks (re-entry without a begin turn, " " opening line, call_last_prompt dropped, last prompts kept in memory)',
    },
    doc: "`'agents-v1'`: reproduce the safe Agents 1.0 quirks ([agents-v1.md](agents-v1.md))",
  },
  autoRun: {
    api: 'autoRun',
    flag: 'auto-run',
    type: 'boolean',
    default: 'false',
    resume: { key: 'auto_run', merge: 'either' },
    on: {
      run: { help: 'Run code written by agents without asking for approval first', default: false },
      ...both({
        help: 'Run code without asking, and again code a crash interrupted (default: as the run was started)',
        default: false,
      }),
      sweep: { help: 'Run code written by agents without asking', default: false },
    },
    doc: 'run code written by agents without asking first',
  },
  yes: {
    api: 'yes',
    flag: 'yes',
    type: 'boolean',
    default: 'false',
    resume: { key: 'yes' },
    on: {
      run: { help: 'Accept every question, review and approval without asking (unattended runs)', default: false },
      sweep: { help: 'Accept every question, review and approval without asking', default: false },
      ...both(
        "Accept every question, review and approval without asking, and load the plugin modules the run's SOP names (default: as the run was started, but a plugin module needs --yes given again, a yes at the terminal or the allow file)",
      ),
    },
    doc: 'accept every question, review and approval without asking',
  },
  ...SEAT_OPTIONS, // seats played from web pages (./option-table-seats.ts)
  plan: {
    api: false,
    flag: 'plan',
    type: 'boolean',
    on: {
      run: 'Predict the run with sop plan before it starts; RUN/plan.json, usage.json and sop runs show it beside the run (docs/plan.md)',
    },
  },
  tests: {
    api: false,
    flag: 'tests',
    type: 'string',
    on: {
      run: "A folder of your test files (test_*.py), run with every function ExtendLibrary tests or saves; a save is refused while they fail (the SOP's tests input)",
    },
  },
  ...TRUST_OPTIONS, // sandbox, allow-lists and bind address (./option-table-trust.ts)
  memoryDir: {
    api: 'memoryDir',
    flag: 'memory-dir',
    type: 'string',
    default: "the SOP's memory_dir, else the run folder",
    resume: { key: 'memory_dir', absolute: 'path' },
    on: {
      run: "Keep the memory files (plan, logs, code_library) and the code library (library.py) in this folder, across runs (default: the SOP's memory_dir, else the run folder)",
    },
    doc: 'the memory files and the code library in this folder, across runs; locked while the run uses it',
  },
  redact: unionList(false, 'redact', ',', {
    run: 'Treat the value of this environment variable as a secret (repeatable); *_KEY, *_TOKEN, *_SECRET, *_PASS, *_PASSWORD, *_PAT, *_CREDENTIALS and URL credentials are already',
    ...both("Treat the value of this environment variable as a secret (repeatable; added to the run's own)"),
  }),
  ...POPULATION_OPTIONS, // whole saves of population visits, and where a fork branches (./option-table-population.ts)
  ...API_ONLY_OPTIONS, // the API's only (./option-table-api.ts)
} as const satisfies Record<string, OptionSpec>;
