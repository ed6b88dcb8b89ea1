// One side of the market world's order book as an indexed binary heap (struct of arrays): the
// order of highest priority (best price, then earliest arrival: price-time priority) on top. An
// order's owner is a trader's number; where its order sits in the heap is kept by trader (a
// trader has at most one resting order), so adding, withdrawing and trading an order cost
// O(log n), never a shift of the whole side. The book in priority order (`sorted`) and its best
// price levels (`levels`) are read from it on demand.
import type { Level, Order, Side } from './market-book.js';

export class SideBook {
  /** Orders resting on this side. */
  size = 0;
  /** The price times `dir` (bids negated): the smallest key has the best price on either side. */
  private key: Float64Array;
  private id: Float64Array;
  private step: Float64Array;
  private owner: Int32Array;
  private readonly dir: number;

  constructor(
    readonly side: Side,
    /** By trader: its order's place in its side's heap, -1 for none (shared by both sides). */
    private readonly slot: Int32Array,
    capacity = 16,
  ) {
    this.dir = side === 'bid' ? -1 : 1;
    const n = Math.max(16, capacity);
    this.key = new Float64Array(n);
    this.id = new Float64Array(n);
    this.step = new Float64Array(n);
    this.owner = new Int32Array(n);
  }

  /** The best price, or undefined when the side is empty. */
  bestPrice(): number | undefined {
    return this.size === 0 ? undefined : this.dir * this.key[0]!;
  }

  /** Rests an order of trader `t` (which has none on this side). */
  insert(t: number, price: number, id: number, step: number): void {
    if (this.size === this.key.length) this.grow();
    const at = this.size++;
    this.siftUp(at, this.dir * price, id, step, t);
  }

  /** Withdraws trader t's order; false when it has none here. */
  remove(t: number): boolean {
    const at = this.slot[t]!;
    if (at < 0 || at >= this.size || this.owner[at] !== t) return false;
    this.slot[t] = -1;
    const last = --this.size;
    if (at === last) return true;
    const k = this.key[last]!;
    const i = this.id[last]!;
    const s = this.step[last]!;
    const o = this.owner[last]!;
    // the last order fills the hole: up if it ranks before the hole's parent, else down
    if (at > 0 && before(k, i, this.key[(at - 1) >> 1]!, this.id[(at - 1) >> 1]!)) this.siftUp(at, k, i, s, o);
    else this.siftDown(at, k, i, s, o);
    return true;
  }

  /** Takes the best order off the book: its trader, or -1 when empty. */
  pop(): number {
    if (this.size === 0) return -1;
    const top = this.owner[0]!;
    this.remove(top);
    return top;
  }

  /** Every order withdrawn; `each` sees its trader. */
  clear(each: (t: number) => void): void {
    for (let n = 0; n < this.size; n++) {
      const t = this.owner[n]!;
      this.slot[t] = -1;
      each(t);
    }
    this.size = 0;
  }

  /** The orders in priority order (`agentOf` names a trader). */
  sorted(agentOf: (t: number) => string): Order[] {
    const at = Array.from({ length: this.size }, (_, n) => n);
    at.sort((a, b) => (before(this.key[a]!, this.id[a]!, this.key[b]!, this.id[b]!) ? -1 : 1));
    return at.map((n) => ({
      id: this.id[n]!,
      agent: agentOf(this.owner[n]!),
      side: this.side,
      price: this.dir * this.key[n]!,
      step: this.step[n]!,
    }));
  }

  /** The best `k` price levels, read best-first from the heap's top (no sort of the side). */
  levels(k: number): Level[] {
    const out: Level[] = [];
    if (k <= 0 || this.size === 0) return out;
    // a small heap of the heap's positions not yet read whose parents were
    const open: number[] = [0];
    while (open.length > 0) {
      const n = this.popOpen(open);
      const price = this.dir * this.key[n]!;
      const last = out[out.length - 1];
      if (last && last.price === price) last.orders++;
      else if (out.length < k) out.push({ price, orders: 1 });
      else break;
      for (const c of [2 * n + 1, 2 * n + 2]) if (c < this.size) this.pushOpen(open, c);
    }
    return out;
  }

  private pushOpen(open: number[], n: number): void {
    let at = open.length;
    open.push(n);
    while (at > 0) {
      const up = (at - 1) >> 1;
      const p = open[up]!;
      if (!before(this.key[n]!, this.id[n]!, this.key[p]!, this.id[p]!)) break;
      open[at] = p;
      at = up;
    }
    open[at] = n;
  }

  private popOpen(open: number[]): number {
    const top = open[0]!;
    const last = open.pop()!;
    if (open.length === 0) return top;
    let at = 0;
    for (;;) {
      let c = 2 * at + 1;
      if (c >= open.length) break;
      const r = c + 1;
      if (r < open.length && before(this.key[open[r]!]!, this.id[open[r]!]!, this.key[open[c]!]!, this.id[open[c]!]!)) c = r;
      if (!before(this.key[open[c]!]!, this.id[open[c]!]!, this.key[last]!, this.id[last]!)) break;
      open[at] = open[c]!;
      at = c;
    }
    open[at] = last;
    return top;
  }

  private siftUp(at: number, k: number, i: number, s: number, o: number): void {
    const key = this.key;
    const id = this.id;
    while (at > 0) {
      const up = (at - 1) >> 1;
      if (!before(k, i, key[up]!, id[up]!)) break;
      this.put(at, key[up]!, id[up]!, this.step[up]!, this.owner[up]!);
      at = up;
    }
    this.put(at, k, i, s, o);
  }

  private siftDown(at: number, k: number, i: number, s: number, o: number): void {
    const key = this.key;
    const id = this.id;
    const size = this.size;
    for (;;) {
      let c = 2 * at + 1;
      if (c >= size) break;
      if (c + 1 < size && before(key[c + 1]!, id[c + 1]!, key[c]!, id[c]!)) c++;
      if (!before(key[c]!, id[c]!, k, i)) break;
      this.put(at, key[c]!, id[c]!, this.step[c]!, this.owner[c]!);
      at = c;
    }
    this.put(at, k, i, s, o);
  }

  private put(at: number, k: number, i: number, s: number, o: number): void {
    this.key[at] = k;
    this.id[at] = i;
    this.step[at] = s;
    this.owner[at] = o;
    this.slot[o] = at;
  }

  private grow(): void {
    const n = this.key.length * 2;
    for (const name of ['key', 'id', 'step'] as const) {
      const next = new Float64Array(n);
      next.set(this[name]);
      this[name] = next;
    }
    const owner = new Int32Array(n);
    owner.set(this.owner);
    this.owner = owner;
  }
}

/** Whether (key a, id a) ranks before (key b, id b): the better price, then the earlier arrival. */
function before(ka: number, ia: number, kb: number, ib: number): boolean {
  return ka < kb || (ka === kb && ia < ib);
}

/** Amounts kept in ascending order as they change one at a time (the traders' profits, for the wealth Gini). */
export class SortedAmounts {
  private xs: Float64Array;

  constructor(amounts: readonly number[]) {
    this.xs = Float64Array.from(amounts).sort();
  }

  /** Every amount anew. */
  reset(amounts: readonly number[]): void {
    this.xs = Float64Array.from(amounts).sort();
  }

  /** One amount changed from `was` to `now`. */
  replace(was: number, now: number): void {
    const xs = this.xs;
    let at = lowerBound(xs, was);
    if (at >= xs.length || xs[at] !== was) return;
    const to = lowerBound(xs, now);
    // shift the amounts between the two places by one, then put the new amount in the gap
    if (to > at + 1) {
      xs.copyWithin(at, at + 1, to);
      at = to - 1;
    } else if (to < at) {
      xs.copyWithin(to + 1, to, at);
      at = to;
    }
    xs[at] = now;
  }

  /**
   * The Gini coefficient of `offset` + each amount, with the sums of `gini` (./market-book.ts) in
   * the same order, so the same figure to the last bit (null when the total is not positive).
   */
  gini(offset: number): number | null {
    const xs = this.xs;
    const n = xs.length;
    let total = 0;
    for (let i = 0; i < n; i++) total += offset + xs[i]!;
    if (n === 0 || total <= 0) return null;
    let weighted = 0;
    for (let i = 0; i < n; i++) weighted += (2 * (i + 1) - n - 1) * (offset + xs[i]!);
    return weighted / (n * total);
  }
}

/** The first place in ascending `xs` whose amount is not below `x`. */
function lowerBound(xs: Float64Array, x: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
