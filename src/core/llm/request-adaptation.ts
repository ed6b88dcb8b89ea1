// What an OpenAI-compatible server refuses in a chat request, and how the request is adapted:
// reasoning models (OpenAI's o-series and gpt-5) take `max_completion_tokens` instead of
// `max_tokens` and only their default temperature; some servers reject `stream_options` (older
// Azure API versions) or function tools (Ollama models without tool support, vLLM without a tool
// parser), or `prompt_cache_key` (servers that check for unknown parameters). Such a server answers HTTP 400 naming the parameter; the provider then sends the
// request without it, once per model, and says so in one warning (src/core/llm/openai.ts).

export type Adaptation = 'max_completion_tokens' | 'no_temperature' | 'no_stream_options' | 'no_tools' | 'no_prompt_cache_key';

/** The parts of a chat request body the adaptations touch. */
export interface AdaptableBody {
  model: string;
  temperature?: number;
  max_tokens?: number;
  max_completion_tokens?: number;
  stream_options?: unknown;
  tools?: unknown;
  tool_choice?: unknown;
  prompt_cache_key?: unknown;
}

/** The error a server answered with: its HTTP status, message and (OpenAI's) `param` and `code`. */
export interface RefusedRequest {
  status: number | undefined;
  message: string;
  param?: unknown;
  code?: unknown;
}

const mentions = (text: string, word: RegExp) => word.test(text);
/** Words of a server saying it does not take a parameter at all (not that its value is out of range). */
const NOT_TAKEN =
  /unsupported|not supported|does not support|unrecognized|unknown|not allowed|not permitted|requires|only the default|not enabled/i;

/**
 * The adaptation a refusal asks for, among those not taken yet; undefined when the refusal is
 * about something else (a bad model name, a prompt too long...), which stays an error.
 */
export function adaptationFor(refused: RefusedRequest, body: AdaptableBody, taken: ReadonlySet<Adaptation>): Adaptation | undefined {
  if (refused.status !== 400 && refused.status !== 422) return undefined;
  const param = typeof refused.param === 'string' ? refused.param : '';
  const text = `${param} ${refused.message}`;
  if (!NOT_TAKEN.test(text) && !/^unsupported_/.test(String(refused.code ?? ''))) return undefined;
  const candidates: Array<[Adaptation, boolean]> = [
    ['max_completion_tokens', body.max_tokens !== undefined && (param === 'max_tokens' || mentions(text, /\bmax_tokens\b/))],
    ['no_temperature', body.temperature !== undefined && (param === 'temperature' || mentions(text, /\btemperature\b/i))],
    ['no_stream_options', body.stream_options !== undefined && mentions(text, /\bstream_options\b/)],
    [
      'no_prompt_cache_key',
      body.prompt_cache_key !== undefined && (param === 'prompt_cache_key' || mentions(text, /\bprompt_cache_key\b/)),
    ],
    [
      'no_tools',
      body.tools !== undefined &&
        (param === 'tools' || param === 'tool_choice' || mentions(text, /\btools?\b|\btool_choice\b|tool[ -]call|function[ -]call/i)),
    ],
  ];
  return candidates.find(([a, applies]) => applies && !taken.has(a))?.[0];
}

/** The body with the adaptations applied. */
export function adaptBody<B extends AdaptableBody>(body: B, taken: ReadonlySet<Adaptation>): B {
  if (taken.size === 0) return body;
  const out: B = { ...body };
  if (taken.has('max_completion_tokens') && out.max_tokens !== undefined) {
    out.max_completion_tokens = out.max_tokens;
    delete out.max_tokens;
  }
  if (taken.has('no_temperature')) delete out.temperature;
  if (taken.has('no_stream_options')) delete out.stream_options;
  if (taken.has('no_prompt_cache_key')) delete out.prompt_cache_key;
  if (taken.has('no_tools')) {
    delete out.tools;
    delete out.tool_choice;
  }
  return out;
}

/** The one warning said when an adaptation is taken. */
export function adaptationWarning(a: Adaptation, body: AdaptableBody, server: string, detail: string): string {
  const who = `${body.model} at ${server}`;
  const why = `(${detail})`;
  switch (a) {
    case 'max_completion_tokens':
      return `${who} does not take max_tokens ${why}; sending the limit as max_completion_tokens from now on`;
    case 'no_temperature':
      return `${who} does not take temperature ${body.temperature} ${why}; sending no temperature (the model's default) from now on`;
    case 'no_stream_options':
      return `${who} does not take stream_options ${why}; the token usage of streamed replies is estimated from now on unless the server reports it`;
    case 'no_prompt_cache_key':
      return `${who} does not take prompt_cache_key ${why}; sending none from now on (its prompt cache routes by the prompt alone)`;
    case 'no_tools':
      return `${who} refused function tools ${why}; commands are read in the JSON command format from now on`;
  }
}
