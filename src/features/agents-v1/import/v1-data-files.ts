// Data files an Agents 1.0 config names (knowledge bases, category lists). Their paths were
// relative to wherever the original was started (its examples/ folder), so a path is looked up
// next to the config first, then in each folder above it.
import { existsSync, statSync } from 'node:fs';
import { readInputFile } from '../../../shared/io/read-input-file.js';
import { MAX_KNOWLEDGE_BYTES } from '../../../core/components/knowledge-base.js';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { isObject } from '../../../shared/util/is-object.js';
import { describeJsonProblem } from '../../../shared/util/json-syntax.js';

export function resolveDataPath(path: string, configFile: string): string | undefined {
  if (isAbsolute(path)) return existsSync(path) && statSync(path).isFile() ? path : undefined;
  let dir = dirname(resolve(configFile));
  for (;;) {
    const candidate = join(dir, path);
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/** Dimensions of well-known embedding models (to check stored vectors against Embed_Model). */
export const KNOWN_EMBEDDING_DIMENSIONS: Record<string, number> = {
  'text-embedding-ada-002': 1536,
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'intfloat/multilingual-e5-large': 1024,
  'intfloat/multilingual-e5-base': 768,
  'intfloat/multilingual-e5-small': 384,
  'intfloat/e5-large-v2': 1024,
  'intfloat/e5-base-v2': 768,
  'sentence-transformers/all-MiniLM-L6-v2': 384,
  'BAAI/bge-large-zh': 1024,
  'BAAI/bge-large-en': 1024,
  'shibing624/text2vec-base-chinese': 768,
};

export interface KnowledgeFileFacts {
  entries: number;
  /** Dimensions of the stored vectors (usually one). */
  dimensions: number[];
  /** Entries lacking the fields the mode needs (q and a for QA, chunk otherwise). */
  incomplete: number;
}

/** Length of a stored vector: a flat list, or a 1×d nested list. */
function vectorLength(emb: unknown): number | undefined {
  if (!Array.isArray(emb)) return undefined;
  if (emb.length === 1 && Array.isArray(emb[0])) return (emb[0] as unknown[]).length;
  return emb.length;
}

export function inspectKnowledgeFile(file: string, mode: 'qa' | 'chunk'): KnowledgeFileFacts | string {
  let doc: unknown;
  let text = '';
  try {
    text = readInputFile(file, { maxBytes: MAX_KNOWLEDGE_BYTES }); // files: regular, under the cap
    doc = JSON.parse(text);
  } catch (err) {
    return `cannot read it as JSON (${err instanceof SyntaxError ? describeJsonProblem(text, err) : (err as Error).message})`;
  }
  if (!isObject(doc)) return 'must be a JSON object of entries "0", "1", ...';
  const dims = new Set<number>();
  let incomplete = 0;
  const entries = Object.values(doc);
  for (const entry of entries) {
    if (!isObject(entry)) {
      incomplete++;
      continue;
    }
    const len = vectorLength(entry.emb);
    if (len !== undefined) dims.add(len);
    const ok = mode === 'qa' ? typeof entry.q === 'string' && typeof entry.a === 'string' : typeof entry.chunk === 'string';
    if (!ok) incomplete++;
  }
  return { entries: entries.length, dimensions: [...dims], incomplete };
}
