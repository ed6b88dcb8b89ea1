// Prompt tokens as a model's tokenizer counts them, for the prompt-cache simulation
// (src/features/cost/prompt-cache.ts) and predictions. OpenAI's encodings come from the gpt-tokenizer
// package (pure JavaScript), loaded at first use: o200k_base for the gpt-4o, gpt-4.1, gpt-4.5,
// gpt-5, o-series and gpt-oss models, cl100k_base for gpt-4, gpt-4-turbo and gpt-3.5. No package
// ships the tokenizer of Claude 3 and later (@anthropic-ai/tokenizer is that of Claude 2), nor of
// most open models: those are counted with o200k_base as an APPROXIMATION, and `approximation`
// says so (Claude's own tokenizer gives more tokens for the same English text, so a 1,024-token
// floor is reached a little earlier than this count says).
import type { ChatMessage } from '../../core/llm/types.js';

export type EncodingName = 'o200k_base' | 'cl100k_base';

export interface PromptTokenizer {
  encoding: EncodingName;
  /** Why this encoding stands in for the model's own tokenizer, when it does. */
  approximation?: string;
  /** A text's token ids. */
  encode(text: string): number[];
  /**
   * A chat prompt's token ids as the model reads it: per message a start token, the role, a
   * separator, the content and an end token (OpenAI's 3 tokens a message), then the 3 that start the reply.
   */
  encodeChat(messages: ReadonlyArray<Pick<ChatMessage, 'role' | 'content'>>): number[];
}

/** The encoding of a model, and the approximation made when it is not the model's own. */
export function encodingFor(model: string): { encoding: EncodingName; approximation?: string } {
  const m = model.toLowerCase().replace(/^.*\//, '');
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|o1|o3|o4|gpt-oss|codex)/.test(m)) return { encoding: 'o200k_base' };
  if (/^(gpt-4|gpt-3\.5|text-embedding)/.test(m)) return { encoding: 'cl100k_base' };
  if (m.includes('claude'))
    return {
      encoding: 'o200k_base',
      approximation: `${model}: no package ships Claude's tokenizer; counted with OpenAI's o200k_base`,
    };
  return { encoding: 'o200k_base', approximation: `${model}: its tokenizer is not shipped; counted with OpenAI's o200k_base` };
}

/** Special-token ids of the chat layout (one id each; which one does not change a count or a prefix). */
const CHAT_IDS: Record<EncodingName, { start: number; sep: number; end: number }> = {
  o200k_base: { start: 200264, sep: 200266, end: 200265 },
  cl100k_base: { start: 100264, sep: 100266, end: 100265 },
};

const loaded = new Map<EncodingName, Promise<PromptTokenizer>>();

/** The tokenizer of a model (loaded once per encoding). */
export function tokenizerFor(model: string): Promise<PromptTokenizer> {
  const { encoding, approximation } = encodingFor(model);
  let p = loaded.get(encoding);
  if (!p) {
    p = load(encoding);
    loaded.set(encoding, p);
  }
  return approximation ? p.then((t) => ({ ...t, approximation })) : p;
}

async function load(encoding: EncodingName): Promise<PromptTokenizer> {
  const mod =
    encoding === 'o200k_base' ? await import('gpt-tokenizer/encoding/o200k_base') : await import('gpt-tokenizer/encoding/cl100k_base');
  const ids = CHAT_IDS[encoding];
  // a prompt repeats most of its messages from the previous call: each text is encoded once
  const memo = new Map<string, number[]>();
  const encode = (text: string): number[] => {
    let out = memo.get(text);
    if (!out) {
      out = mod.encode(text, { disallowedSpecial: new Set() });
      if (memo.size >= 50_000) memo.clear();
      memo.set(text, out);
    }
    return out;
  };
  return {
    encoding,
    encode,
    encodeChat(messages) {
      const out: number[] = [];
      for (const m of messages) {
        out.push(ids.start, ...encode(m.role), ids.sep);
        for (const t of encode(m.content)) out.push(t);
        out.push(ids.end);
      }
      out.push(ids.start, ...encode('assistant'), ids.sep);
      return out;
    },
  };
}
