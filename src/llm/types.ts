// The LLM provider interface: every model call of the engine goes through `chat`.

export type ChatRole = 'system' | 'user' | 'assistant';
export interface ChatMessage { role: ChatRole; content: string }

/** What a call is for; providers and cassettes use it to check and to script replies. */
export type CallPurpose = 'agent' | 'judge' | 'speaker' | 'summary' | 'tool';

export interface CallMeta {
  purpose: CallPurpose;
  state: string;
  /** Agent name for agent/tool calls. */
  agent?: string;
  role?: string;
  /** Global turn number of the run (1-based) this call belongs to. */
  turn: number;
  /** Turns already taken in the current state. */
  turnInState?: number;
  /** Roles a speaker call may choose from. */
  candidates?: string[];
  /** Judge keys the state accepts (e.g. ["0", "1"]). */
  judgeKeys?: string[];
  /** Tag the answer is extracted from. */
  extractWord?: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  model: string;
  temperature?: number;
  maxTokens?: number;
  /** Stream deltas to `onDelta` as they arrive. */
  stream?: boolean;
  meta: CallMeta;
}

export interface Usage { promptTokens: number; completionTokens: number }

export interface ChatResponse {
  content: string;
  usage: Usage;
  /** Provider's model name, when it reports one. */
  model?: string;
}

export interface ChatOptions {
  onDelta?: (text: string) => void;
  signal?: AbortSignal;
}

export interface LlmProvider {
  readonly id: string;
  chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse>;
  /** Flush anything pending (e.g. a cassette being recorded). */
  close?(): Promise<void>;
}

/** A failure of the model call that the run cannot recover from. */
export class LlmError extends Error {
  constructor(message: string, readonly retryable = false, readonly status?: number) {
    super(message);
    this.name = 'LlmError';
  }
}

/** Rough token count (about 4 characters per token) used when a provider reports no usage. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export function estimateUsage(messages: ChatMessage[], completion: string): Usage {
  let prompt = 0;
  for (const m of messages) prompt += estimateTokens(m.content) + 4;
  return { promptTokens: prompt, completionTokens: estimateTokens(completion) };
}
