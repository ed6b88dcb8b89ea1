// What makes a rule step cheap must not change what it does (issue 38): a step's seeds hashed from
// a shared prefix are the seeds of the whole parts; a trader's order found by its price is the
// order a scan of the book finds; a replaced or traded order leaves the book as a scan-based book
// would; the shuffle of one action per agent is the grouped shuffle.
import { describe, expect, it } from 'vitest';
import { insertOrder, removeOrder, type Order } from '../src/features/population/worlds/market-book.js';
import { market, type MarketState } from '../src/features/population/worlds/market.js';
import { mixSeed, mixSeedFrom, seededRng, seedPrefix, shuffleInPlace, compareIds } from '../src/features/population/worlds/seed.js';
import { shuffleOrder } from '../src/features/population/worlds/order.js';
import { resolveParams, type StepAction } from '../src/features/population/worlds/world.js';

describe('seeds from a shared prefix', () => {
  it('equal mixSeed of all the parts, for text and number parts', () => {
    for (const seed of [0, 7, 2 ** 40 + 3])
      for (const step of [1, 17])
        for (const last of ['a0', 'agent-99', '', 'é', 42, 0.5])
          expect(mixSeedFrom(seedPrefix(seed, 'rule', step), last)).toBe(mixSeed(seed, 'rule', step, last));
  });
});

describe('the order book', () => {
  it('removes by price the order a scan finds, among many at one price', () => {
    const rng = seededRng(3, 'book');
    const bids: Order[] = [];
    for (let id = 0; id < 400; id++) insertOrder(bids, { id, agent: `t${id}`, side: 'bid', price: Math.floor(rng.next() * 20), step: 0 });
    const ids = shuffleInPlace(
      bids.map((o) => o.id),
      rng,
    );
    for (const id of ids) {
      const scan = bids.findIndex((o) => o.id === id);
      const expected = bids[scan]!;
      const copy = bids.filter((o) => o.id !== id);
      expect(removeOrder(bids, id, expected.price)).toBe(expected);
      expect(bids).toEqual(copy);
    }
  });

  it('a trader observes its resting order as the book holds it, through replacements and trades', () => {
    const p = resolveParams(market, { min_price: 0, max_price: 200 });
    if (!p.ok) throw new Error('params');
    const n = 60;
    const agents = Array.from({ length: n }, (_, i) => ({
      id: `t${i}`,
      attrs: i % 2 ? { role: 'seller', cost: 50 + i } : { role: 'buyer', value: 150 - i },
    }));
    const s: MarketState = market.init(p.params, agents, seededRng(1, 'init'));
    const rng = seededRng(9, 'orders');
    for (let step = 1; step <= 30; step++) {
      const actions: StepAction[] = agents.map(({ id }) => {
        const t = s.traders[id]!;
        return { agent: id, name: t.role === 'buyer' ? 'bid' : 'ask', args: { price: Math.round(rng.next() * 200) } };
      });
      market.apply(s, actions, step);
      for (const { id } of agents) {
        const t = s.traders[id]!;
        const inBook = [...s.bids, ...s.asks].filter((o) => o.agent === id);
        expect(inBook.length).toBeLessThanOrEqual(1);
        const seen = (market.observe(s, id, 5) as { open_order: unknown }).open_order;
        expect(seen).toEqual(inBook[0] ? { side: inBook[0].side, price: inBook[0].price } : null);
        expect(t.order).toBe(inBook[0]?.id);
      }
      // the books stay in price-time priority
      for (const [side, better] of [
        [s.bids, (a: Order, b: Order) => a.price > b.price],
        [s.asks, (a: Order, b: Order) => a.price < b.price],
      ] as const)
        for (let i = 1; i < side.length; i++)
          expect(better(side[i - 1]!, side[i]!) || (side[i - 1]!.price === side[i]!.price && side[i - 1]!.id < side[i]!.id)).toBe(true);
    }
  });
});

describe('the shuffle of a rule step', () => {
  it('orders one action per agent as the agents are shuffled', () => {
    const actions: StepAction[] = Array.from({ length: 50 }, (_, i) => ({ agent: `a${(i * 37) % 50}`, name: 'idle', args: {}, seq: 0 }));
    const agents = shuffleInPlace(actions.map((a) => a.agent).sort(compareIds), seededRng(5, 'order', 3));
    expect(shuffleOrder(actions, 5, 3).map((a) => a.agent)).toEqual(agents);
  });
});
