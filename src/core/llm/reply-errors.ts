// What can go wrong with an answer the server did send: it stalls, is torn off, is not a chat
// completion, or is too large. The first three are retried like a 5xx; a reply over the size
// cap stops the run as `interrupted` (resume it with a larger cap). An empty reply is asked
// for once more by the provider (src/core/llm/openai.ts).
import { LlmError } from './types.js';
import { EngineError, opt, say } from '../../shared/errors.js';

export type ReplyFault = 'stalled' | 'torn' | 'malformed';

/** One attempt's answer was unusable; another attempt may do better (retried like a 5xx). */
export class ReplyFaultError extends EngineError {
  readonly retryable = true;
  constructor(
    readonly fault: ReplyFault,
    message: string,
  ) {
    super(message, 'REPLY_FAULT');
    this.name = 'ReplyFaultError';
  }
}

/** The reply is larger than the cap: refused, not retried; the run stops as `interrupted`. */
export class ReplyTooLargeError extends LlmError {
  readonly resumable = true;
  constructor(
    readonly endpoint: string,
    readonly limit: number,
  ) {
    super(
      say`LLM call failed: the reply from ${endpoint} is larger than the cap of ${limit} bytes, so it was refused and nothing of it was recorded; raise the cap with ${opt('maxReplyBytes')} (or llm.max_reply_bytes in the SOP) and resume`,
    );
    this.name = 'ReplyTooLargeError';
  }
}

/** Default cap on one reply: 512 KiB of text (UTF-8), tool call arguments included. */
export const DEFAULT_MAX_REPLY_BYTES = 512 * 1024;

/** Seconds, for messages ("3 s", "0.25 s"). */
export function seconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))} s`;
}
