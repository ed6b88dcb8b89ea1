// The options of the option table (./option-table.ts) that the API has and no flag: their entries.
import type { OptionSpec } from './option-spec.js';

/** Options of RunSopOptions with no flag (objects of your own, and what the CLI sets itself). */
export const API_ONLY_OPTIONS = {
  runId: { api: 'runId', doc: 'the id of the run (default: made of the time and the SOP name)' },
  human: { api: 'human', doc: 'a `HumanInput` of your own (overrides `answers` and `terminal`)' },
  terminal: {
    api: 'terminal',
    default: 'false',
    doc: "a person at this process's terminal: human turns (with `answers`, only approvals), and the approvals of MCP servers, of the SOP's LLM servers and of interrupted code; `sop run` sets it when stdin is a terminal",
  },
  signal: { api: 'signal', doc: 'an `AbortSignal`; aborting ends the run as `interrupted`' },
  mcpSandbox: { api: 'mcpSandbox', default: 'as code', doc: 'stdio MCP servers run under bubblewrap' },
  mcpApproval: {
    api: 'mcpApproval',
    doc: "who lets MCP servers start ([tools.md](tools.md#starting-a-server-needs-your-approval)): `{ unattended, allow, ask }`; `allow: cliAllowEntries(['notes'], ['notes=VAR'])` is `--allow-mcp notes --allow-mcp-env notes=VAR`",
  },
  workspace: { api: 'workspace', doc: 'the workspace folder of a run kept in memory (code executors need one)' },
  environment: { api: 'environment', doc: "the shared memory of the run (default: a MemoryEnvironment with the SOP's settings)" },
  stream: { api: 'stream', default: 'true', doc: "emit `delta` events while agents' replies stream" },
  prompts: {
    api: 'prompts',
    default: 'false',
    doc: 'tell `prompt` events (the messages each LLM call was sent, secrets redacted) to iterators and listeners too (the journal keeps them anyway)',
  },
  resultsDb: {
    api: 'resultsDb',
    default: 'true',
    doc: 'write RUN/population.duckdb when a run with population states ends; false leaves it to `sop query` and `sop export`, which build it when missing',
  },
  file: { api: 'file', doc: 'the SOP file, for a SOP given as an object (relative paths in it are resolved from its folder)' },
  plugins: { api: 'plugins', doc: 'features of your own, plugged into the run (below)' },
  listeners: { api: 'listeners', doc: 'synchronous listeners, called with every event before iterators see it' },
  rerun: { api: 'rerun', doc: 'interrupted side effects of a resumed run: run again with `autoRun`, or ask `approve`' },
  launch: { api: 'launch', doc: 'recorded in run_started (what a resume reuses; default: made from these options by this table)' },
} as const satisfies Record<string, OptionSpec>;
