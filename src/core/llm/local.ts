// The `local` provider: GGUF models run in this process by node-llama-cpp (llama.cpp).
//   --llm local:PATH.gguf          every call to that file (relative to the current folder)
//   --llm local:hf:USER/REPO/FILE  the same, downloaded once through node-llama-cpp's resolver
//   "llm": {"provider": "local", "model": "PATH.gguf"}   each call to its block's model
//                                   (relative to the SOP's folder; an hf: model must be fetched first)
// A reply is made with the model's own chat template, streamed, within max tokens, at the call's
// temperature and with a seed made from the run's --seed and the call (the same seed gives the
// same reply). A call that must answer with a command is generated under a grammar made from
// the commands' JSON Schemas (src/core/llm/local-grammar.ts), so it always parses. Token counts come
// from the model's tokenizer. Each model is loaded once per process with a few context
// sequences: that many calls run at once, batched together; more wait for a free one. A call's
// signal (a deadline, Ctrl-C) stops its generation at the next token; `closeLocalModels` stops
// every generation in flight, waits for each to end and frees the models' contexts, so a thread
// that ends next (a test runner's worker) never ends under llama.cpp's feet.
import { dirname } from 'node:path';
import { fmix32, fnv1a } from '../../shared/util/hash.js';
import { closeJson, commandReplySchema, type GrammarSchema } from './local-grammar.js';
import {
  NODE_LLAMA_CPP_VERSION,
  chatWrapperOf,
  describeModel,
  hfModelPath,
  isHfUri,
  loadNodeLlamaCpp,
  localModelPath,
  localSettings,
  parametersOf,
  type LocalSettings,
  type NlcChatWrapper,
  type NlcContext,
  type NlcGrammar,
  type NlcHistoryItem,
  type NlcLlama,
  type NlcModel,
  type NlcSequence,
  type NlcToken,
  type NodeLlamaCpp,
} from './local-runtime.js';
import {
  LlmError,
  type CallMeta,
  type CallProgress,
  type ChatMessage,
  type ChatOptions,
  type ChatRequest,
  type ChatResponse,
  type LlmProvider,
} from './types.js';

export interface LocalProviderOptions {
  /** The model of every call (`local:PATH` or `local:hf:...`); without it, each request's model (a SOP's llm.model). */
  model?: string;
  /** The folder relative model paths are read from (a SOP's own folder for its llm.model). */
  base?: string;
  /** The run's --seed (default 1). */
  seed?: number;
  settings?: LocalSettings;
  /** How node-llama-cpp is imported (tests: a missing package). */
  importer?: () => Promise<unknown>;
  signal?: AbortSignal;
  /** Replies cut at max tokens, empty replies asked again, downloads. */
  onWarning?: (message: string) => void;
}

/** The seed of one call: the run's seed and who asks what, where and when. */
export function callSeed(seed: number, meta: CallMeta): number {
  return fmix32(fnv1a(`${meta.purpose}\u0000${meta.state}\u0000${meta.agent ?? ''}\u0000${meta.turn}`, fmix32(seed >>> 0)));
}

/** The messages as node-llama-cpp's chat history (the reply is generated as a new model turn). */
export function chatHistoryOf(messages: ChatMessage[]): NlcHistoryItem[] {
  return messages.map((m) =>
    m.role === 'assistant' ? { type: 'model', response: [m.content] } : { type: m.role === 'system' ? 'system' : 'user', text: m.content },
  );
}

function commonPrefix(a: readonly NlcToken[], b: readonly NlcToken[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Why calls of a closed model end (closeLocalModels). */
const CLOSED = 'the local model was closed (its calls in flight stopped, its context freed)';

/** A call waiting for a sequence: how to give it one, or turn it away. */
interface Waiter {
  give(s: NlcSequence): void;
  fail(err: Error): void;
}

/** One model loaded in this process: its context's sequences, lent to one call at a time. */
class LoadedModel {
  private readonly free: NlcSequence[];
  private readonly waiting: Waiter[] = [];
  private readonly grammars = new Map<string, Promise<NlcGrammar>>();
  /** Generations in flight: what stops each, and its end. */
  private readonly running = new Set<{ stop: AbortController; ended: Promise<unknown> }>();
  private closed = false;

  constructor(
    readonly nlc: NodeLlamaCpp,
    readonly llama: NlcLlama,
    readonly file: string,
    readonly model: NlcModel,
    readonly context: NlcContext,
    readonly wrapper: NlcChatWrapper,
    sequences: NlcSequence[],
    /** node-llama-cpp's version. */
    readonly version: string,
  ) {
    this.free = sequences;
  }

  /** A free sequence (the one holding most of this prompt already), or the next one released. */
  acquire(prompt: readonly NlcToken[], signal?: AbortSignal): Promise<NlcSequence> {
    if (this.closed) return Promise.reject(new LlmError(CLOSED));
    if (this.free.length > 0) {
      let best = 0;
      for (let i = 1; i < this.free.length; i++)
        if (commonPrefix(this.free[i]!.contextTokens, prompt) > commonPrefix(this.free[best]!.contextTokens, prompt)) best = i;
      return Promise.resolve(this.free.splice(best, 1)[0]!);
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        give: (s) => {
          signal?.removeEventListener('abort', abort);
          resolve(s);
        },
        fail: (err) => {
          signal?.removeEventListener('abort', abort);
          reject(err);
        },
      };
      const abort = () => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal!.reason instanceof Error ? signal!.reason : new LlmError('aborted'));
      };
      signal?.addEventListener('abort', abort, { once: true });
      this.waiting.push(waiter);
    });
  }

  release(s: NlcSequence): void {
    const next = this.waiting.shift();
    if (next) next.give(s);
    else this.free.push(s);
  }

  /** A generation in flight until `work` settles; `close` aborts it through `stop` and waits for its end. */
  track<T>(stop: AbortController, work: Promise<T>): Promise<T> {
    const entry = { stop, ended: work.catch(() => {}) };
    this.running.add(entry);
    void entry.ended.then(() => this.running.delete(entry));
    return work;
  }

  /** Stops every generation in flight, waits for each to end, then frees the context and the model. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.waiting.splice(0)) w.fail(new LlmError(CLOSED));
    const running = [...this.running];
    for (const r of running) r.stop.abort(new LlmError(CLOSED));
    await Promise.all(running.map((r) => r.ended));
    await this.context.dispose().catch(() => {});
    await this.model.dispose().catch(() => {});
  }

  /** The grammar of a JSON Schema, made once per model. */
  grammar(schema: GrammarSchema): Promise<NlcGrammar> {
    const key = JSON.stringify(schema);
    let g = this.grammars.get(key);
    if (!g) {
      g = this.llama.createGrammarForJsonSchema(schema);
      this.grammars.set(key, g);
    }
    return g;
  }
}

/** node-llama-cpp and llama.cpp's binary, once per process and settings. */
const runtimes = new Map<string, Promise<{ nlc: NodeLlamaCpp; llama: NlcLlama; version: string }>>();
/** Loaded models, once per process, file and settings. */
const loaded = new Map<string, Promise<LoadedModel>>();

function once<T>(cache: Map<string, Promise<T>>, key: string, make: () => Promise<T>): Promise<T> {
  let p = cache.get(key);
  if (!p) {
    p = make();
    cache.set(key, p);
    p.catch(() => cache.delete(key)); // a failure is told to its caller; the next call tries again
  }
  return p;
}

/**
 * Stops every local generation in flight in this process (each ends at its next token), waits for
 * them to end, and frees every loaded model and its context; calls still waiting are turned away,
 * and a later call loads its model again. Where a thread ends without letting a generation
 * finish (a test runner's worker after a timeout), call it first: llama.cpp's threads then never
 * answer into a thread that is gone, which aborts the whole process.
 */
export async function closeLocalModels(): Promise<void> {
  const models = [...loaded.values()];
  const llamas = [...runtimes.values()];
  loaded.clear();
  runtimes.clear();
  for (const p of models) await (await p.catch(() => undefined))?.close();
  // llama.cpp itself last: its log callback into this thread goes with it
  for (const p of llamas) await (await p.catch(() => undefined))?.llama.dispose().catch(() => {});
}

function runtime(s: LocalSettings, importer?: () => Promise<unknown>) {
  // a given importer (tests) is not cached: it may stand for a missing package
  return once(importer ? (new Map() as typeof runtimes) : runtimes, `${String(s.gpu)}|${s.threads ?? ''}`, async () => {
    const nlc = await loadNodeLlamaCpp(importer);
    let llama: NlcLlama;
    try {
      // prebuilt binaries only (the @node-llama-cpp/* packages): never a build, never a download
      llama = await nlc.getLlama({
        build: 'never',
        gpu: s.gpu,
        ...(s.threads !== undefined ? { maxThreads: s.threads } : {}),
        logLevel: 'error',
        progressLogs: false,
        skipDownload: true,
      });
    } catch (err) {
      throw new LlmError(
        `--llm local: node-llama-cpp has no working prebuilt llama.cpp binary for ${process.platform}-${process.arch}` +
          `${s.gpu ? '' : ' (CPU)'} (${(err as Error).message.split('\n')[0]}); sop never builds one`,
      );
    }
    const version = await nlc.getModuleVersion().catch(() => NODE_LLAMA_CPP_VERSION);
    return { nlc, llama, version };
  });
}

export class LocalProvider implements LlmProvider {
  readonly id = 'local';
  /** Its calls cost nothing: they are not priced. */
  readonly free = true;
  private readonly settings: LocalSettings;
  private readonly seed: number;
  private fixed?: Promise<LoadedModel>;
  /** The model of the last call answered. */
  private used?: LoadedModel;

  constructor(private readonly o: LocalProviderOptions = {}) {
    this.settings = o.settings ?? localSettings();
    this.seed = o.seed ?? 1;
  }

  /** A provider whose fixed model (if any) is found and loaded now: a missing file or package fails before the run. */
  static async create(o: LocalProviderOptions & { preload?: string }): Promise<LocalProvider> {
    const p = new LocalProvider(o);
    if (o.model !== undefined) p.fixed = p.load(o.model, true);
    const first = o.model ?? o.preload;
    if (first !== undefined) await (p.fixed ?? p.load(first, false));
    return p;
  }

  /** What answers, for a recorded cassette's source (once a call has been answered). */
  get describe(): string | undefined {
    if (!this.used) return undefined;
    const { nlc, file, model, version } = this.used;
    const d = describeModel(nlc, file, model);
    const params = parametersOf(d.size);
    const scale = params === undefined ? '' : params < 1e9 ? ', a very small model' : params < 4e9 ? ', a small model' : '';
    return (
      `real output of ${d.name} (${d.size ? `${d.size} parameters${scale}` : 'a GGUF model'}` +
      `${d.quantisation ? `, quantisation ${d.quantisation}` : ''}), run in process by node-llama-cpp ${version} with --seed ${this.seed}`
    );
  }

  private async load(spec: string, fromCommandLine: boolean): Promise<LoadedModel> {
    const s = this.settings;
    const rt = await runtime(s, this.o.importer);
    const what = fromCommandLine ? `--llm local:${spec}` : `llm.model ${spec}`;
    const file = isHfUri(spec)
      ? await hfModelPath(rt.nlc, spec, s, { download: fromCommandLine, signal: this.o.signal, onDownload: this.o.onWarning })
      : localModelPath(spec, this.o.base ?? process.cwd(), what);
    return once(loaded, `${file}|${String(s.gpu)}|${s.threads ?? ''}|${s.sequences}|${s.contextSize ?? ''}`, async () => {
      let model: NlcModel;
      try {
        model = await rt.llama.loadModel({ modelPath: file });
      } catch (err) {
        throw new LlmError(`${what}: cannot load ${file} as a GGUF model (${loadProblem(err)})`);
      }
      let context: NlcContext;
      try {
        context = await model.createContext({
          contextSize: s.contextSize ?? { max: Math.min(model.trainContextSize || 4096, 4096) },
          sequences: s.sequences,
          ...(s.threads !== undefined ? { threads: s.threads } : {}),
        });
      } catch (err) {
        await model.dispose().catch(() => {});
        throw new LlmError(
          `${what}: no room for ${s.sequences} sequences of its context (${(err as Error).message.split('\n')[0]}); ` +
            'set SOP_LOCAL_SEQUENCES or SOP_LOCAL_CONTEXT lower',
        );
      }
      const sequences = Array.from({ length: s.sequences }, () => context.getSequence());
      return new LoadedModel(rt.nlc, rt.llama, file, model, context, chatWrapperOf(rt.nlc, model), sequences, rt.version);
    });
  }

  private modelFor(request: ChatRequest): Promise<LoadedModel> {
    if (this.fixed) return this.fixed;
    return this.load(request.model, false);
  }

  async chat(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResponse> {
    options.signal?.throwIfAborted();
    const m = await this.modelFor(request);
    const seed = callSeed(this.seed, request.meta);
    const res = await this.generate(m, request, options, seed, 0);
    if (res.content.trim() !== '' || options.signal?.aborted) return res;
    // An empty reply is asked for once more, with the next seed; a second one is kept, with a warning.
    const what = `the ${request.meta.purpose} call${request.meta.agent ? ` by ${request.meta.agent}` : ''} in state "${request.meta.state}"`;
    this.o.onWarning?.(`${what} got an empty reply from the local model; asking once more`);
    const again = await this.generate(m, request, options, (seed + 1) >>> 0, res.usage.completionTokens);
    if (again.content.trim() === '') this.o.onWarning?.(`${what} got an empty reply twice; recorded empty`);
    return {
      ...again,
      usage: {
        promptTokens: res.usage.promptTokens + again.usage.promptTokens,
        completionTokens: res.usage.completionTokens + again.usage.completionTokens,
      },
    };
  }

  /** One generation; `before`: reply tokens of an earlier try of the same call (its progress counts on from there). */
  private async generate(m: LoadedModel, request: ChatRequest, options: ChatOptions, seed: number, before: number): Promise<ChatResponse> {
    const history = chatHistoryOf(request.messages);
    const prompt = m.wrapper
      .generateContextState({ chatHistory: [...history, { type: 'model', response: [] }] })
      .contextText.tokenize(m.model.tokenizer);
    if (prompt.length >= m.context.contextSize)
      throw new LlmError(
        `the prompt of the ${request.meta.purpose} call in state "${request.meta.state}" has ${prompt.length} tokens, more than the ` +
          `${m.context.contextSize} of the local model's context: set SOP_LOCAL_CONTEXT higher (or make the SOP's window smaller)`,
      );
    const schema = commandReplySchema(request.meta);
    const grammar = schema ? await m.grammar(schema) : undefined;
    const sequence = await m.acquire(prompt, options.signal);
    const chat = new m.nlc.LlamaChat({ contextSequence: sequence, chatWrapper: m.wrapper, autoDisposeSequence: false });
    // the call's own signal (a deadline, Ctrl-C), or closeLocalModels, stops it at the next token
    const stop = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, stop.signal]) : stop.signal;
    const progress = (p: CallProgress) => {
      try {
        options.onProgress?.(p);
      } catch {
        // a listener's failure is not the call's
      }
    };
    let completion = 0;
    try {
      const maxTokens = request.maxTokens ?? this.settings.maxTokens;
      progress({ promptTokens: prompt.length, tokens: before });
      const out = await m.track(
        stop,
        chat.generateResponse(history, {
          maxTokens,
          temperature: request.temperature ?? 0,
          seed,
          signal,
          ...(grammar ? { grammar } : {}),
          ...(request.stream && options.onDelta ? { onTextChunk: options.onDelta } : {}),
          onToken: (tokens) => {
            completion += tokens.length;
            progress({ promptTokens: prompt.length, tokens: before + completion });
          },
        }),
      );
      this.used = m;
      const cut = out.metadata.stopReason === 'maxTokens';
      if (cut)
        this.o.onWarning?.(
          `the reply of the ${request.meta.purpose} call${request.meta.agent ? ` by ${request.meta.agent}` : ''} in state "${request.meta.state}" ` +
            `was cut at ${maxTokens} tokens (llm.max_tokens, else SOP_LOCAL_MAX_TOKENS); ` +
            (grammar ? 'its command JSON is closed where it was cut' : 'it is kept as it is'),
        );
      return {
        // a command cut short is closed, so it parses (the executor checks its arguments)
        content: grammar && cut ? closeJson(out.response) : out.response,
        usage: { promptTokens: prompt.length, completionTokens: completion },
        model: describeModel(m.nlc, m.file, m.model).name,
        finishReason: cut ? 'length' : 'stop',
      };
    } catch (err) {
      if (options.signal?.aborted) throw options.signal.reason instanceof Error ? options.signal.reason : new LlmError('aborted');
      if (stop.signal.aborted) throw stop.signal.reason instanceof Error ? stop.signal.reason : new LlmError(CLOSED);
      if (err instanceof LlmError) throw err;
      throw new LlmError(`local model ${describeModel(m.nlc, m.file, m.model).name}: ${(err as Error).message.split('\n')[0]}`);
    } finally {
      chat.dispose({ disposeSequence: false });
      m.release(sequence);
    }
  }
}

/** The folder a SOP's relative model paths are read from. */
export const sopModelBase = (sopFile: string | undefined) => (sopFile ? dirname(sopFile) : process.cwd());

/**
 * Why a file did not load as a model, without quoting its bytes (node-llama-cpp's message quotes
 * the first bytes it read: `Expected "GGUF" but got "root"` for /etc/passwd).
 */
function loadProblem(err: unknown): string {
  const first = String((err as Error)?.message ?? err).split('\n')[0]!;
  if (/GGUF magic/i.test(first)) return 'it does not start with the GGUF signature: not a GGUF model file';
  return first.replace(/\b(got|found|read)\s+(".*?"|'.*?'|\S+)/gi, '$1 something else').slice(0, 200);
}
