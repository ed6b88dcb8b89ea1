// The `market` world: traders with private values (buyers) and costs (sellers), one unit per
// value or cost in their schedule, trading by one-unit limit orders in
//   continuous - a continuous double auction: an order that crosses the best opposite order trades
//                at once at the resting order's price (price-time priority), else it rests;
//   call       - a call auction: the step's orders rest, then the book clears at one uniform price.
// A trader has at most one resting order: a new one replaces it. Built-in metrics: price (last,
// mean), volume, spread, allocative efficiency (realised surplus / the maximum surplus of the
// supply and demand curves) and the Gini of wealth (endowment + profit).
import type { Side } from './market-book.js';
import { Market, newMarket, restoreMarket, saveMarket, type MarketParams, type MarketState } from './market-state.js';
import { builtinWorld, type ActionOutcome, type Json, type Metrics, type StepAction } from './world.js';

export type { MarketParams, MarketState, Trade, Trader } from './market-state.js';

const range = {
  type: 'object',
  additionalProperties: false,
  required: ['min', 'max'],
  properties: { min: { type: 'number' }, max: { type: 'number' } },
};

export const marketParamsSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    mechanism: { enum: ['continuous', 'call'], default: 'continuous' },
    min_price: { type: 'number', default: 0 },
    max_price: { type: 'number', default: 200 },
    budget_constraint: { type: 'boolean', default: false },
    endowment: { type: 'number', minimum: 0, default: 100 },
    role_column: { type: 'string', default: 'role' },
    value_column: { type: 'string', default: 'value' },
    cost_column: { type: 'string', default: 'cost' },
    assign: {
      type: 'object',
      additionalProperties: false,
      default: {},
      properties: {
        buyer_share: { type: 'number', minimum: 0, maximum: 1, default: 0.5 },
        value: { ...range, default: { min: 50, max: 150 } },
        cost: { ...range, default: { min: 50, max: 150 } },
        units: { type: 'integer', minimum: 1, default: 1 },
      },
    },
    recent_trades: { type: 'integer', minimum: 0, default: 10 },
    clear_after_trade: {
      type: 'boolean',
      default: false,
      description: 'continuous: withdraw every open order after each trade, as in Gode and Sunder (1993)',
    },
  },
} as const;

const priceArg = {
  type: 'object',
  additionalProperties: false,
  required: ['price'],
  properties: { price: { type: 'number', description: 'limit price for one unit' } },
};

export const market = builtinWorld<MarketState, MarketParams>({
  name: 'market',
  description: 'A double auction (continuous with price-time priority, or a call auction) of one-unit limit orders.',
  params: marketParamsSchema,
  actions: [
    { name: 'bid', description: 'Buyers: offer to buy one unit at most at this price (replaces your open order).', parameters: priceArg },
    {
      name: 'ask',
      description: 'Sellers: offer to sell one unit at least at this price (replaces your open order).',
      parameters: priceArg,
    },
    {
      name: 'cancel',
      description: 'Withdraw your open order.',
      parameters: { type: 'object', additionalProperties: false, properties: {} },
    },
    { name: 'idle', description: 'Do nothing this step.', parameters: { type: 'object', additionalProperties: false, properties: {} } },
  ],

  init(params, agents, rng) {
    return newMarket(params, agents, rng);
  },

  snapshot(state, step) {
    const m = state as Market;
    return {
      step,
      best_bid: m.bid.bestPrice() ?? null,
      best_ask: m.ask.bestPrice() ?? null,
      last_price: m.trades.last,
      trades: m.trades.count,
    };
  },

  observe(state, agentId, k, index): Json {
    const m = state as Market;
    const t = m.numberOf(agentId, index);
    // the book and the recent prices are the same for every trader of a step: made once, shared (read-only)
    const { book, recent } = publicView(m, k);
    if (t < 0) return { book, recent_prices: recent };
    const order = m.order[t]!;
    const open_order = Number.isNaN(order) ? null : { side: m.buyer[t] ? 'bid' : 'ask', price: m.price[t]! };
    const next = m.nextUnit(t) ?? null;
    const { min_price, max_price } = m.params;
    const units_left = m.unitCount[t]! - m.traded[t]!;
    const profit = m.profit[t]!;
    // one literal per role (not a computed key): every observation of a role has one shape
    if (m.buyer[t])
      return { role: 'buyer', value: next, units_left, open_order, profit, book, recent_prices: recent, min_price, max_price };
    return { role: 'seller', cost: next, units_left, open_order, profit, book, recent_prices: recent, min_price, max_price };
  },

  apply(state, actions, step) {
    const m = state as Market;
    m.stepVolume = { step, volume: 0, priceSum: 0 };
    const out = new Array<ActionOutcome>(actions.length);
    for (let n = 0; n < actions.length; n++) out[n] = applyOne(m, actions[n]!, step);
    if (m.params.mechanism === 'call') clearCall(m, step);
    return out;
  },

  metrics(state, step) {
    const m = state as Market;
    const thisStep = m.stepVolume.step === step;
    const bestBid = m.bid.bestPrice();
    const bestAsk = m.ask.bestPrice();
    const out: Metrics = {
      price: m.trades.last,
      price_mean: m.trades.count === 0 ? null : m.trades.priceSum / m.trades.count,
      price_step_mean: thisStep && m.stepVolume.volume > 0 ? m.stepVolume.priceSum / m.stepVolume.volume : null,
      volume: thisStep ? m.stepVolume.volume : 0,
      volume_total: m.trades.count,
      best_bid: bestBid ?? null,
      best_ask: bestAsk ?? null,
      spread: bestBid !== undefined && bestAsk !== undefined ? bestAsk - bestBid : null,
      surplus: m.surplus,
      max_surplus: m.maxSurplus,
      efficiency: m.maxSurplus > 0 ? m.surplus / m.maxSurplus : null,
      gini: m.profits.gini(m.params.endowment),
    };
    return out;
  },

  objectOf(action) {
    if (action.name === 'bid' || action.name === 'ask') return `book:${action.name}:${String(action.args.price)}`;
    return undefined;
  },

  save: (state) => saveMarket(state as Market),
  restore: (saved) => restoreMarket(saved),
});

/** What every trader sees of the book and the tape, kept while the state is unchanged. */
interface View {
  k: number;
  recentTrades: number;
  nextOrder: number;
  trades: number;
  bids: number;
  asks: number;
  book: Json;
  recent: Json;
}
const views = new WeakMap<Market, View>();

function publicView(m: Market, k: number): View {
  // every change to the book or the tape moves one of these counts (ids and trades only grow,
  // a cancel between them shortens a side), so they name one state of the book
  const v = views.get(m);
  if (
    v &&
    v.k === k &&
    v.recentTrades === m.params.recent_trades &&
    v.nextOrder === m.nextOrder &&
    v.trades === m.trades.count &&
    v.bids === m.bid.size &&
    v.asks === m.ask.size
  )
    return v;
  const book = { bids: m.bid.levels(k) as unknown as Json, asks: m.ask.levels(k) as unknown as Json };
  const recent = m.trades.recent.slice(-Math.min(k, m.params.recent_trades)).map((tr) => tr.price);
  const view: View = {
    k,
    recentTrades: m.params.recent_trades,
    nextOrder: m.nextOrder,
    trades: m.trades.count,
    bids: m.bid.size,
    asks: m.ask.size,
    book,
    recent,
  };
  views.set(m, view);
  return view;
}

/** Takes the trader's resting order off the book; false when it had none. */
function cancelOwn(m: Market, t: number): boolean {
  if (Number.isNaN(m.order[t]!)) return false;
  if (!m.sideOf(t).remove(t)) (m.buyer[t] ? m.ask : m.bid).remove(t);
  withdrawn(m, t);
  return true;
}

/** The trader has no resting order (any more). */
function withdrawn(m: Market, t: number): void {
  m.order[t] = NaN;
  m.price[t] = NaN;
}

function trade(m: Market, b: number, s: number, price: number, step: number): void {
  const value = m.nextUnit(b)!;
  const cost = m.nextUnit(s)!;
  m.traded[b] = m.traded[b]! + 1;
  m.traded[s] = m.traded[s]! + 1;
  const bWas = m.profit[b]!;
  const sWas = m.profit[s]!;
  m.profit[b] = bWas + (value - price);
  m.profit[s] = sWas + (price - cost);
  m.profits.replace(bWas, m.profit[b]);
  m.profits.replace(sWas, m.profit[s]);
  m.surplus += value - cost;
  m.trades.count++;
  m.trades.priceSum += price;
  m.trades.last = price;
  m.trades.recent.push({ step, price, buyer: m.ids[b]!, seller: m.ids[s]! });
  if (m.trades.recent.length > Math.max(1, m.params.recent_trades)) m.trades.recent.shift();
  m.stepVolume.volume++;
  m.stepVolume.priceSum += price;
}

const outcome = (a: StepAction, ok: boolean, output: string): ActionOutcome => ({ agent: a.agent, name: a.name, ok, output });

function applyOne(m: Market, a: StepAction, step: number): ActionOutcome {
  if (a.name === 'idle') return outcome(a, true, 'idle');
  const t = m.numberOf(a.agent, a.index);
  if (t < 0) return outcome(a, false, `${a.agent} is not a trader`);
  if (a.name === 'cancel') return cancelOwn(m, t) ? outcome(a, true, 'order cancelled') : outcome(a, false, 'no open order');
  if (a.name !== 'bid' && a.name !== 'ask') return outcome(a, false, `"${a.name}" is not an action of world "market"`);
  const side: Side = a.name;
  const role = m.buyer[t] ? 'buyer' : 'seller';
  if ((side === 'bid') !== (role === 'buyer')) return outcome(a, false, `a ${role} cannot ${side}`);
  const limit = m.nextUnit(t);
  if (limit === undefined) return outcome(a, false, 'no units left');
  const price = Number(a.args.price);
  const { min_price, max_price } = m.params;
  if (!Number.isFinite(price) || price < min_price || price > max_price)
    return outcome(a, false, `price must be within ${min_price}..${max_price}`);
  if (m.params.budget_constraint && (side === 'bid' ? price > limit : price < limit))
    return outcome(a, false, side === 'bid' ? `bid above your value ${limit}` : `ask below your cost ${limit}`);
  cancelOwn(m, t);
  const opposite = side === 'bid' ? m.ask : m.bid;
  const best = opposite.bestPrice();
  if (m.params.mechanism === 'continuous' && best !== undefined && (side === 'bid' ? price >= best : price <= best)) {
    const other = opposite.pop();
    withdrawn(m, other);
    if (side === 'bid') trade(m, t, other, best, step);
    else trade(m, other, t, best, step);
    if (m.params.clear_after_trade) clearBook(m);
    return outcome(a, true, outputText('traded', best));
  }
  const id = m.nextOrder++;
  m.sideOf(t).insert(t, price, id, step);
  m.order[t] = id;
  m.price[t] = price;
  return outcome(a, true, outputText(side, price));
}

/** Prices in whole cents from 0 to this many cents have their outcome texts kept once made. */
const CACHED_CENTS = 1_000_000;
const TEXTS = { bid: [] as string[], ask: [] as string[], traded: [] as string[] };

/**
 * "bid 101.5 rests", "ask 99 rests", "traded 1 at 100.25": kept for prices in whole cents (a
 * market's prices repeat, and the text of a number is costly to make; a kept one is a look-up).
 */
function outputText(what: Side | 'traded', price: number): string {
  const make = () => (what === 'traded' ? `traded 1 at ${price}` : `${what} ${price} rests`);
  const cents = Math.round(price * 100);
  if (cents >= 0 && cents <= CACHED_CENTS && cents / 100 === price && !Object.is(price, -0)) return (TEXTS[what][cents] ??= make());
  return make();
}

/** Withdraws every open order (clear_after_trade). */
function clearBook(m: Market): void {
  const each = (t: number) => withdrawn(m, t);
  m.bid.clear(each);
  m.ask.clear(each);
}

/**
 * A call auction's clearing (market-book.ts clearingOf, over the heaps): the best bid and ask
 * trade in pairs while they cross; all at one price, the middle of the range that also leaves
 * the first unmatched bid and ask unwilling.
 */
function clearCall(m: Market, step: number): void {
  const bids: number[] = [];
  const asks: number[] = [];
  let lastBid = 0;
  let lastAsk = 0;
  for (;;) {
    const b = m.bid.bestPrice();
    const s = m.ask.bestPrice();
    if (b === undefined || s === undefined || !(b >= s)) break;
    lastBid = b;
    lastAsk = s;
    bids.push(m.bid.pop());
    asks.push(m.ask.pop());
  }
  const k = bids.length;
  if (k === 0) return;
  const low = Math.max(lastAsk, m.bid.bestPrice() ?? -Infinity);
  const high = Math.min(lastBid, m.ask.bestPrice() ?? Infinity);
  const price = (low + high) / 2;
  for (let i = 0; i < k; i++) {
    withdrawn(m, bids[i]!);
    withdrawn(m, asks[i]!);
    trade(m, bids[i]!, asks[i]!, price, step);
  }
}
