// The LLM provider interface: every model call of the engine goes through `chat`.
import { EngineError } from '../../shared/errors.js';

export type ChatRole = 'system' | 'user' | 'assistant';
export interface ChatMessage {
  role: ChatRole;
  content: string;
  /**
   * The message as it goes to a server that is sent the call's tools natively (`meta.tools`, a
   * provider with function calling): the agent's command as an assistant `tool_calls` turn, its
   * result as a `tool` message, the system and last prompts without the text list of commands.
   * A provider that sends no tools (the mock, cassettes, a server that refused tools), the
   * journal and token estimates use `role` and `content`: the JSON command format.
   */
  native?: NativeMessage;
}

/** A function tool call of an earlier turn: `arguments` is a JSON text. */
export interface ToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type NativeMessage =
  | { role: 'assistant'; toolCalls: ToolCall[] }
  | { role: 'tool'; toolCallId: string; content: string }
  | { role: 'system' | 'user'; content: string };

/** What a call is for; providers and cassettes use it to check and to script replies. */
/** What a call is for; `embedding`: a paid embedder's request (counted in usage, never a chat call). */
export type CallPurpose = 'agent' | 'judge' | 'speaker' | 'summary' | 'tool' | 'embedding' | 'survey';

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
  /** Commands the agent must answer with (states with commands): name, executor, required arguments. */
  commands?: Array<{ name: string; executor: string; required: string[]; argTypes?: Record<string, { type: string; enum?: string[] }> }>;
  /** The commands as function tools (llm.tool_calls): a provider that supports tools offers them, and returns a tool call as the command's JSON. */
  tools?: ToolSpec[];
  /** One of the many calls of a population step: usage is counted by purpose and state, not by agent. */
  population?: boolean;
  /**
   * A shard of the call's prompt-cache route, added to its `prompt_cache_key` (population steps:
   * the step and a hash of the agent, so that no one key carries a whole step's calls).
   */
  cacheShard?: string;
  /**
   * Indexes of the prompt's messages that end a stable part (the system message, the summary, the
   * window): where a server that takes Anthropic-style cache breakpoints gets them (src/core/llm/cache-breakpoints.ts).
   */
  cacheBreaks?: number[];
  /** Population steps: argument values seen in the agent's observation, by argument name (the mock draws valid-looking arguments from them; never sent to a model). */
  argChoices?: Record<string, Array<string | number>>;
  /** Judge calls and command states: the graph around the state (the mock walks it in dry runs). */
  walk?: WalkInfo;
  /**
   * Calls made at once (a population step's): the call's effect key in the run (e.g. "1.2:a17",
   * stable across a resume). A cassette records it and replays such a call by it, in whatever
   * order the calls are made.
   */
  effect?: string;
}

/** The graph around a state, for a provider that walks it (never sent to a model). */
export interface WalkInfo {
  /** The run's --seed. */
  seed: number;
  /** The state's controller.max_turns. */
  maxTurns?: number;
  /** Every next_states key: its target, the fewest steps from there to a final state (-1: none), the target's visits so far. */
  routes: Array<{ key: string; target: string; steps: number; visits: number }>;
  /** Command states: command name -> the next_states key it takes when it succeeds. */
  commandKeys?: Record<string, string>;
  /** Turns of a visit before its first LLM turn (1 when the state opens with a begin_query). */
  turnsBefore: number;
}

/** A function tool: name, description and the JSON schema of its arguments. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** The server of a call whose LLM block names its own (llm.base_url, llm.api_key_env): src/core/llm/endpoints.ts. */
export interface LlmEndpoint {
  baseURL?: string;
  /** The environment variable holding its API key. */
  apiKeyEnv?: string;
}

export interface ChatRequest {
  messages: ChatMessage[];
  model: string;
  /** Another server than the run's (absent: the run's own). */
  endpoint?: LlmEndpoint;
  temperature?: number;
  maxTokens?: number;
  /** Stream deltas to `onDelta` as they arrive. */
  stream?: boolean;
  /**
   * Sent as `prompt_cache_key`: calls with the same key (and the same start) are routed to the same
   * prompt cache (the run, state and role; src/core/runtime/llm-call.ts promptCacheKey).
   */
  promptCacheKey?: string;
  /** The server takes Anthropic-style cache_control breakpoints (llm.cache_breakpoints): they go at `meta.cacheBreaks`. */
  cacheBreakpoints?: boolean;
  meta: CallMeta;
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
  /** Prompt tokens the provider served from its prompt cache (`usage.prompt_tokens_details.cached_tokens`), when it reports them. */
  cachedTokens?: number;
}

/** The tier a call is priced at: `batch`, a call sent in a batch file (answered within hours, at a discount; src/core/llm/pricing.ts). */
export type PriceTier = 'batch';

export interface ChatResponse {
  content: string;
  usage: Usage;
  /** Provider's model name, when it reports one. */
  model?: string;
  /** Why the reply ended ("stop", "length", ...), when the provider reports it (tracing: gen_ai.response.finish_reasons). */
  finishReason?: string;
  /** The messages as the provider sent them to its server, when they differ in form (openai: tool calls and results natively). */
  sent?: unknown[];
  /** The price tier the call is charged at, when not the standard one (`batch`: it was sent in a batch file). */
  priceTier?: PriceTier;
}

/** How far a call's generation has come (a model run in this process reports it: src/core/llm/local.ts). */
export interface CallProgress {
  /** Tokens of the prompt, once the model has begun reading it. */
  promptTokens: number;
  /** Reply tokens generated so far (0 while the prompt is read). */
  tokens: number;
}

export interface ChatOptions {
  onDelta?: (text: string) => void;
  signal?: AbortSignal;
  /**
   * Told when the model begins reading the prompt and at each token generated, with the counts
   * so far. Providers that generate in this process report it; a server's calls do not.
   */
  onProgress?: (progress: CallProgress) => void;
}

export interface LlmProvider {
  readonly id: string;
  chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse>;
  /** Flush anything pending (e.g. a cassette being recorded). */
  close?(): Promise<void>;
  /**
   * Its calls go to a server that may charge for them (not a cassette or the mock): a call in
   * flight is journaled as started, so a resume after a kill counts it when its reply is lost.
   */
  readonly paid?: boolean;
  /** Its calls cost nothing (a model run in this process): they are not priced. */
  readonly free?: boolean;
  /** What answers the calls, once known (a local model, its quantisation, runtime and seed): a recorded cassette's source says it. */
  readonly describe?: string;
  /** Replaying providers (cassettes): index of the next interaction; journaled at checkpoints. */
  readonly position?: number;
  /** Move to an interaction (a resumed run continues from the checkpoint's position). */
  seek?(position: number): void;
  /**
   * A resumed run reuses this call's reply from the journal instead of asking: a replayed cassette
   * steps over its interaction, one being recorded records it. Without it, the position moves on by one.
   */
  reused?(request: ChatRequest, response: ChatResponse): void;
}

/** Tell a provider that a reply was reused from the journal instead of asked for (see `LlmProvider.reused`). */
export function stepOver(llm: LlmProvider, request: ChatRequest, response: ChatResponse): void {
  if (llm.reused) llm.reused(request, response);
  else if (llm.position !== undefined) llm.seek?.(llm.position + 1);
}

/** A failure of the model call that the run cannot recover from. */
export class LlmError extends EngineError {
  constructor(
    message: string,
    readonly retryable = false,
    readonly status?: number,
  ) {
    super(message, 'LLM');
    this.name = 'LlmError';
  }
}

/**
 * The model stayed unreachable (rate limits, server errors, resets, timeouts) after the retries
 * allowed: the run stops as `interrupted`, and `sop resume` continues it later.
 */
export class LlmUnavailableError extends LlmError {
  readonly resumable = true;
  constructor(message: string, status?: number) {
    super(message, false, status);
    this.name = 'LlmUnavailableError';
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
