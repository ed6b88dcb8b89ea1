// Embeddings of the stored messages: unit-length Float32 rows in one growing buffer, and exact
// top-k cosine retrieval over a range of rows with an excluded range and a minimum similarity.
//
// Speed: a scan over 100k rows of 256 floats reads 100 MB, which alone takes longer than the
// 10 ms we allow on a small machine. So each row also has an int8 copy (a quarter of the bytes)
// that a SIMD kernel scans first; every row whose int8 score, widened by a proven bound on the
// quantisation error, could still reach the top k is then rescored from its Float32 row. The
// result is exactly what a brute-force Float32 scan returns, in a fraction of the time.
import { CHUNK, Int8Rows } from './int8-scan.js';
import type { Hit, SearchOptions, VectorIndex } from './vector-index.js';
import { EngineError } from '../../shared/errors.js';

export type { Hit, SearchOptions } from './vector-index.js';

const Q_MAX = 16383;

export class VectorStore implements VectorIndex {
  readonly dimension: number;
  private f32: Float32Array;
  private scale: Float32Array;
  private readonly int8: Int8Rows;
  private n = 0;
  private readonly qf = { vec: new Float64Array(0) };
  /** Largest int16 query value for which no int32 sum can overflow. */
  private readonly qMax: number;

  constructor(dimension: number, options: { simd?: boolean; initialCapacity?: number } = {}) {
    if (!Number.isInteger(dimension) || dimension < 1)
      throw new EngineError(`vector store: dimension must be a positive integer, got ${dimension}`, 'VECTOR_STORE');
    this.dimension = dimension;
    const cap = Math.max(16, options.initialCapacity ?? 256);
    this.f32 = new Float32Array(cap * dimension);
    this.scale = new Float32Array(cap);
    this.int8 = new Int8Rows(dimension, { simd: options.simd });
    this.int8.reserve(cap);
    this.qf.vec = new Float64Array(dimension);
    this.qMax = Math.min(Q_MAX, Math.floor(2147483647 / (127 * this.int8.stride)));
  }

  get size(): number {
    return this.n;
  }

  /** Whether the int8 scan runs as WebAssembly SIMD (else plain JS, same results). */
  get simd(): boolean {
    return this.int8.simd;
  }

  /** Bytes held by the store, including spare capacity. */
  get byteLength(): number {
    return this.f32.byteLength + this.scale.byteLength + this.int8.byteLength;
  }

  /** Bytes one more row costs, without spare capacity. */
  get bytesPerRow(): number {
    return this.dimension * 4 + 4 + this.int8.stride;
  }

  /** Append a vector (normalised on the way in); returns its row number. */
  add(vector: ArrayLike<number>): number {
    const d = this.dimension;
    if (vector.length !== d)
      throw new EngineError(`vector store: expected a ${d}-dimensional vector, got ${vector.length}`, 'VECTOR_STORE');
    const row = this.n;
    if ((row + 1) * d > this.f32.length) {
      const cap = Math.max(row + 1, (this.f32.length / d) * 2);
      const f = new Float32Array(cap * d);
      f.set(this.f32);
      this.f32 = f;
      const s = new Float32Array(cap);
      s.set(this.scale);
      this.scale = s;
    }
    this.int8.reserve(row + 1);
    let norm = 0;
    for (let i = 0; i < d; i++) norm += vector[i]! * vector[i]!;
    norm = Math.sqrt(norm);
    const inv = norm > 0 ? 1 / norm : 0;
    const off = row * d;
    let max = 0;
    for (let i = 0; i < d; i++) {
      const v = vector[i]! * inv;
      this.f32[off + i] = v;
      const a = Math.abs(this.f32[off + i]!);
      if (a > max) max = a;
    }
    const s = max / 127;
    this.scale[row] = s;
    const rows = this.int8.rows;
    const boff = row * this.int8.stride;
    for (let i = 0; i < d; i++) rows[boff + i] = s > 0 ? Math.round(this.f32[off + i]! / s) : 0;
    this.n++;
    return row;
  }

  /** The stored (unit) vector of a row, as a view into the buffer (copy it to keep it). */
  get(row: number): Float32Array {
    if (row < 0 || row >= this.n) throw new RangeError(`vector store: no row ${row}`);
    return this.f32.subarray(row * this.dimension, (row + 1) * this.dimension);
  }

  /** Exact cosine similarity of a row with a unit query. */
  private exact(row: number, q: Float64Array): number {
    const f = this.f32;
    let s = 0;
    for (let i = 0, off = row * this.dimension; i < q.length; i++) s += f[off + i]! * q[i]!;
    return s;
  }

  /** The k rows most cosine-similar to the query, most similar first (ties: later row first). */
  search(query: ArrayLike<number>, k: number, options: SearchOptions = {}): Hit[] {
    const d = this.dimension;
    if (query.length !== d) throw new EngineError(`vector store: expected a ${d}-dimensional query, got ${query.length}`, 'VECTOR_STORE');
    const from = Math.max(0, options.from ?? 0);
    const to = Math.min(this.n, options.to ?? this.n);
    if (k <= 0 || from >= to) return [];
    const minSim = options.minSimilarity ?? -Infinity;
    const exFrom = options.exclude?.from ?? 0;
    const exTo = options.exclude?.to ?? 0;
    const skip = options.skip;

    // Unit query in float64, and its int16 image.
    const q = this.qf.vec;
    let norm = 0;
    for (let i = 0; i < d; i++) norm += query[i]! * query[i]!;
    norm = Math.sqrt(norm);
    if (!(norm > 0)) return [];
    let qmaxAbs = 0;
    let l1 = 0;
    for (let i = 0; i < d; i++) {
      q[i] = query[i]! / norm;
      const a = Math.abs(q[i]!);
      l1 += a;
      if (a > qmaxAbs) qmaxAbs = a;
    }
    const t = qmaxAbs / this.qMax;
    const qi = this.int8.query;
    qi.fill(0);
    for (let i = 0; i < d; i++) qi[i] = Math.round(q[i]! / t);

    // Error of an int8 score for a row of scale s (rows are unit, so their L1 norm <= sqrt(d)):
    // |exact - approx| <= sqrt(d)*t/2 + s*(|q|_1/2 + d*t/4). A little slack covers float rounding.
    const errA = (Math.sqrt(d) * t) / 2 + 1e-5;
    const errB = l1 / 2 + (d * t) / 4;

    // Pass 1: the k-th best lower bound, and every row whose upper bound may still beat it.
    const heap = new Float64Array(k); // min-heap of lower bounds
    let heapSize = 0;
    let candRows = new Int32Array(64);
    let candUpper = new Float64Array(64);
    let nCand = 0;
    const scale = this.scale;
    const scores = this.int8.scores;
    for (let start = from; start < to; start += CHUNK) {
      const count = Math.min(CHUNK, to - start);
      this.int8.scan(start, count);
      for (let j = 0; j < count; j++) {
        const row = start + j;
        if ((row >= exFrom && row < exTo) || (skip !== undefined && skip[row] !== 0)) continue;
        const s = scale[row]!;
        const approx = scores[j]! * s * t;
        const err = errA + s * errB;
        const upper = approx + err;
        const floor = heapSize === k ? heap[0]! : -Infinity;
        if (upper < floor || upper < minSim) continue;
        const lower = approx - err;
        if (heapSize < k) {
          heap[heapSize] = lower;
          siftUp(heap, heapSize++);
        } else if (lower > heap[0]!) {
          heap[0] = lower;
          siftDown(heap, k);
        }
        if (nCand === candRows.length) {
          const r = new Int32Array(nCand * 2);
          r.set(candRows);
          candRows = r;
          const u = new Float64Array(nCand * 2);
          u.set(candUpper);
          candUpper = u;
        }
        candRows[nCand] = row;
        candUpper[nCand++] = upper;
      }
    }
    // Pass 2: exact scores, best upper bound first, until no remaining row can beat the k-th.
    const floor = Math.max(heapSize === k ? heap[0]! : -Infinity, minSim);
    const order: number[] = [];
    for (let c = 0; c < nCand; c++) if (candUpper[c]! >= floor) order.push(c);
    order.sort((a, b) => candUpper[b]! - candUpper[a]!);
    const hits: Hit[] = [];
    for (const c of order) {
      if (hits.length === k && candUpper[c]! < hits[k - 1]!.score) break;
      const row = candRows[c]!;
      const score = this.exact(row, q);
      if (score < minSim) continue;
      if (hits.length === k && (score < hits[k - 1]!.score || (score === hits[k - 1]!.score && row < hits[k - 1]!.row))) continue;
      // Insert in order (score descending, later row first on ties); k is small.
      let i = hits.length === k ? k - 1 : hits.length;
      if (hits.length < k) hits.push({ row, score });
      while (i > 0 && (hits[i - 1]!.score < score || (hits[i - 1]!.score === score && hits[i - 1]!.row < row))) {
        hits[i] = hits[i - 1]!;
        i--;
      }
      hits[i] = { row, score };
    }
    return hits;
  }

  /** Brute-force exact search over the Float32 rows (reference for tests and small stores). */
  searchExact(query: ArrayLike<number>, k: number, options: SearchOptions = {}): Hit[] {
    const d = this.dimension;
    const from = Math.max(0, options.from ?? 0);
    const to = Math.min(this.n, options.to ?? this.n);
    const minSim = options.minSimilarity ?? -Infinity;
    let norm = 0;
    for (let i = 0; i < d; i++) norm += query[i]! * query[i]!;
    norm = Math.sqrt(norm);
    if (k <= 0 || !(norm > 0)) return [];
    const q = new Float64Array(d);
    for (let i = 0; i < d; i++) q[i] = query[i]! / norm;
    const hits: Hit[] = [];
    for (let row = from; row < to; row++) {
      if (options.exclude && row >= options.exclude.from && row < options.exclude.to) continue;
      if (options.skip && options.skip[row] !== 0) continue;
      const score = this.exact(row, q);
      if (score >= minSim) hits.push({ row, score });
    }
    hits.sort((a, b) => b.score - a.score || b.row - a.row);
    return hits.slice(0, k);
  }
}

function siftUp(h: Float64Array, i: number): void {
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (h[p]! <= h[i]!) break;
    const x = h[p]!;
    h[p] = h[i]!;
    h[i] = x;
    i = p;
  }
}

function siftDown(h: Float64Array, n: number): void {
  let i = 0;
  for (;;) {
    const l = 2 * i + 1,
      r = l + 1;
    let m = i;
    if (l < n && h[l]! < h[m]!) m = l;
    if (r < n && h[r]! < h[m]!) m = r;
    if (m === i) return;
    const x = h[m]!;
    h[m] = h[i]!;
    h[i] = x;
    i = m;
  }
}
