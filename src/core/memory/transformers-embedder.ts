// The `transformers:MODEL` embedder: sentence embeddings computed on this machine with
// @huggingface/transformers (ONNX runtime), mean pooling and L2 normalisation. MODEL is a local
// folder (config.json, tokenizer files, onnx/model.onnx) or a hub id such as
// Xenova/all-MiniLM-L6-v2 that is already in the library's cache or can be downloaded.
// The library is imported only when this embedder is created, so the CLI starts fast otherwise;
// it is an optional package (with the ONNX runtimes, 430 MB), which a default install leaves out.
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { addPackageCommand, isMissingPackage } from '../../shared/util/optional-package.js';
import { EmbedderLoadError, type Embedder } from './embedder.js';

type Extractor = (
  texts: string[],
  options: { pooling: 'mean'; normalize: boolean },
) => Promise<{ data: Float32Array | Float64Array; dims: number[] }>;

export interface TransformersEmbedderOptions {
  /** Never try to download (also when HF_HUB_OFFLINE=1 or TRANSFORMERS_OFFLINE=1). */
  offline?: boolean;
  /** Cache folder for downloaded models (default: the library's). */
  cacheDir?: string;
  /** Texts per inference call. */
  batchSize?: number;
  /** How @huggingface/transformers is imported (tests: a missing package). */
  importer?: () => Promise<unknown>;
}

/** The one line of a missing @huggingface/transformers, with the command that adds it to this install of sop. */
export const missingTransformers = (): string =>
  `the embedder transformers:MODEL needs @huggingface/transformers, an optional package that is not installed; add it with: ${addPackageCommand('@huggingface/transformers')}`;

export class TransformersEmbedder implements Embedder {
  readonly id: string;
  private constructor(
    readonly model: string,
    private readonly extractor: Extractor,
    readonly dimension: number,
    private readonly batchSize: number,
  ) {
    this.id = `transformers:${model}`;
  }

  /** Load the model (from a folder, the cache or the hub) and probe its dimension. */
  static async load(model: string, options: TransformersEmbedderOptions = {}): Promise<TransformersEmbedder> {
    if (!model)
      throw new EmbedderLoadError(
        'the embedder transformers:MODEL needs a model: a local folder or a hub id such as Xenova/all-MiniLM-L6-v2',
      );
    const offline = options.offline ?? (isTrue(process.env.HF_HUB_OFFLINE) || isTrue(process.env.TRANSFORMERS_OFFLINE));
    const folder = resolve(model);
    const isFolder = existsSync(folder) && statSync(folder).isDirectory();
    if (!isFolder && (model.startsWith('.') || model.startsWith('/') || model.includes('\\'))) {
      throw new EmbedderLoadError(`transformers embedder: model folder ${folder} does not exist`);
    }
    let lib: typeof import('@huggingface/transformers');
    try {
      lib = (await (options.importer ?? (() => import('@huggingface/transformers')))()) as typeof import('@huggingface/transformers');
    } catch (err) {
      if (isMissingPackage(err, '@huggingface/transformers')) throw new EmbedderLoadError(missingTransformers());
      throw new EmbedderLoadError(
        `transformers embedder: cannot load @huggingface/transformers (${(err as Error).message.split('\n')[0]})`,
      );
    }
    const { env, pipeline } = lib;
    const saved = {
      allowRemoteModels: env.allowRemoteModels,
      allowLocalModels: env.allowLocalModels,
      localModelPath: env.localModelPath,
      cacheDir: env.cacheDir,
    };
    let id = model;
    try {
      env.allowLocalModels = true;
      if (isFolder) {
        // A folder is loaded as "<parent>/<name>" with remote access off: no request leaves.
        env.localModelPath = dirname(folder) + '/';
        env.allowRemoteModels = false;
        id = basename(folder);
      } else {
        env.allowRemoteModels = !offline;
        if (options.cacheDir) env.cacheDir = options.cacheDir;
      }
      const extractor = (await pipeline('feature-extraction', id)) as unknown as Extractor;
      const probe = await extractor(['dimension probe'], { pooling: 'mean', normalize: true });
      const dimension = probe.dims[probe.dims.length - 1]!;
      return new TransformersEmbedder(model, extractor, dimension, options.batchSize ?? 32);
    } catch (err) {
      if (err instanceof EmbedderLoadError) throw err;
      const reason = String((err as Error)?.message ?? err)
        .split('\n')[0]!
        .slice(0, 300);
      if (isFolder) throw new EmbedderLoadError(`transformers embedder: cannot load the model in ${folder}: ${reason}`);
      throw new EmbedderLoadError(
        `transformers embedder: model "${model}" is not in the local cache${offline ? ' and downloads are off (HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE)' : ' and could not be downloaded'} (${reason}). ` +
          `Download it once with network access, or give a local folder (transformers:/path/to/model), or use the local embedder.`,
      );
    } finally {
      Object.assign(env, saved);
    }
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) {
      const batch = texts.slice(i, i + this.batchSize).map((t) => (t.trim() ? t : ' '));
      const res = await this.extractor(batch, { pooling: 'mean', normalize: true });
      const d = this.dimension;
      for (let j = 0; j < batch.length; j++) out.push(Float32Array.from(res.data.subarray(j * d, (j + 1) * d)));
    }
    return out;
  }
}

function isTrue(v: string | undefined): boolean {
  return v !== undefined && v !== '' && v !== '0' && v.toLowerCase() !== 'false';
}
