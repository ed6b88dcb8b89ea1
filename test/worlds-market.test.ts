// The market world: a continuous double auction with price-time priority, a call auction with a
// uniform price, the built-in metrics, and the acceptance figure of issue 25: ZI-C rule traders
// (Gode and Sunder 1993) reach a mean allocative efficiency of at least 0.95 over 20 seeds.
import { describe, expect, it } from 'vitest';
import { gini, maxSurplus } from '../src/features/population/worlds/market-book.js';
import { market, type MarketState } from '../src/features/population/worlds/market.js';
import { runRuleStep } from '../src/features/population/worlds/rule.js';
import { seededRng, shuffleInPlace } from '../src/features/population/worlds/seed.js';
import { resolveParams, restoreState, saveState, type StepAction, type WorldAgent } from '../src/features/population/worlds/world.js';
import { ziC } from '../src/features/population/worlds/zic.js';

function start(agents: WorldAgent[], params: Record<string, unknown> = {}, seed = 1): MarketState {
  const p = resolveParams(market, { min_price: 1, max_price: 200, ...params });
  if (!p.ok) throw new Error(JSON.stringify(p.problems));
  return market.init(p.params, agents, seededRng(seed, 'init'));
}
const buyer = (id: string, value: number | number[]): WorldAgent => ({ id, attrs: { role: 'buyer', value } });
const seller = (id: string, cost: number | number[]): WorldAgent => ({ id, attrs: { role: 'seller', cost } });
const act = (agent: string, name: string, price?: number): StepAction => ({ agent, name, args: price === undefined ? {} : { price } });

describe('continuous double auction', () => {
  it('trades at the resting order’s price, best price first, earlier order first at one price', () => {
    const s = start([buyer('b1', 150), buyer('b2', 150), buyer('b3', 150), seller('s1', 50), seller('s2', 50)]);
    const out = market.apply(s, [act('b1', 'bid', 100), act('b2', 'bid', 110), act('b3', 'bid', 110), act('s1', 'ask', 90)], 0);
    expect(out.map((o) => o.output)).toEqual(['bid 100 rests', 'bid 110 rests', 'bid 110 rests', 'traded 1 at 110']);
    // b2 (earlier at 110) traded, not b3
    expect(s.traders.b2!.traded).toBe(1);
    expect(s.traders.b3!.traded).toBe(0);
    expect(s.traders.s1!.profit).toBe(60);
    expect(s.traders.b2!.profit).toBe(40);
    market.apply(s, [act('s2', 'ask', 120)], 1);
    const m = market.metrics(s, 1);
    expect(m).toMatchObject({ price: 110, volume: 0, volume_total: 1, best_bid: 110, best_ask: 120, spread: 10 });
    expect(market.observe(s, 'b1', 5)).toMatchObject({ role: 'buyer', value: 150, units_left: 1, open_order: { side: 'bid', price: 100 } });
  });

  it('keeps one open order per trader, refuses wrong sides, spent traders and prices out of range', () => {
    const s = start([buyer('b', [150, 120]), seller('s', 50)], { budget_constraint: true });
    const out = market.apply(
      s,
      [act('b', 'bid', 100), act('b', 'bid', 105), act('b', 'ask', 100), act('b', 'bid', 160), act('b', 'bid', 500)],
      0,
    );
    expect(out.map((o) => [o.ok, o.output])).toEqual([
      [true, 'bid 100 rests'],
      [true, 'bid 105 rests'],
      [false, 'a buyer cannot ask'],
      [false, 'bid above your value 150'],
      [false, 'price must be within 1..200'],
    ]);
    expect(s.bids.map((o) => o.price)).toEqual([105]);
    market.apply(s, [act('s', 'ask', 60), act('s', 'ask', 70)], 1);
    expect(s.traders.s!.traded).toBe(1);
    expect(market.apply(s, [act('s', 'ask', 70)], 2)[0]!.output).toBe('no units left');
    expect(market.observe(s, 'b', 3)).toMatchObject({ value: 120, units_left: 1 });
    expect(market.apply(s, [act('b', 'cancel')], 3)[0]!.output).toBe('no open order');
  });

  it('computes efficiency from the supply and demand curves, and the wealth Gini', () => {
    expect(maxSurplus([150, 120, 60], [50, 80, 130])).toBe(100 + 40);
    expect(gini([1, 1, 1, 1])).toBe(0);
    expect(gini([0, 0, 0, 4])).toBeCloseTo(0.75);
    const s = start([buyer('b1', 150), buyer('b2', 60), seller('s1', 50), seller('s2', 100)], { endowment: 10 });
    market.apply(s, [act('s2', 'ask', 100), act('b1', 'bid', 100)], 0); // an extra-marginal seller trades
    const m = market.metrics(s, 0);
    expect(m.max_surplus).toBe(100 + 0); // 150-50; 60 < 100
    expect(m.efficiency).toBeCloseTo(0.5);
    expect(m.gini).toBeCloseTo(gini([60, 10, 10, 10])!);
  });
});

describe('call auction', () => {
  it('clears the step’s crossing orders at one uniform price and keeps the rest', () => {
    const s = start([buyer('b1', 200), buyer('b2', 200), buyer('b3', 200), seller('s1', 1), seller('s2', 1), seller('s3', 1)], {
      mechanism: 'call',
    });
    market.apply(
      s,
      [
        act('b1', 'bid', 120),
        act('b2', 'bid', 100),
        act('b3', 'bid', 80),
        act('s1', 'ask', 70),
        act('s2', 'ask', 90),
        act('s3', 'ask', 110),
      ],
      0,
    );
    // two cross (120>=70, 100>=90); the price lies in [max(90, 80), min(100, 110)] = [90, 100]
    expect(market.metrics(s, 0)).toMatchObject({ volume: 2, price: 95 });
    expect(s.bids.map((o) => o.agent)).toEqual(['b3']);
    expect(s.asks.map((o) => o.agent)).toEqual(['s3']);
  });
});

describe('state', () => {
  it('is JSON: a saved market restores to the same metrics and observations', () => {
    const s = start([buyer('b', 150), seller('s', 50), seller('t', 60)]);
    market.apply(s, [act('s', 'ask', 90), act('t', 'ask', 95), act('b', 'bid', 80)], 0);
    const back = restoreState(market, JSON.parse(JSON.stringify(saveState(market, s))));
    expect(market.metrics(back, 0)).toEqual(market.metrics(s, 0));
    market.apply(back, [act('b', 'bid', 92)], 1);
    expect(market.metrics(back, 1)).toMatchObject({ price: 90, volume: 1 });
  });
});

/** 100 buyers and 100 sellers, values and costs uniform in [50, 150] from the seed. */
function traders(seed: number): WorldAgent[] {
  const r = seededRng(seed, 'traders');
  const out: WorldAgent[] = [];
  for (let i = 0; i < 100; i++) out.push(buyer(`b${String(i).padStart(3, '0')}`, Math.round(50 + r.next() * 100)));
  for (let i = 0; i < 100; i++) out.push(seller(`s${String(i).padStart(3, '0')}`, Math.round(50 + r.next() * 100)));
  return out;
}

/** Steps of simultaneous moves: half the traders, drawn per step, submit one ZI-C order each. */
function zicEfficiency(seed: number, mechanism: 'continuous' | 'call', steps = 100): number {
  const agents = traders(seed);
  const s = start(agents, { mechanism }, seed);
  const ids = agents.map((a) => a.id);
  for (let step = 0; step < steps; step++) {
    const active = shuffleInPlace([...ids], seededRng(seed, 'activate', step)).slice(0, ids.length / 2);
    runRuleStep(market, s, { agents: active, policy: ziC(), seed, step, k: 5 });
  }
  return market.metrics(s, steps - 1).efficiency!;
}

describe('ZI-C rule traders (Gode and Sunder 1993)', () => {
  it('reach a mean allocative efficiency of at least 0.95 over 20 seeds', () => {
    const seeds = Array.from({ length: 20 }, (_, i) => i + 1);
    const effs = seeds.map((seed) => zicEfficiency(seed, 'continuous'));
    const mean = effs.reduce((a, b) => a + b, 0) / effs.length;
    const calls = seeds.map((seed) => zicEfficiency(seed, 'call'));
    const callMean = calls.reduce((a, b) => a + b, 0) / calls.length;
    console.log(
      `ZI-C allocative efficiency over 20 seeds (200 traders, 100 steps, half active per step): ` +
        `continuous double auction mean ${mean.toFixed(4)} (min ${Math.min(...effs).toFixed(3)}), call auction mean ${callMean.toFixed(4)}`,
    );
    expect(mean).toBeGreaterThanOrEqual(0.95);
    expect(callMean).toBeGreaterThanOrEqual(0.95);
  });

  it('is reproducible: the same seed gives the same trades', () => {
    expect(zicEfficiency(3, 'continuous', 30)).toBe(zicEfficiency(3, 'continuous', 30));
  });
});
