// The `local` embedder: no network, no model, deterministic, fast. A text becomes a bag of
// hashed features (word stems, pairs of neighbouring content words, character 4-grams of each
// word), weighted by sub-linear term frequency times an IDF learned online from the texts it
// has embedded, signed-hashed into a fixed number of dimensions and L2-normalised.
//
// It captures shared vocabulary, including inflections ("indexes", "indexing", "indexed") and
// near spellings, and weights rare words above common ones. It does not capture meaning beyond
// the words: synonyms ("car"/"automobile"), paraphrases with no word in common, negation and
// word order (apart from neighbouring pairs) are invisible to it. See docs/memory.md.
import { fmix32 } from '../../shared/util/hash.js';
import { normalise, type Embedder } from './embedder.js';
import { EngineError } from '../../shared/errors.js';

const STOP_WORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each either else ever every few for from further get got had has have having he her ' +
    'here hers herself him himself his how i if in into is it its itself just let lets like me more most much must my myself no nor not ' +
    'now of off on once only or other our ours ourselves out over own same say said she should so some such than that thats the their ' +
    'theirs them themselves then there these they this those through to too under until up upon us very was we well were what when where ' +
    'which while who whom whose why will with would yes yet you your yours yourself yourselves im ive youre dont doesnt isnt its lets ok okay'
  ).split(' '),
);

/** A light English stemmer: conflates plurals and -ing/-ed/-ly/-ation forms, drops a final e. */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (/(?:ss|x|ch|sh|z)es$/.test(w)) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.length > 6 && w.endsWith('ations')) w = w.slice(0, -6);
  else if (w.length > 5 && w.endsWith('ation')) w = w.slice(0, -5);
  else if (w.length > 5 && w.endsWith('ing')) w = undouble(w.slice(0, -3));
  else if (w.length > 4 && w.endsWith('ed')) w = undouble(w.slice(0, -2));
  else if (w.length > 4 && w.endsWith('ly')) w = w.slice(0, -2);
  if (w.length > 3 && w.endsWith('e')) w = w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  const n = w.length;
  if (n >= 3 && w[n - 1] === w[n - 2] && !'lsz'.includes(w[n - 1]!)) return w.slice(0, -1);
  return w;
}

// Feature groups and their weights: whole stems count most, neighbouring pairs add phrase
// information, character 4-grams catch inflections and near spellings without dominating.
const GROUP_WEIGHT = [1.0, 0.5, 0.3];
const G_WORD = 0,
  G_PAIR = 1,
  G_CHAR = 2;

const FNV_OFFSET = 0x811c9dc5,
  FNV_PRIME = 0x01000193;

function hashString(s: string, seed: number): number {
  let h = FNV_OFFSET ^ seed;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV_PRIME);
  return h >>> 0;
}

/** Final avalanche (murmur3 fmix32), so nearby hashes land on unrelated dimensions. */
const mix = fmix32;

const TOKEN = /[\p{L}\p{N}]+/gu;
// eslint-disable-next-line no-control-regex -- the ASCII range starts at \x00 on purpose
const NON_ASCII = /[^\x00-\x7f]/;
const MARKS = /\p{M}+/gu;
const DF_BITS = 18;
/** Distinct words whose features are cached (the cache starts over when full). */
const WORD_CACHE = 50_000;
const NONE = new Uint32Array(0);
/** ln(1 + x) for small x (document frequencies), computed once. */
const LN1P = Float64Array.from({ length: 4096 }, (_, x) => Math.log(1 + x));

/** A feature key: 30 bits of hash, the feature group in the top two. */
function tag(h: number, group: number): number {
  return ((h & 0x3fffffff) | (group << 30)) >>> 0;
}

export interface LocalEmbedderOptions {
  /** Number of dimensions (default 256). */
  dimension?: number;
}

export class LocalEmbedder implements Embedder {
  readonly id: string;
  readonly dimension: number;
  /** Document frequency per hashed feature (2^20 buckets). */
  private readonly df = new Uint32Array(1 << DF_BITS);
  private docs = 0;
  private feats = new Uint32Array(1024);
  private readonly words = new Map<string, Uint32Array>();
  /** Scratch table for counting features: keys, counts, mixed hashes, slots in use. */
  private table = new Uint32Array(1024);
  private counts = new Uint32Array(1024);
  private mixed = new Uint32Array(1024);
  private used = new Int32Array(1024);
  /** dimension - 1 when it is a power of two (a mask instead of a modulo), else -1. */
  private readonly dimMask: number;

  constructor(options: LocalEmbedderOptions = {}) {
    const d = options.dimension ?? 256;
    if (!Number.isInteger(d) || d < 8 || d > 2048)
      throw new EngineError(`local embedder: dimension must be an integer from 8 to 2048, got ${d}`, 'EMBEDDER');
    this.dimension = d;
    this.dimMask = (d & (d - 1)) === 0 ? d - 1 : -1;
    this.id = d === 256 ? 'local-v1' : `local-v1-${d}`;
  }

  /** Texts embedded so far (the IDF statistics are learned from them). */
  get documents(): number {
    return this.docs;
  }

  /** Embed texts and learn their document frequencies, in order (batching never changes a vector). */
  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t, true));
  }

  /** Embed query texts without learning from them. */
  async embedQuery(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t, false));
  }

  /** One text, synchronously; `learn` adds it to the IDF statistics first. */
  embedOne(text: string, learn = true): Float32Array {
    const n = this.features(text);
    const feats = this.feats;
    // Count each distinct feature (term frequency) in an open-addressing table, in first-seen order.
    if (this.table.length < 2 * n) this.growTable(2 * n);
    const { table, counts, mixed, used } = this;
    const tmask = table.length - 1;
    let distinct = 0;
    for (let i = 0; i < n; i++) {
      const key = feats[i]!;
      const m = mix(key);
      let slot = m & tmask;
      while (counts[slot] !== 0 && table[slot] !== key) slot = (slot + 1) & tmask;
      const seen = counts[slot]!;
      counts[slot] = seen + 1;
      if (seen === 0) {
        table[slot] = key;
        mixed[slot] = m;
        used[distinct++] = slot;
      }
    }
    const out = new Float32Array(this.dimension);
    if (learn) this.docs++;
    const docs = Math.max(1, this.docs);
    const lnDocs = Math.log(1 + docs);
    const mask = (1 << DF_BITS) - 1;
    const df = this.df;
    const dimMask = this.dimMask;
    for (let u = 0; u < distinct; u++) {
      const slot = used[u]!;
      const tf = counts[slot]!;
      counts[slot] = 0;
      const key = table[slot]!;
      const m = mixed[slot]!;
      const dfSlot = m & mask;
      if (learn) df[dfSlot]!++;
      // Smoothed IDF, ln((1+N)/(1+df)) + 1; df may lag behind N for unseen features (queries).
      const f = Math.min(df[dfSlot]!, docs);
      const idf = lnDocs - (f < LN1P.length ? LN1P[f]! : Math.log(1 + f)) + 1;
      const w = (tf === 1 ? 1 : 1 + Math.log(tf)) * idf * GROUP_WEIGHT[key >>> 30]!;
      const bits = (m >>> DF_BITS) & 0x7ff;
      const dim = dimMask >= 0 ? bits & dimMask : bits % this.dimension;
      out[dim]! += (m & 0x80000000) !== 0 ? -w : w;
    }
    return normalise(out);
  }

  private growTable(min: number): void {
    let size = this.table.length;
    while (size < min) size *= 2;
    this.table = new Uint32Array(size);
    this.counts = new Uint32Array(size);
    this.mixed = new Uint32Array(size);
    this.used = new Int32Array(size);
  }

  /** The features of one word, cached: [stem key, 4-gram keys...]; empty for a stop word. */
  private wordFeatures(word: string): Uint32Array {
    let f = this.words.get(word);
    if (f) return f;
    if (STOP_WORDS.has(word)) {
      f = NONE;
    } else {
      const grams = word.length < 4 || /^\d+$/.test(word) ? 0 : word.length - 1;
      f = new Uint32Array(1 + grams);
      f[0] = tag(hashString(stem(word), G_WORD), G_WORD);
      // Character 4-grams of "<word>", hashed straight from the character codes.
      const len = word.length + 2;
      for (let i = 0; i < grams; i++) {
        let h = FNV_OFFSET ^ G_CHAR;
        for (let k = i; k < i + 4; k++) h = Math.imul(h ^ (k === 0 ? 60 : k === len - 1 ? 62 : word.charCodeAt(k - 1)), FNV_PRIME);
        f[1 + i] = tag(h, G_CHAR);
      }
    }
    if (this.words.size >= WORD_CACHE) this.words.clear();
    this.words.set(word, f);
    return f;
  }

  /** Fill this.feats with the text's feature keys (group in the top two bits); returns the count. */
  private features(text: string): number {
    let t = text.toLowerCase();
    if (NON_ASCII.test(t)) t = t.normalize('NFKD').replace(MARKS, '');
    let n = 0;
    let prev = -1;
    TOKEN.lastIndex = 0;
    for (let m = TOKEN.exec(t); m !== null; m = TOKEN.exec(t)) {
      const f = this.wordFeatures(m[0]);
      if (f.length === 0) continue;
      if (n + f.length + 1 > this.feats.length) {
        const grown = new Uint32Array(Math.max(this.feats.length * 2, n + f.length + 1));
        grown.set(this.feats);
        this.feats = grown;
      }
      const stemKey = f[0]!;
      if (prev >= 0) {
        // An unordered pair of neighbouring content words.
        const lo = Math.min(prev, stemKey),
          hi = Math.max(prev, stemKey);
        this.feats[n++] = tag(mix(lo ^ Math.imul(hi, 0x9e3779b1)), G_PAIR);
      }
      prev = stemKey;
      this.feats.set(f, n);
      n += f.length;
    }
    return n;
  }
}
