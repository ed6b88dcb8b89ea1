// `sop resume` and `sop fork` (src/features/journal, docs/durability.md): their shared options, whose
// defaults come from the journaled run.
import type { Argv } from 'yargs';
import { collect } from './collect.js';
import { stepArgs, stepFlags } from './step-flags.js';

export function withContinueCommands<T>(y: Argv<T>): Argv<T> {
  return y
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
    );
}

/** Options shared by resume and fork (defaults come from the journaled run). */
function continueOptions<T>(y: Argv<T>) {
  return stepFlags(
    y
      .option('llm', { type: 'string', describe: 'openai | mock | replay:CASSETTE | local:MODEL.gguf (default: as the run was started)' })
      .option('model', { type: 'string', describe: 'Use this model for every call' })
      .option('base-url', { type: 'string', describe: 'OpenAI-compatible server URL' })
      .option('max-turns', { type: 'number', describe: 'Stop after this many turns in all' }),
    true,
  )
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

function continueArgs(
  a: Parameters<typeof stepArgs>[0] & {
    llm?: string;
    model?: string;
    'base-url'?: string;
    'max-turns'?: number;
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
  },
) {
  return {
    llm: a.llm,
    model: a.model,
    baseUrl: a['base-url'],
    maxTurns: a['max-turns'],
    ...stepArgs(a),
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
