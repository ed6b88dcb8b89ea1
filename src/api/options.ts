// The options of a run (runSop, resumeRun, forkRun, and the CLI's commands through startRun). Each one
// has its entry in the option table (./option-table.ts): its flag, unit, default, whether a resume
// keeps it, and its help text (a compile error there names an option declared here and not there).
import type { HumanInput } from '../core/io/human.js';
import type { LlmProvider } from '../core/llm/types.js';
import type { Embedder } from '../core/memory/embedder.js';
import type { EnvironmentMemory } from '../core/environment/environment.js';
import type { RunListener } from '../core/runtime/events.js';
import type { PluginFactory } from '../core/runtime/hooks.js';
import type { RerunPolicy } from '../features/journal/effects.js';
import type { McpApproval } from '../features/mcp/approval.js';

/**
 * openai (default: the SOP's llm.provider, else openai), mock, replay:CASSETTE, local:MODEL.gguf
 * (a GGUF model run in this process; local:hf:USER/REPO/FILE.gguf downloads it), local (the
 * SOP's llm.model of each call), or a provider of your own.
 */
export type LlmChoice = 'mock' | 'openai' | `replay:${string}` | 'local' | `local:${string}` | LlmProvider;

/** How a population step's LLM calls go out (docs/population.md, docs/scale.md). */
export interface StepScaleOptions {
  /** Population states: LLM calls a step makes at once (default 64). Results never depend on it. */
  concurrency?: number;
  /**
   * Population states: send each step's LLM calls to `sop worker --shards` processes over this Redis
   * (redis:// or rediss://[USER:PASSWORD@]HOST:PORT), in shard jobs signed with SOP_QUEUE_SECRET
   * (docs/scale.md#one-step-over-many-workers). Results never depend on the workers.
   */
  shardOver?: string;
  /** Calls per shard job with `shardOver` (default 1000). */
  shardSize?: number;
  /**
   * Population states: batch sends each step's calls as one batch file (docs/population.md#batch-mode),
   * direct one request each; unset: each state's own `llm_mode` (default direct).
   */
  llmMode?: 'direct' | 'batch';
  /** Batch mode: openai (the OpenAI Batch API of the run's server, the default) or vllm (a file for `vllm run-batch`, in the run folder). */
  batchTarget?: 'openai' | 'vllm';
  /** Batch mode: the longest wait between two polls of a batch, ms (default 60000; the first is 1 s). */
  batchPollMs?: number;
  /**
   * Population states: a visit is saved whole in a checkpoint once this many steps have passed
   * since its last whole save, with at least twice the population's size in actions applied
   * (default: each state's `snapshots.steps`, else 50; docs/population.md#durability).
   */
  snapshotSteps?: number;
  /** Population states: ... or once this many actions were applied since (default: each state's `snapshots.actions`, else 1,000,000). */
  snapshotActions?: number;
}

export interface RunSopOptions extends StepScaleOptions {
  llm?: LlmChoice;
  /** Use this model for every call. */
  model?: string;
  /** OpenAI-compatible server (llm: 'openai'; default: the SOP's llm.base_url, else OPENAI_BASE_URL). */
  baseUrl?: string;
  /** Timeout of one LLM request in milliseconds. */
  timeoutMs?: number;
  /** Refuse an LLM reply larger than this many bytes (default: the SOP's llm.max_reply_bytes, else 512 KiB). */
  maxReplyBytes?: number;
  /** Record every LLM call to this cassette file. */
  record?: string;
  inputs?: Record<string, string>;
  /** Seed of random speaker choice (default 1). */
  seed?: number;
  /** Stop after this many turns (default 200). */
  maxTurns?: number;
  /** Folder where the run folder (journal, transcripts, memory files, workspace) is created; omit for a run kept in memory. */
  out?: string;
  runId?: string;
  /** Human turns and questions: an answers file, or the answers in order. */
  answers?: string | readonly string[];
  /** Human input of your own (overrides answers and terminal). */
  human?: HumanInput;
  /**
   * A person at this process's terminal (stdin, stderr): human turns and questions are asked
   * there (with `answers`, only approvals are), and so are the approvals of MCP servers, of the
   * SOP's LLM servers and of code a crash interrupted. The CLI sets it when stdin is a terminal.
   */
  terminal?: boolean;
  /** Aborting ends the run as interrupted. */
  signal?: AbortSignal;
  /** Run code written by agents without asking first (--auto-run). */
  autoRun?: boolean;
  /** Accept every question, review and approval without asking (--yes). */
  yes?: boolean;
  /** Run code under bubblewrap (--sandbox). */
  sandbox?: boolean;
  /** Code gets network inside the sandbox (--sandbox-network), with a warning; a code command's `network: true` asks the same. */
  sandboxNetwork?: boolean;
  /** mcp: run stdio MCP servers under bubblewrap (default: as code, so whenever it works here); tool slots bound to MCP tools (--bind). */
  mcpSandbox?: boolean;
  bind?: Record<string, string>;
  /**
   * mcp: who allows the SOP's MCP servers to start, and the variables each may read (docs/tools.md).
   * Default: `yes` or `autoRun` (starts only), the user's allow file, and a person at `human` when it is a terminal.
   */
  mcpApproval?: McpApproval;
  /** mcp: servers allowed to start (NAME) and the variables they may read (NAME=VAR), besides the allow file (--allow-mcp, --allow-mcp-env). */
  allowMcp?: string[];
  allowMcpEnv?: string[];
  /**
   * llm: servers the SOP names (llm.base_url at any level) that its calls may go to, with
   * OPENAI_API_KEY (`allowBaseUrl`: URLs) or with the key in VAR (`allowBaseUrlEnv`: "URL=VAR").
   * Besides these, the user's allow file and a person at `human` when it is a terminal; `baseUrl`
   * replaces every server of the SOP (src/core/llm/consent.ts, docs/tools.md).
   */
  allowBaseUrl?: string[];
  allowBaseUrlEnv?: string[];
  /** Workspace folder of a run kept in memory (a run with `out` uses its folder's workspace/). */
  workspace?: string;
  /**
   * Embedder for retrieval, or its spec (local, transformers:MODEL, openai:MODEL) over the SOP's
   * environment.embedder (--embedder). Made and loaded before the run when top_k is above 0; an
   * openai embedder goes to `baseUrl` (else the SOP's server) and draws on the run's retry budget.
   */
  embedder?: Embedder | string;
  /** Retrieve this many relevant earlier messages (--top-k; over the SOP's environment.top_k). */
  topK?: number;
  /** The recent window of every agent, in messages (--max-chat-history; over the SOP's and its states'). */
  maxChatHistory?: number;
  /** The shared memory of the run (default: a MemoryEnvironment with the SOP's settings). */
  environment?: EnvironmentMemory;
  /** Emit `delta` events while agents' replies stream (default true). */
  stream?: boolean;
  /**
   * Tell `prompt` events (the messages each LLM call was sent, secrets redacted) to iterators and
   * listeners too (default false: only the run folder's journal keeps them).
   */
  prompts?: boolean;
  /**
   * Write RUN/population.duckdb when a run with population states ends (default true); false
   * leaves it to `sop query` and `sop export`, which build it from the journal when it is missing
   * (sop calibrate's runs: their metrics are read from the journal).
   */
  resultsDb?: boolean;
  /** Reproduce the safe Agents 1.0 quirks. */
  compat?: 'agents-v1';
  /** The SOP file, for a SOP given as an object (relative paths in it are resolved from its folder). */
  file?: string;
  /** Features of your own, plugged into the run (src/core/runtime/hooks.ts). */
  plugins?: PluginFactory;
  /**
   * Options of plugins of your own, by plugin name: `{ clock: { tick_ms: 500 } }`. Each plugin is
   * handed only the options its definePlugin declares (strings are read in the declared type).
   */
  pluginOptions?: Record<string, Record<string, unknown>>;
  /** Called synchronously with every event, before iterators see it (e.g. a terminal display). */
  listeners?: RunListener[];
  /** Interrupted side effects of a resumed run: run again with autoRun, or ask `approve`. */
  rerun?: RerunPolicy;
  /** Recorded in run_started (defaults for sop resume). */
  launch?: Record<string, string | number | boolean>;
  /** A pricing file whose models replace those of the shipped pricing.json (--pricing). */
  pricing?: string;
  /** A folder where the memory files and the code library last across runs (default: the SOP's memory_dir). */
  memoryDir?: string;
  /** Budgets of the whole run, besides the SOP's own `budget` (--budget-tokens, --budget-usd; docs/cost.md). */
  budget?: { tokens?: number; usd?: number };
  /** With tracing on (OTEL_EXPORTER_OTLP_ENDPOINT): prompts and replies as span events, redacted (--trace-content). */
  traceContent?: boolean;
}
