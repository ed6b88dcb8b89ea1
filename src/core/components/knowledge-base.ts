// A knowledge base in the Agents 1.0 file format ({"0": {q, a, chunk, emb}, ...}). The stored
// vectors come from a model we do not run, so the text is embedded again with our embedder:
// questions in QA mode, chunks in chunk mode. Vectors of embedders that depend only on the text
// are cached on disk, keyed by the file's hash, the mode and the embedder id; an embedder that
// learns from what it embeds (the local one learns word frequencies) gets a fresh instance per
// knowledge base and embeds the text at load (it is fast), since cached vectors would not match
// what it learned.
import { EngineError } from '../../shared/errors.js';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Embedder } from '../memory/embedder.js';
import { writeFileAtomic } from '../../shared/util/atomic-write.js';
import { isObject } from '../../shared/util/is-object.js';
import { InputFileError, readInputBuffer } from '../../shared/io/read-input-file.js';
import { describeJsonProblem } from '../../shared/util/json-syntax.js';

/** Knowledge files hold stored vectors too: up to 256 MiB are read. */
export const MAX_KNOWLEDGE_BYTES = 256 * 1024 * 1024;

export type KnowledgeMode = 'qa' | 'chunk';

export interface KnowledgeEntry {
  q?: string;
  a?: string;
  chunk?: string;
}
export interface KnowledgeHit extends KnowledgeEntry {
  score: number;
}

export class KnowledgeError extends EngineError {
  constructor(message: string) {
    super(message, 'KNOWLEDGE');
    this.name = 'KnowledgeError';
  }
}

/** Where embedded knowledge bases are cached: $SOP_CACHE_DIR, else $XDG_CACHE_HOME/sop, else ~/.cache/sop. */
export function defaultCacheDir(): string {
  if (process.env.SOP_CACHE_DIR) return join(process.env.SOP_CACHE_DIR, 'knowledge');
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'sop', 'knowledge');
}

/** Whether an embedder's vectors depend on what it embedded before (see Embedder.embedQuery). */
export function embedderLearns(e: Embedder): boolean {
  return typeof e.embedQuery === 'function';
}

function readEntries(file: string, bytes: Buffer, mode: KnowledgeMode): KnowledgeEntry[] {
  let doc: unknown;
  let text = '';
  try {
    text = bytes.toString('utf8');
    doc = JSON.parse(text);
  } catch (err) {
    throw new KnowledgeError(`knowledge file ${file}: invalid JSON (${describeJsonProblem(text, err)})`);
  }
  if (!isObject(doc)) throw new KnowledgeError(`knowledge file ${file}: must be a JSON object of entries "0", "1", ...`);
  const keys = Object.keys(doc).sort((a, b) => Number(a) - Number(b) || a.localeCompare(b));
  const seen = new Set<string>();
  const out: KnowledgeEntry[] = [];
  for (const key of keys) {
    const e = doc[key];
    if (!isObject(e)) continue;
    if (mode === 'qa') {
      if (typeof e.q !== 'string' || typeof e.a !== 'string') continue;
      const id = `${e.q}\u0000${e.a}`;
      if (seen.has(id)) continue; // the same pair was stored once per embedding variant
      seen.add(id);
      out.push({ q: e.q, a: e.a, ...(typeof e.chunk === 'string' ? { chunk: e.chunk } : {}) });
    } else {
      if (typeof e.chunk !== 'string') continue;
      if (seen.has(e.chunk)) continue;
      seen.add(e.chunk);
      out.push({ chunk: e.chunk, ...(typeof e.q === 'string' ? { q: e.q } : {}), ...(typeof e.a === 'string' ? { a: e.a } : {}) });
    }
  }
  if (out.length === 0) throw new KnowledgeError(`knowledge file ${file}: no entries with ${mode === 'qa' ? '"q" and "a"' : '"chunk"'}`);
  return out;
}

function readCache(path: string, count: number, dim: number): Float32Array[] | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch {
    return undefined;
  }
  if (buf.byteLength !== count * dim * 4) return undefined;
  const all = new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
  return Array.from({ length: count }, (_, i) => all.subarray(i * dim, (i + 1) * dim));
}

function writeCache(dir: string, path: string, vectors: Float32Array[]): void {
  try {
    mkdirSync(dir, { recursive: true });
    const dim = vectors[0]?.length ?? 0;
    const all = new Float32Array(vectors.length * dim);
    vectors.forEach((v, i) => all.set(v, i * dim));
    writeFileAtomic(path, Buffer.from(all.buffer));
  } catch {
    // A cache that cannot be written only costs time on the next run.
  }
}

export interface LoadKnowledgeOptions {
  file: string;
  mode: KnowledgeMode;
  embedder: Embedder;
  cacheDir?: string;
}

export class KnowledgeBase {
  /** Whether the vectors came from the cache (for tests and run summaries). */
  readonly fromCache: boolean;

  private constructor(
    readonly file: string,
    readonly mode: KnowledgeMode,
    readonly entries: KnowledgeEntry[],
    private readonly vectors: Float32Array[],
    private readonly embedder: Embedder,
    fromCache: boolean,
  ) {
    this.fromCache = fromCache;
  }

  static async load(o: LoadKnowledgeOptions): Promise<KnowledgeBase> {
    let bytes: Buffer;
    try {
      bytes = readInputBuffer(o.file, { maxBytes: MAX_KNOWLEDGE_BYTES }); // files: regular, under the cap, never blocks
    } catch (err) {
      if (!(err instanceof InputFileError)) throw err;
      throw new KnowledgeError(
        `knowledge file ${o.file}: ${err.errno === 'ENOENT' || err.errno === 'EACCES' ? `cannot read (${err.errno})` : err.reason}`,
      );
    }
    const entries = readEntries(o.file, bytes, o.mode);
    const texts = entries.map((e) => (o.mode === 'qa' ? e.q! : e.chunk!));
    const cacheable = !embedderLearns(o.embedder);
    const dir = o.cacheDir ?? defaultCacheDir();
    const key = createHash('sha256').update(bytes).update(`\u0000${o.mode}\u0000${o.embedder.id}`).digest('hex').slice(0, 40);
    const path = join(dir, `${key}.f32`);
    if (cacheable) {
      const cached = readCache(path, entries.length, o.embedder.dimension);
      if (cached) return new KnowledgeBase(o.file, o.mode, entries, cached, o.embedder, true);
    }
    const vectors = await o.embedder.embed(texts);
    if (cacheable) writeCache(dir, path, vectors);
    return new KnowledgeBase(o.file, o.mode, entries, vectors, o.embedder, false);
  }

  get embedderId(): string {
    return this.embedder.id;
  }

  /** Entries most similar to the query, best first: at most `topK`, each at least `threshold` similar. */
  async search(query: string, topK: number, threshold: number): Promise<KnowledgeHit[]> {
    if (query.trim() === '') return [];
    const [q] = await (this.embedder.embedQuery ?? this.embedder.embed).call(this.embedder, [query]);
    const scored = this.vectors.map((v, i) => {
      let dot = 0;
      for (let d = 0; d < v.length; d++) dot += v[d]! * q![d]!;
      return { i, dot };
    });
    scored.sort((a, b) => b.dot - a.dot || a.i - b.i);
    return scored
      .slice(0, topK)
      .filter((s) => s.dot >= threshold)
      .map((s) => ({ ...this.entries[s.i]!, score: s.dot }));
  }
}
