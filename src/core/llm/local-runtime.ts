// The in-process runtime of `--llm local:`: node-llama-cpp (an optional package, imported only
// when a local model is used, with llama.cpp's prebuilt binaries: never a build, never a download
// of binaries), its settings, and where a model file comes from (a path, or hf:USER/REPO/FILE.gguf
// through node-llama-cpp's resolver). The parts of node-llama-cpp used are described here
// structurally, so sop builds and runs without it.
import { existsSync, statSync } from 'node:fs';
import { availableParallelism, homedir } from 'node:os';
import { basename, isAbsolute, join, resolve } from 'node:path';
import { OPTIONAL_PACKAGES, addPackageCommand, isMissingPackage } from '../../shared/util/optional-package.js';
import { LlmError } from './types.js';

/** The version sop is tested with (package.json pins it). */
export const NODE_LLAMA_CPP_VERSION = OPTIONAL_PACKAGES['node-llama-cpp'];

/** The one line of a missing node-llama-cpp, with the command that adds it to this install of sop. */
export const missingNodeLlamaCpp = (): string =>
  `--llm local: needs node-llama-cpp, an optional package that is not installed; add it with: ${addPackageCommand('node-llama-cpp')}`;

// ---- node-llama-cpp, structurally (the subset sop calls) ----

export type NlcToken = number;
export type NlcHistoryItem = { type: 'system'; text: string } | { type: 'user'; text: string } | { type: 'model'; response: string[] };

export interface NlcGrammar {
  readonly grammar?: string;
}
export interface NlcSequence {
  readonly contextTokens: readonly NlcToken[];
  dispose(): void;
}
export interface NlcContext {
  readonly contextSize: number;
  getSequence(): NlcSequence;
  dispose(): Promise<void>;
}
export interface NlcModel {
  readonly fileInfo: { metadata: { general?: Record<string, unknown>; tokenizer?: { chat_template?: unknown } } };
  readonly trainContextSize: number;
  readonly size: number;
  readonly tokenizer: unknown;
  tokenize(text: string, specialTokens?: boolean): NlcToken[];
  createContext(o: { contextSize?: number | { min?: number; max?: number }; sequences?: number; threads?: number }): Promise<NlcContext>;
  dispose(): Promise<void>;
}
export interface NlcLlama {
  readonly gpu: string | false;
  readonly cpuMathCores: number;
  loadModel(o: { modelPath: string }): Promise<NlcModel>;
  createGrammarForJsonSchema(schema: object): Promise<NlcGrammar>;
  dispose(): Promise<void>;
}
export interface NlcChatWrapper {
  readonly wrapperName: string;
  generateContextState(o: { chatHistory: NlcHistoryItem[] }): { contextText: { tokenize(tokenizer: unknown): NlcToken[] } };
}
export interface NlcGenerateOptions {
  maxTokens?: number;
  temperature?: number;
  seed?: number;
  signal?: AbortSignal;
  grammar?: NlcGrammar;
  onTextChunk?: (text: string) => void;
  onToken?: (tokens: NlcToken[]) => void;
}
export interface NlcChat {
  readonly chatWrapper: NlcChatWrapper;
  generateResponse(history: NlcHistoryItem[], o: NlcGenerateOptions): Promise<{ response: string; metadata: { stopReason: string } }>;
  dispose(o?: { disposeSequence?: boolean }): void;
}
export interface NodeLlamaCpp {
  getLlama(o: {
    build: 'never';
    gpu?: 'auto' | false | 'cuda' | 'vulkan' | 'metal';
    maxThreads?: number;
    logLevel?: string;
    progressLogs?: boolean;
    skipDownload?: boolean;
  }): Promise<NlcLlama>;
  LlamaChat: new (o: { contextSequence: NlcSequence; chatWrapper?: NlcChatWrapper; autoDisposeSequence?: boolean }) => NlcChat;
  /** A chat wrapper: `jinjaTemplate` renders the model's own chat template (tokenizer.chat_template). */
  resolveChatWrapper(model: NlcModel, o?: { type?: 'auto' | 'jinjaTemplate' }): NlcChatWrapper;
  getModuleVersion(): Promise<string>;
  resolveModelFile(
    uri: string,
    o: { directory?: string; download?: 'auto' | false; cli?: boolean; signal?: AbortSignal; endpoints?: { huggingFace?: string } },
  ): Promise<string>;
  GgufFileType: Record<number, string>;
}

/** node-llama-cpp, imported now (a missing package is one line saying how to add it). */
export async function loadNodeLlamaCpp(importer: () => Promise<unknown> = () => import('node-llama-cpp')): Promise<NodeLlamaCpp> {
  try {
    return (await importer()) as NodeLlamaCpp;
  } catch (err) {
    if (isMissingPackage(err, 'node-llama-cpp')) throw new LlmError(missingNodeLlamaCpp());
    throw new LlmError(`--llm local: cannot load node-llama-cpp (${(err as Error).message.split('\n')[0]})`);
  }
}

// ---- settings ----

export interface LocalSettings {
  /**
   * CPU threads of an evaluation (SOP_LOCAL_THREADS, or --local-threads; default `defaultThreads()`:
   * the cores but one, at least 1). Unset (a caller's own settings): node-llama-cpp's, every core.
   */
  threads?: number;
  /** Parallel context sequences: calls that run at once (SOP_LOCAL_SEQUENCES, default 4). */
  sequences: number;
  /** Tokens of each sequence's context (SOP_LOCAL_CONTEXT; default the model's training context, at most 4096). */
  contextSize?: number;
  /** Reply tokens when the SOP's llm.max_tokens is unset (SOP_LOCAL_MAX_TOKENS, default 512). */
  maxTokens: number;
  /** GPU: auto (default), false, cuda, vulkan or metal (SOP_LOCAL_GPU). */
  gpu: 'auto' | false | 'cuda' | 'vulkan' | 'metal';
  /** Where hf: models are downloaded to and looked for (SOP_MODELS_DIR, default ~/.node-llama-cpp/models). */
  modelsDir: string;
  /** Hugging Face's address (HF_ENDPOINT, default https://huggingface.co). */
  hfEndpoint?: string;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new LlmError(`${name} must be a whole number above 0 (got "${raw}")`);
  return n;
}

/**
 * The default CPU threads of a local model: the machine's cores but one, at least 1. llama.cpp's
 * threads spin while they wait for each other, so with one on every core any other work (the
 * run's own event loop, a test runner, a second process) stalls all of them; one core left free
 * costs little when the machine is quiet and saves minutes when it is not (docs/providers.md).
 */
export function defaultThreads(cores: number = availableParallelism()): number {
  return Math.max(1, cores - 1);
}

export function localSettings(env: NodeJS.ProcessEnv = process.env): LocalSettings {
  const gpu = env.SOP_LOCAL_GPU ?? 'auto';
  if (!['auto', 'false', 'cuda', 'vulkan', 'metal'].includes(gpu))
    throw new LlmError(`SOP_LOCAL_GPU must be auto, false, cuda, vulkan or metal (got "${gpu}")`);
  return {
    threads: positiveInt(env, 'SOP_LOCAL_THREADS') ?? defaultThreads(),
    sequences: positiveInt(env, 'SOP_LOCAL_SEQUENCES') ?? 4,
    contextSize: positiveInt(env, 'SOP_LOCAL_CONTEXT'),
    maxTokens: positiveInt(env, 'SOP_LOCAL_MAX_TOKENS') ?? 512,
    gpu: gpu === 'false' ? false : (gpu as LocalSettings['gpu']),
    modelsDir: env.SOP_MODELS_DIR || join(homedir(), '.node-llama-cpp', 'models'),
    ...(env.HF_ENDPOINT ? { hfEndpoint: env.HF_ENDPOINT } : {}),
  };
}

// ---- model files ----

/** hf:USER/REPO/FILE.gguf (a file of a Hugging Face repository; also hf:USER/REPO:QUANT). */
export const isHfUri = (spec: string) => spec.startsWith('hf:');

/** A local model file: an existing regular file (relative paths from `base`). */
export function localModelPath(spec: string, base: string, what: string): string {
  const file = isAbsolute(spec) ? spec : resolve(base, spec);
  const st = existsSync(file) ? statSync(file) : undefined;
  if (!st) throw new LlmError(`${what}: no model file ${spec}${file !== spec ? ` (${file})` : ''}`);
  if (!st.isFile()) throw new LlmError(`${what}: ${spec} is not a file (give a .gguf model file)`);
  return file;
}

/** The most specific message of an error's cause chain (a download's socket error). */
function rootMessage(err: unknown): string {
  let msg = err instanceof Error ? err.message : String(err);
  let e: unknown = err;
  for (let depth = 0; depth < 6 && e instanceof Error; depth++, e = e.cause) {
    const code = (e as NodeJS.ErrnoException).code;
    if (e.message) msg = code && !e.message.includes(code) ? `${code}: ${e.message}` : e.message;
  }
  return msg.split('\n')[0]!.slice(0, 200);
}

/**
 * The file of an hf: model: from the models folder when it is there, else downloaded through
 * node-llama-cpp's resolver (only when `download`; a SOP's own hf: model never downloads).
 * Offline, one line says so.
 */
export async function hfModelPath(
  nlc: NodeLlamaCpp,
  uri: string,
  s: LocalSettings,
  o: { download: boolean; signal?: AbortSignal; onDownload?: (message: string) => void },
): Promise<string> {
  const common = { directory: s.modelsDir, cli: false, ...(s.hfEndpoint ? { endpoints: { huggingFace: s.hfEndpoint } } : {}) };
  try {
    return await nlc.resolveModelFile(uri, { ...common, download: false });
  } catch {
    // not in the models folder
  }
  if (!o.download)
    throw new LlmError(
      `the SOP's local model ${uri} is not in ${s.modelsDir}; a SOP never downloads a model: fetch it once with --llm local:${uri}`,
    );
  const endpoint = s.hfEndpoint ?? 'https://huggingface.co/';
  // node-llama-cpp's downloader retries an unreachable host for minutes: one quick look first
  try {
    const timeout = AbortSignal.timeout(15_000);
    await fetch(endpoint, { method: 'HEAD', redirect: 'manual', signal: o.signal ? AbortSignal.any([o.signal, timeout]) : timeout });
  } catch (err) {
    o.signal?.throwIfAborted();
    throw new LlmError(
      `--llm local:${uri}: cannot download it: ${endpoint} does not answer (${rootMessage(err)}); offline, give a .gguf file you have: --llm local:PATH`,
    );
  }
  o.onDownload?.(`downloading ${uri} to ${s.modelsDir} (node-llama-cpp's resolver)`);
  try {
    return await nlc.resolveModelFile(uri, { ...common, download: 'auto', ...(o.signal ? { signal: o.signal } : {}) });
  } catch (err) {
    throw new LlmError(
      `--llm local:${uri}: cannot download it from ${endpoint} (${rootMessage(err)}); give a .gguf file you have: --llm local:PATH`,
    );
  }
}

/** What a model is, for a cassette's source: "SmolLM2-135M-Instruct.Q4_1.gguf (smollm2 135M, quantisation Q4_1)". */
export function describeModel(nlc: NodeLlamaCpp, file: string, model: NlcModel): { name: string; size?: string; quantisation?: string } {
  const g = model.fileInfo.metadata.general ?? {};
  const fileType = typeof g.file_type === 'number' ? nlc.GgufFileType[g.file_type] : undefined;
  return {
    name: basename(file),
    ...(typeof g.size_label === 'string' ? { size: g.size_label } : {}),
    ...(fileType ? { quantisation: fileType.replace(/^MOSTLY_/, '') } : {}),
  };
}

/** Parameters from a size label ("135M", "1.7B", "8x7B"), for the words of a cassette's source. */
export function parametersOf(label: string | undefined): number | undefined {
  const m = label ? /^(?:(\d+)x)?(\d+(?:\.\d+)?)([KMBT])$/i.exec(label) : null;
  if (!m) return undefined;
  const unit = { K: 1e3, M: 1e6, B: 1e9, T: 1e12 }[m[3]!.toUpperCase() as 'K' | 'M' | 'B' | 'T'];
  return Number(m[1] ?? 1) * Number(m[2]) * unit;
}

/**
 * The model's own chat template, rendered as its GGUF gives it (node-llama-cpp's built-in wrappers
 * may differ: its ChatML one adds a BOS token that SmolLM2's template has not); a model without
 * a template gets node-llama-cpp's choice for its architecture.
 */
export function chatWrapperOf(nlc: NodeLlamaCpp, model: NlcModel): NlcChatWrapper {
  if (typeof model.fileInfo.metadata.tokenizer?.chat_template === 'string') {
    try {
      return nlc.resolveChatWrapper(model, { type: 'jinjaTemplate' });
    } catch {
      // a template node-llama-cpp cannot render: its own choice below
    }
  }
  return nlc.resolveChatWrapper(model);
}
