// The order book of the market world: one-unit limit orders, bids best (highest) first and asks
// best (lowest) first, ties by arrival (price-time priority), plus the clearing of a call auction.
export type Side = 'bid' | 'ask';

export interface Order {
  /** Arrival number: earlier orders have smaller ids (time priority). */
  id: number;
  agent: string;
  side: Side;
  price: number;
  step: number;
}

/** Inserts keeping price-time priority (a bisection on price, after equal prices). */
export function insertOrder(list: Order[], order: Order): void {
  const better = order.side === 'bid' ? (a: number, b: number) => a > b : (a: number, b: number) => a < b;
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const p = list[mid]!.price;
    if (better(order.price, p)) hi = mid;
    else lo = mid + 1;
  }
  list.splice(lo, 0, order);
}

/**
 * Removes the order `id` from one side. With its price known, a bisection finds its price level
 * (orders of one price are in arrival order after it), so a book of n orders is not scanned.
 */
export function removeOrder(list: Order[], id: number, price?: number): Order | undefined {
  let i = -1;
  if (price !== undefined && list.length > 0) {
    const side = list[0]!.side;
    let lo = 0;
    let hi = list.length;
    // the first order whose price is not better than `price`
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const p = list[mid]!.price;
      if (side === 'bid' ? p > price : p < price) lo = mid + 1;
      else hi = mid;
    }
    for (let j = lo; j < list.length && list[j]!.price === price; j++)
      if (list[j]!.id === id) {
        i = j;
        break;
      }
  } else i = list.findIndex((o) => o.id === id);
  return i < 0 ? undefined : list.splice(i, 1)[0];
}

export interface Level {
  price: number;
  orders: number;
}

/** The best `k` price levels of one side. */
export function levels(list: readonly Order[], k: number): Level[] {
  const out: Level[] = [];
  for (const o of list) {
    const last = out[out.length - 1];
    if (last && last.price === o.price) last.orders++;
    else if (out.length < k) out.push({ price: o.price, orders: 1 });
    else break;
  }
  return out;
}

/**
 * A call auction's clearing over sorted books: the largest k with bid_k >= ask_k trades at one
 * price, the middle of the range that also leaves the first unmatched bid and ask unwilling.
 */
export function clearingOf(bids: readonly Order[], asks: readonly Order[]): { k: number; price: number } | undefined {
  let k = 0;
  while (k < bids.length && k < asks.length && bids[k]!.price >= asks[k]!.price) k++;
  if (k === 0) return undefined;
  const low = Math.max(asks[k - 1]!.price, bids[k]?.price ?? -Infinity);
  const high = Math.min(bids[k - 1]!.price, asks[k]?.price ?? Infinity);
  return { k, price: (low + high) / 2 };
}

/** Max surplus from the supply and demand curves: the best buyers' values against the cheapest sellers' costs. */
export function maxSurplus(values: readonly number[], costs: readonly number[]): number {
  const v = [...values].sort((a, b) => b - a);
  const c = [...costs].sort((a, b) => a - b);
  let s = 0;
  for (let i = 0; i < v.length && i < c.length && v[i]! > c[i]!; i++) s += v[i]! - c[i]!;
  return s;
}

/** The Gini coefficient of non-negative amounts (0: equal; null when the total is not positive). */
export function gini(amounts: readonly number[]): number | null {
  const xs = [...amounts].sort((a, b) => a - b);
  const n = xs.length;
  const total = xs.reduce((s, x) => s + x, 0);
  if (n === 0 || total <= 0) return null;
  let weighted = 0;
  xs.forEach((x, i) => (weighted += (2 * (i + 1) - n - 1) * x));
  return weighted / (n * total);
}
