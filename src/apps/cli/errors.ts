// Errors shown to a person: one clear message, no stack trace (unless SOP_DEBUG=1).
// The engine's messages name API options (`options.autoRun`, `options.inputs.goal`); the CLI
// shows its own flags instead (`--auto-run`, `--input goal=VALUE`): OPTION_FLAGS is the one table.
import { SopError, formatDiagnostic } from '../../format/sop/diagnostics.js';
import { makeRedactor } from '../../shared/util/redact.js';

type Replacement = string | ((match: string, ...groups: string[]) => string);

/** How core messages name an API option -> how the CLI names it (first the longer phrases). */
export const OPTION_FLAGS: ReadonlyArray<readonly [RegExp, Replacement]> = [
  // the option is in milliseconds, the flag in seconds
  [
    /options\.timeoutMs must be a number of milliseconds, at least 1 \(got ([^)]*)\)/g,
    (_m, v) => `--timeout must be a number of seconds above 0 (got ${String(Number(v) / 1000)})`,
  ],
  [
    /options\.batchPollMs must be a number of milliseconds above 0 \(got ([^)]*)\)/g,
    (_m, v) => `--batch-poll must be a number of seconds above 0 (got ${String(Number(v) / 1000)})`,
  ],
  [/options\.llmMode\b/g, '--llm-mode'],
  [/options\.shardOver\b/g, '--shard-over'],
  [/options\.batchTarget\b/g, '--batch-target'],
  [/options\.out\b/g, '--out'],
  [/resumeRun\(RUN_DIR\) with options\.autoRun\b/g, 'sop resume RUN_DIR --auto-run'],
  [/options\.inputs\.([A-Za-z_][A-Za-z0-9_]*)/g, '--input $1=VALUE'],
  [/options\.budget\.tokens\b/g, '--budget-tokens'],
  [/options\.budget\.usd\b/g, '--budget-usd'],
  [/options\.autoRun\b/g, '--auto-run'],
  [/options\.yes\b/g, '--yes'],
  [/no options\.answers\b/g, 'no --answers'],
  [/options\.answers\b/g, '--answers FILE'],
  [/options\.topK N\b/g, '--top-k N'],
  [/options\.maxTurns\b/g, '--max-turns'],
  [/options\.maxReplyBytes\b/g, '--max-reply-bytes'],
  [/options\.timeoutMs\b/g, '--timeout'],
  [/options\.llm\b/g, '--llm'],
  [/options\.baseUrl\b/g, '--base-url'],
  [/options\.memoryDir\b/g, '--memory-dir'],
  [/options\.sandboxNetwork\b/g, '--sandbox-network'],
  [/options\.sandbox false\b/g, '--no-sandbox'],
  [/options\.sandbox true\b/g, '--sandbox'],
  [/options\.sandbox\b/g, '--sandbox'],
  [/options\.bind\b/g, '--bind'],
  [/options\.topK\b/g, '--top-k'],
  [/options\.maxChatHistory\b/g, '--max-chat-history'],
  [/options\.embedder\b/g, '--embedder'],
];

/** A message of the engine as the CLI says it: API options named by their flags. */
export function cliMessage(message: string): string {
  let out = message;
  for (const [pattern, flag] of OPTION_FLAGS) out = typeof flag === 'string' ? out.replace(pattern, flag) : out.replace(pattern, flag);
  return out;
}

export function reportError(err: unknown, stream: NodeJS.WritableStream = process.stderr): number {
  const redact = makeRedactor();
  if (err instanceof SopError) {
    for (const d of err.diagnostics) stream.write(redact(formatDiagnostic(d)) + '\n');
    return 1;
  }
  const message = cliMessage(err instanceof Error ? err.message : String(err));
  stream.write(redact(`error: ${message}`) + '\n');
  if (process.env.SOP_DEBUG === '1' && err instanceof Error && err.stack) stream.write(redact(err.stack) + '\n');
  return 1;
}
