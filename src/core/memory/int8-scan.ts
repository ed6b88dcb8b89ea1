// The inner loop of retrieval: dot products of one int16 query with many int8 rows, written as
// a tiny WebAssembly SIMD function (assembled below, a few hundred bytes) with a plain JS fallback
// that computes the same integers. Both work on one growable memory laid out as
//   [query: int16 x stride][scores: int32 x CHUNK][rows: int8 x stride each ...]
// where stride (the row length in bytes) is a multiple of 64.

/** Rows scanned per call; scores of one chunk are read by the caller before the next. */
export const CHUNK = 4096;

// --- A minimal WebAssembly assembler: just what the one function needs. -----------------------
const uleb = (n: number): number[] => {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
};
const sleb = (n: number): number[] => {
  const out: number[] = [];
  for (;;) {
    const b = n & 0x7f;
    n >>= 7;
    if ((n === 0 && !(b & 0x40)) || (n === -1 && b & 0x40)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
};
const vec = (items: number[][]): number[] => [...uleb(items.length), ...items.flat()];
const section = (id: number, bytes: number[]): number[] => [id, ...uleb(bytes.length), ...bytes];
const name = (s: string): number[] => [...uleb(s.length), ...Array.from(s, (c) => c.charCodeAt(0))];

const I32 = 0x7f,
  V128 = 0x7b;
const get = (i: number) => [0x20, i],
  set = (i: number) => [0x21, i],
  tee = (i: number) => [0x22, i];
const i32 = (n: number) => [0x41, ...sleb(n)];
const I32_ADD = 0x6a,
  I32_SUB = 0x6b,
  I32_EQZ = 0x45,
  I32_LT_U = 0x49,
  BR_IF = 0x0d,
  END = 0x0b;
const BLOCK = [0x02, 0x40],
  LOOP = [0x03, 0x40];
const v128Load = (offset: number) => [0xfd, 0x00, 4, ...uleb(offset)];
const V128_ZERO = [0xfd, 0x0c, ...new Array<number>(16).fill(0)];
const EXTEND_LOW_I8 = [0xfd, 0x87, 0x01]; // i16x8.extend_low_i8x16_s
const EXTEND_HIGH_I8 = [0xfd, 0x88, 0x01]; // i16x8.extend_high_i8x16_s
const DOT_I16 = [0xfd, 0xba, 0x01]; // i32x4.dot_i16x8_s
const ADD_I32X4 = [0xfd, 0xae, 0x01]; // i32x4.add
const lane = (l: number) => [0xfd, 0x1b, l]; // i32x4.extract_lane
const I32_STORE = [0x36, 2, 0];

/** Row bytes handled per iteration of the inner loop (the stride is a multiple of this). */
export const ROW_BLOCK = 64;

/**
 * scan(q, p, n, stride, out): for each of n rows starting at byte p (stride bytes apart),
 * out[r] = sum_i q[i] * row[i], with q int16 at byte q and out int32 at byte out.
 * Locals: 5 = row pointer, 6 = query pointer, 7 = end of the row, 8/9 = accumulators, 10 = 16 row bytes.
 */
function scanModule(): Uint8Array<ArrayBuffer> {
  const Q = 0,
    P = 1,
    N = 2,
    STRIDE = 3,
    OUT = 4,
    RP = 5,
    QP = 6,
    END_ = 7,
    LO = 8,
    HI = 9,
    ROW = 10;
  const step: number[] = [];
  for (let u = 0; u < ROW_BLOCK / 16; u++) {
    // 16 row bytes (int8) against 16 query values (int16, 32 bytes): two dot products.
    step.push(
      ...get(RP),
      ...v128Load(16 * u),
      ...set(ROW),
      ...get(LO),
      ...get(ROW),
      ...EXTEND_LOW_I8,
      ...get(QP),
      ...v128Load(32 * u),
      ...DOT_I16,
      ...ADD_I32X4,
      ...set(LO),
      ...get(HI),
      ...get(ROW),
      ...EXTEND_HIGH_I8,
      ...get(QP),
      ...v128Load(32 * u + 16),
      ...DOT_I16,
      ...ADD_I32X4,
      ...set(HI),
    );
  }
  const body = [
    ...BLOCK,
    ...get(N),
    I32_EQZ,
    BR_IF,
    0,
    ...LOOP,
    ...V128_ZERO,
    ...set(LO),
    ...V128_ZERO,
    ...set(HI),
    ...get(P),
    ...tee(RP),
    ...get(STRIDE),
    I32_ADD,
    ...set(END_),
    ...get(Q),
    ...set(QP),
    ...LOOP,
    ...step,
    ...get(QP),
    ...i32(2 * ROW_BLOCK),
    I32_ADD,
    ...set(QP),
    ...get(RP),
    ...i32(ROW_BLOCK),
    I32_ADD,
    ...tee(RP),
    ...get(END_),
    I32_LT_U,
    BR_IF,
    0,
    END,
    ...get(LO),
    ...get(HI),
    ...ADD_I32X4,
    ...set(LO),
    ...get(OUT),
    ...get(LO),
    ...lane(0),
    ...get(LO),
    ...lane(1),
    I32_ADD,
    ...get(LO),
    ...lane(2),
    I32_ADD,
    ...get(LO),
    ...lane(3),
    I32_ADD,
    ...I32_STORE,
    ...get(OUT),
    ...i32(4),
    I32_ADD,
    ...set(OUT),
    ...get(P),
    ...get(STRIDE),
    I32_ADD,
    ...set(P),
    ...get(N),
    ...i32(1),
    I32_SUB,
    ...tee(N),
    BR_IF,
    0,
    END,
    END,
    END,
  ];
  const code = [
    ...vec([
      [3, I32],
      [3, V128],
    ]),
    ...body,
  ];
  return new Uint8Array([
    0x00,
    0x61,
    0x73,
    0x6d,
    1,
    0,
    0,
    0,
    ...section(1, vec([[0x60, ...vec([[I32], [I32], [I32], [I32], [I32]]), ...vec([])]])),
    ...section(2, vec([[...name('env'), ...name('memory'), 0x02, 0x00, 1]])),
    ...section(3, vec([[0]])),
    ...section(7, vec([[...name('scan'), 0x00, 0]])),
    ...section(10, vec([[...uleb(code.length), ...code]])),
  ]);
}

let compiled: WebAssembly.Module | null | undefined;
/** The compiled SIMD module, or null where WebAssembly SIMD is unavailable. */
function simdModule(): WebAssembly.Module | null {
  if (compiled === undefined) {
    try {
      const bytes = scanModule();
      compiled = typeof WebAssembly === 'object' && WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
    } catch {
      compiled = null;
    }
  }
  return compiled;
}

const PAGE = 65536;

/** Int8 rows with a scan over them; SIMD where available, else JS with identical results. */
export class Int8Rows {
  readonly stride: number;
  readonly simd: boolean;
  private memory?: WebAssembly.Memory;
  private buffer: ArrayBuffer;
  private scanFn?: (q: number, p: number, n: number, stride: number, out: number) => void;
  private readonly rowsAt: number;
  private capacity = 0;
  /** Views, refreshed whenever the memory grows. */
  query!: Int16Array;
  scores!: Int32Array;
  rows!: Int8Array;

  constructor(dimension: number, options: { simd?: boolean } = {}) {
    this.stride = Math.ceil(Math.max(1, dimension) / ROW_BLOCK) * ROW_BLOCK;
    this.rowsAt = this.stride * 2 + CHUNK * 4;
    const mod = options.simd === false ? null : simdModule();
    this.simd = mod !== null;
    if (mod) {
      this.memory = new WebAssembly.Memory({ initial: Math.ceil(this.rowsAt / PAGE) + 1 });
      const instance = new WebAssembly.Instance(mod, { env: { memory: this.memory } });
      this.scanFn = instance.exports.scan as Int8Rows['scanFn'];
      this.buffer = this.memory.buffer;
    } else {
      this.buffer = new ArrayBuffer(this.rowsAt + this.stride * 64);
    }
    this.refresh();
  }

  private refresh(): void {
    this.query = new Int16Array(this.buffer, 0, this.stride);
    this.scores = new Int32Array(this.buffer, this.stride * 2, CHUNK);
    this.capacity = Math.floor((this.buffer.byteLength - this.rowsAt) / this.stride);
    this.rows = new Int8Array(this.buffer, this.rowsAt, this.capacity * this.stride);
  }

  /** Make room for `count` rows (grows by doubling). */
  reserve(count: number): void {
    if (count <= this.capacity) return;
    const want = this.rowsAt + Math.max(count, this.capacity * 2, 64) * this.stride;
    if (this.memory) {
      this.memory.grow(Math.ceil((want - this.buffer.byteLength) / PAGE));
      this.buffer = this.memory.buffer;
    } else {
      const next = new ArrayBuffer(want);
      new Uint8Array(next).set(new Uint8Array(this.buffer));
      this.buffer = next;
    }
    this.refresh();
  }

  /** Bytes held (including unused capacity). */
  get byteLength(): number {
    return this.buffer.byteLength;
  }

  /** scores[j] = query · row(first + j) for j < count (count <= CHUNK). */
  scan(first: number, count: number): void {
    if (this.scanFn) {
      this.scanFn(0, this.rowsAt + first * this.stride, count, this.stride, this.stride * 2);
      return;
    }
    const { query, rows, scores, stride } = this;
    for (let j = 0, off = first * stride; j < count; j++, off += stride) {
      let s = 0;
      for (let i = 0; i < stride; i++) s += query[i]! * rows[off + i]!;
      scores[j] = s;
    }
  }
}
