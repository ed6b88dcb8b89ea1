// The layout that makes a rule step cheap must not change what it does (issue 38, a rule tier
// faster than Mesa): each side of the market's book is an indexed heap, checked here against the
// sorted list of price-time priority (insertOrder / removeOrder); the wealth Gini from profits kept
// sorted is gini() of the wealth to the last bit; a step's actions put in canonical order by rank
// are the order of canonicalOrder; an agent's place given as a hint never picks another agent; and
// a market saves as the JSON the book always had, and restores from it (older saves too).
import { describe, expect, it } from 'vitest';
import { CanonicalOrder } from '../src/features/population/canonical.js';
import { gini, insertOrder, levels, removeOrder, type Order } from '../src/features/population/worlds/market-book.js';
import { SideBook, SortedAmounts } from '../src/features/population/worlds/market-heap.js';
import { market, type MarketState } from '../src/features/population/worlds/market.js';
import { canonicalOrder } from '../src/features/population/worlds/order.js';
import { seededRng, shuffleInPlace } from '../src/features/population/worlds/seed.js';
import { resolveParams, restoreState, saveState, type StepAction, type WorldAgent } from '../src/features/population/worlds/world.js';

describe('a side of the book as a heap', () => {
  for (const side of ['bid', 'ask'] as const)
    it(`keeps the ${side}s in price-time priority as a sorted list does, through rests, cancels and trades`, () => {
      const rng = seededRng(4, 'heap', side);
      const traders = 300;
      const slot = new Int32Array(traders).fill(-1);
      const heap = new SideBook(side, slot, 4); // small: it grows
      const list: Order[] = [];
      const resting = new Map<number, Order>();
      let id = 0;
      for (let n = 0; n < 5000; n++) {
        const t = Math.floor(rng.next() * traders);
        const u = rng.next();
        if (u < 0.1 && list.length > 0) {
          // the best order trades
          const best = list.shift()!;
          resting.delete(Number(best.agent));
          expect(heap.pop()).toBe(Number(best.agent));
        } else if (u < 0.3) {
          const own = resting.get(t);
          expect(heap.remove(t)).toBe(own !== undefined);
          if (own) {
            expect(removeOrder(list, own.id, own.price)).toBe(own);
            resting.delete(t);
          }
        } else {
          const own = resting.get(t);
          if (own) {
            heap.remove(t);
            removeOrder(list, own.id, own.price);
          }
          // few prices, so that many orders share one (time priority decides)
          const order: Order = { id: id++, agent: String(t), side: side, price: Math.floor(rng.next() * 30) / 2, step: n };
          heap.insert(t, order.price, order.id, order.step);
          insertOrder(list, order);
          resting.set(t, order);
        }
        expect(heap.size).toBe(list.length);
        expect(heap.bestPrice()).toBe(list[0]?.price);
        if (n % 97 === 0) {
          expect(heap.sorted((o) => String(o))).toEqual(list);
          for (const k of [0, 1, 3, 8]) expect(heap.levels(k)).toEqual(levels(list, k));
        }
      }
      const cleared: number[] = [];
      heap.clear((t) => cleared.push(t));
      expect(cleared.sort((a, b) => a - b)).toEqual([...resting.keys()].sort((a, b) => a - b));
      expect(heap.size).toBe(0);
      expect([...slot].every((s) => s === -1)).toBe(true);
    });
});

describe('the wealth Gini from sorted profits', () => {
  it('is gini() of endowment + profit, to the last bit, as profits change', () => {
    const rng = seededRng(8, 'gini');
    const profits = Array.from({ length: 400 }, () => 0);
    const sorted = new SortedAmounts(profits);
    for (let n = 0; n < 2000; n++) {
      const t = Math.floor(rng.next() * profits.length);
      const was = profits[t]!;
      profits[t] = was + Math.round((rng.next() - 0.3) * 10000) / 100;
      sorted.replace(was, profits[t]);
      if (n % 50 === 0)
        for (const endowment of [0, 100, 37.5]) expect(sorted.gini(endowment)).toBe(gini(profits.map((p) => endowment + p)));
    }
  });
});

describe('canonical order by rank', () => {
  it('orders one action per agent as canonicalOrder does, for few and for many of the agents', () => {
    const ids = shuffleInPlace(
      Array.from({ length: 500 }, (_, i) => `a${i}`),
      seededRng(2, 'ids'),
    );
    const canonical = new CanonicalOrder(ids);
    const rng = seededRng(3, 'acting');
    for (const share of [0.02, 0.5, 1]) {
      const acting = ids.map((id, index) => ({ id, index })).filter(() => rng.next() < share);
      const actions: StepAction[] = shuffleInPlace(
        acting.map(({ id, index }) => ({ agent: id, name: 'idle', args: {}, seq: 0, index })),
        rng,
      );
      const expected = canonicalOrder(actions).map((a) => a.agent);
      expect(canonical.sort([...actions], (a) => a.index!).map((a) => a.agent)).toEqual(expected);
    }
  });
});

function start(agents: WorldAgent[]): MarketState {
  const p = resolveParams(market, { min_price: 1, max_price: 200 });
  if (!p.ok) throw new Error(JSON.stringify(p.problems));
  return market.init(p.params, agents, seededRng(1, 'init'));
}
const buyer = (id: string, value: number | number[]): WorldAgent => ({ id, attrs: { role: 'buyer', value } });
const seller = (id: string, cost: number | number[]): WorldAgent => ({ id, attrs: { role: 'seller', cost } });
const act = (agent: string, name: string, price: number, index?: number): StepAction => ({
  agent,
  name,
  args: { price },
  ...(index !== undefined ? { index } : {}),
});

describe("an agent's place as a hint", () => {
  it('finds the agent by its id when the hint names another place or none', () => {
    const s = start([buyer('b', 150), seller('s', 50), buyer('c', 120)]);
    // b's action with c's place, c's with a place out of range: each is still its own agent's
    market.apply(s, [act('b', 'bid', 100, 2), act('c', 'bid', 90, 7)], 1);
    expect(s.bids.map((o) => [o.agent, o.price])).toEqual([
      ['b', 100],
      ['c', 90],
    ]);
    expect(market.observe(s, 'c', 3, 0)).toMatchObject({ value: 120, open_order: { side: 'bid', price: 90 } });
    expect(market.observe(s, 's', 3, 0)).toMatchObject({ role: 'seller', cost: 50, open_order: null });
    expect(market.apply(s, [act('x', 'bid', 10, 0)], 2)[0]!.output).toBe('x is not a trader');
  });
});

describe('a saved market', () => {
  it('is the JSON the book always had: traders by id, both sides in priority order', () => {
    const s = start([buyer('b1', 150), buyer('b2', [140, 130]), seller('s1', 50), seller('s2', 60)]);
    market.apply(s, [act('b1', 'bid', 100), act('b2', 'bid', 110), act('s2', 'ask', 120), act('s1', 'ask', 105)], 3);
    const saved = JSON.parse(JSON.stringify(saveState(market, s)));
    expect(saved.traders).toEqual({
      b1: { role: 'buyer', units: [150], traded: 0, profit: 0, order: 0, price: 100 },
      b2: { role: 'buyer', units: [140, 130], traded: 1, profit: 30, order: undefined, price: undefined },
      s1: { role: 'seller', units: [50], traded: 1, profit: 60 },
      s2: { role: 'seller', units: [60], traded: 0, profit: 0, order: 2, price: 120 },
    });
    expect(Object.keys(saved.traders.b2)).toEqual(['role', 'units', 'traded', 'profit']);
    expect(saved.bids).toEqual([{ id: 0, agent: 'b1', side: 'bid', price: 100, step: 3 }]);
    expect(saved.asks).toEqual([{ id: 2, agent: 's2', side: 'ask', price: 120, step: 3 }]);
    expect(saved).toMatchObject({ nextOrder: 3, surplus: 140 - 50, trades: { count: 1, priceSum: 110, last: 110 } });
    // restored, it saves the same and goes on as the original does
    const back = restoreState(market, saved);
    expect(JSON.parse(JSON.stringify(saveState(market, back)))).toEqual(saved);
    const next = [act('s1', 'ask', 90), act('b2', 'bid', 125)];
    expect(market.apply(back, next, 4)).toEqual(market.apply(s, next, 4));
    expect(market.metrics(back, 4)).toEqual(market.metrics(s, 4));
  });

  it('restores a save whose traders name their order without its price (an older checkpoint)', () => {
    const s = start([buyer('b', 150), seller('s', 50)]);
    market.apply(s, [act('b', 'bid', 100)], 1);
    const saved = JSON.parse(JSON.stringify(saveState(market, s)));
    delete saved.traders.b.price;
    const back = restoreState(market, saved);
    expect(market.observe(back, 'b', 3)).toMatchObject({ open_order: { side: 'bid', price: 100 } });
    expect(market.apply(back, [act('s', 'ask', 95)], 2)[0]!.output).toBe('traded 1 at 100');
  });
});
