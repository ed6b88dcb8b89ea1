// The `market` world: traders with private values (buyers) and costs (sellers), one unit per
// value or cost in their schedule, trading by one-unit limit orders in
//   continuous - a continuous double auction: an order that crosses the best opposite order trades
//                at once at the resting order's price (price-time priority), else it rests;
//   call       - a call auction: the step's orders rest, then the book clears at one uniform price.
// A trader has at most one resting order: a new one replaces it. Built-in metrics: price (last,
// mean), volume, spread, allocative efficiency (realised surplus / the maximum surplus of the
// supply and demand curves) and the Gini of wealth (endowment + profit).
import type { Rng } from '../../../core/runtime/rng.js';
import { maxSurplus, type Order, type Side } from './market-book.js';
import { SideBook, SortedAmounts, type BookSlot } from './market-heap.js';
import { builtinWorld, type ActionOutcome, type Json, type Metrics, type StepAction, type WorldAgent } from './world.js';

export interface MarketParams {
  mechanism: 'continuous' | 'call';
  min_price: number;
  max_price: number;
  /** Refuse bids above the trader's value and asks below its cost. */
  budget_constraint: boolean;
  endowment: number;
  role_column: string;
  value_column: string;
  cost_column: string;
  /** Traders whose row has no role get one drawn from this. */
  assign: { buyer_share: number; value: { min: number; max: number }; cost: { min: number; max: number }; units: number };
  /** Trades shown in an observation. */
  recent_trades: number;
  /** Continuous: every open order is withdrawn after each trade (Gode and Sunder 1993). */
  clear_after_trade?: boolean;
}

export interface Trader {
  role: 'buyer' | 'seller';
  /** Values (buyer, best first) or costs (seller, cheapest first), one unit each. */
  units: number[];
  traded: number;
  profit: number;
  /** The arrival number of its resting order, if it has one (on its role's side). */
  order?: number;
  /** The resting order's price. */
  price?: number;
}

export interface Trade {
  step: number;
  price: number;
  buyer: string;
  seller: string;
}

export interface MarketState {
  params: MarketParams;
  traders: Record<string, Trader>;
  /** The resting bids in price-time priority (a copy read from the book). */
  readonly bids: Order[];
  /** The resting asks in price-time priority (a copy read from the book). */
  readonly asks: Order[];
  nextOrder: number;
  trades: { count: number; priceSum: number; last: number | null; recent: Trade[] };
  stepVolume: { step: number; volume: number; priceSum: number };
  surplus: number;
  maxSurplus: number;
}

/** A trader as the book keeps it: its id and its place in its side's heap. */
interface Row extends Trader, BookSlot {
  agent: string;
}

/**
 * The market's state: each side of the book an indexed heap (./market-heap.ts), the traders'
 * profits kept sorted for the wealth Gini. Saved as JSON in the shape the book always had
 * (both sides as lists in priority order), and restored from it.
 */
class Market implements MarketState {
  nextOrder = 0;
  trades: MarketState['trades'] = { count: 0, priceSum: 0, last: null, recent: [] };
  stepVolume: MarketState['stepVolume'] = { step: -1, volume: 0, priceSum: 0 };
  surplus = 0;
  readonly bid: SideBook<Row>;
  readonly ask: SideBook<Row>;
  readonly profits: SortedAmounts;

  constructor(
    public params: MarketParams,
    public traders: Record<string, Row>,
    public maxSurplus: number,
  ) {
    const rows = Object.values(traders);
    this.bid = new SideBook<Row>('bid', rows.length);
    this.ask = new SideBook<Row>('ask', rows.length);
    this.profits = new SortedAmounts(rows.map((t) => t.profit));
  }

  get bids(): Order[] {
    return this.bid.sorted(agentOf);
  }

  get asks(): Order[] {
    return this.ask.sorted(agentOf);
  }

  sideOf(t: Row): SideBook<Row> {
    return t.role === 'buyer' ? this.bid : this.ask;
  }
}

const agentOf = (t: Row): string => t.agent;

/** The market as JSON, as a checkpoint keeps it. */
function saveMarket(m: Market): Json {
  const traders: Record<string, Json> = {};
  for (const [id, t] of Object.entries(m.traders))
    traders[id] = {
      role: t.role,
      units: [...t.units],
      traded: t.traded,
      profit: t.profit,
      ...(t.order !== undefined ? { order: t.order, price: t.price! } : {}),
    };
  // fresh objects throughout (the caller may keep them): the small parts copied whole
  return {
    params: structuredClone(m.params) as unknown as Json,
    traders,
    bids: m.bids as unknown as Json,
    asks: m.asks as unknown as Json,
    nextOrder: m.nextOrder,
    trades: structuredClone(m.trades) as unknown as Json,
    stepVolume: { ...m.stepVolume },
    surplus: m.surplus,
    maxSurplus: m.maxSurplus,
  };
}

/** Inverse of saveMarket; a trader's resting order is the one the saved book holds for it. */
function restoreMarket(saved: Json): Market {
  const s = saved as unknown as Omit<MarketState, 'traders'> & { traders: Record<string, Trader> };
  const rows: Record<string, Row> = {};
  for (const [id, t] of Object.entries(s.traders))
    rows[id] = { role: t.role, units: [...t.units], traded: t.traded, profit: t.profit, agent: id, slot: -1 };
  const m = new Market(structuredClone(s.params), rows, s.maxSurplus);
  m.nextOrder = s.nextOrder;
  m.trades = structuredClone(s.trades);
  m.stepVolume = { ...s.stepVolume };
  m.surplus = s.surplus;
  for (const o of [...s.bids, ...s.asks]) {
    const t = rows[o.agent];
    if (!t || t.order !== undefined) continue;
    (o.side === 'bid' ? m.bid : m.ask).insert(t, o.price, o.id, o.step);
    t.order = o.id;
    t.price = o.price;
  }
  return m;
}

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
    const traders: Record<string, Row> = {};
    const values: number[] = [];
    const costs: number[] = [];
    for (const agent of agents) {
      const t = traderOf(agent, params, rng);
      traders[agent.id] = t;
      (t.role === 'buyer' ? values : costs).push(...t.units);
    }
    return new Market(params, traders, maxSurplus(values, costs));
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

  observe(state, agentId, k): Json {
    const m = state as Market;
    const t = m.traders[agentId] as Row | undefined;
    // the book and the recent prices are the same for every trader of a step: made once, shared (read-only)
    const { book, recent } = publicView(m, k);
    if (!t) return { book, recent_prices: recent };
    const open_order = t.order !== undefined ? { side: t.role === 'buyer' ? 'bid' : 'ask', price: t.price! } : null;
    const next = t.units[t.traded] ?? null;
    const { min_price, max_price } = m.params;
    const units_left = t.units.length - t.traded;
    // one literal per role (not a computed key): every observation of a role has one shape
    if (t.role === 'buyer')
      return { role: t.role, value: next, units_left, open_order, profit: t.profit, book, recent_prices: recent, min_price, max_price };
    return { role: t.role, cost: next, units_left, open_order, profit: t.profit, book, recent_prices: recent, min_price, max_price };
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

function numbers(v: unknown): number[] {
  if (Array.isArray(v)) return v.map(Number);
  if (typeof v === 'number') return [v];
  if (typeof v === 'string' && v.trim() !== '') return v.split(/[;|]/).map((x) => Number(x.trim()));
  return [];
}

function traderOf(agent: WorldAgent, params: MarketParams, rng: Rng): Row {
  const declared = agent.attrs[params.role_column];
  const draw = (r: { min: number; max: number }) => Math.round((r.min + rng.next() * (r.max - r.min)) * 100) / 100;
  const role: Trader['role'] =
    declared === 'buyer' || declared === 'seller' ? declared : rng.next() < params.assign.buyer_share ? 'buyer' : 'seller';
  let units = numbers(agent.attrs[role === 'buyer' ? params.value_column : params.cost_column]).filter((x) => Number.isFinite(x));
  if (units.length === 0)
    units = Array.from({ length: params.assign.units }, () => draw(role === 'buyer' ? params.assign.value : params.assign.cost));
  units.sort(role === 'buyer' ? (a, b) => b - a : (a, b) => a - b);
  return { role, units, traded: 0, profit: 0, order: undefined, price: undefined, agent: agent.id, slot: -1 };
}

/** Takes the trader's resting order off the book; false when it had none. */
function cancelOwn(m: Market, t: Row): boolean {
  if (t.order === undefined) return false;
  if (!m.sideOf(t).remove(t)) (t.role === 'buyer' ? m.ask : m.bid).remove(t);
  t.order = undefined;
  t.price = undefined;
  return true;
}

function trade(m: Market, b: Row, s: Row, price: number, step: number): void {
  const value = b.units[b.traded]!;
  const cost = s.units[s.traded]!;
  b.traded++;
  s.traded++;
  const bWas = b.profit;
  const sWas = s.profit;
  b.profit += value - price;
  s.profit += price - cost;
  m.profits.replace(bWas, b.profit);
  m.profits.replace(sWas, s.profit);
  m.surplus += value - cost;
  m.trades.count++;
  m.trades.priceSum += price;
  m.trades.last = price;
  m.trades.recent.push({ step, price, buyer: b.agent, seller: s.agent });
  if (m.trades.recent.length > Math.max(1, m.params.recent_trades)) m.trades.recent.shift();
  m.stepVolume.volume++;
  m.stepVolume.priceSum += price;
}

const outcome = (a: StepAction, ok: boolean, output: string): ActionOutcome => ({ agent: a.agent, name: a.name, ok, output });

function applyOne(m: Market, a: StepAction, step: number): ActionOutcome {
  const t = m.traders[a.agent] as Row | undefined;
  if (a.name === 'idle') return outcome(a, true, 'idle');
  if (!t) return outcome(a, false, `${a.agent} is not a trader`);
  if (a.name === 'cancel') return cancelOwn(m, t) ? outcome(a, true, 'order cancelled') : outcome(a, false, 'no open order');
  if (a.name !== 'bid' && a.name !== 'ask') return outcome(a, false, `"${a.name}" is not an action of world "market"`);
  const side = a.name as Side;
  if ((side === 'bid') !== (t.role === 'buyer')) return outcome(a, false, `a ${t.role} cannot ${side}`);
  if (t.traded >= t.units.length) return outcome(a, false, 'no units left');
  const price = Number(a.args.price);
  const { min_price, max_price } = m.params;
  if (!Number.isFinite(price) || price < min_price || price > max_price)
    return outcome(a, false, `price must be within ${min_price}..${max_price}`);
  const limit = t.units[t.traded]!;
  if (m.params.budget_constraint && (side === 'bid' ? price > limit : price < limit))
    return outcome(a, false, side === 'bid' ? `bid above your value ${limit}` : `ask below your cost ${limit}`);
  cancelOwn(m, t);
  const opposite = side === 'bid' ? m.ask : m.bid;
  const best = opposite.bestPrice();
  if (m.params.mechanism === 'continuous' && best !== undefined && (side === 'bid' ? price >= best : price <= best)) {
    const other = opposite.pop()!;
    other.order = undefined;
    other.price = undefined;
    if (side === 'bid') trade(m, t, other, best, step);
    else trade(m, other, t, best, step);
    if (m.params.clear_after_trade) clearBook(m);
    return outcome(a, true, `traded 1 at ${priceText(best)}`);
  }
  const id = m.nextOrder++;
  m.sideOf(t).insert(t, price, id, step);
  t.order = id;
  t.price = price;
  return outcome(a, true, `${side} ${priceText(price)} rests`);
}

/** Prices in whole cents from 0 to this many cents have their text kept once made. */
const CACHED_CENTS = 1_000_000;
const centTexts: string[] = [];

/**
 * `String(price)`, kept for prices in whole cents (an outcome names its price; a market's prices
 * repeat): the text of a number is costly to make, a kept one is a look-up.
 */
function priceText(price: number): string {
  const cents = Math.round(price * 100);
  if (cents >= 0 && cents <= CACHED_CENTS && cents / 100 === price && !Object.is(price, -0))
    return (centTexts[cents] ??= String(price));
  return String(price);
}

/** Withdraws every open order (clear_after_trade). */
function clearBook(m: Market): void {
  const withdraw = (t: Row) => {
    t.order = undefined;
    t.price = undefined;
  };
  m.bid.clear(withdraw);
  m.ask.clear(withdraw);
}

/**
 * A call auction's clearing (market-book.ts clearingOf, over the heaps): the best bid and ask
 * trade in pairs while they cross; all at one price, the middle of the range that also leaves
 * the first unmatched bid and ask unwilling.
 */
function clearCall(m: Market, step: number): void {
  const bids: Row[] = [];
  const asks: Row[] = [];
  let lastBid = 0;
  let lastAsk = 0;
  for (;;) {
    const b = m.bid.bestPrice();
    const s = m.ask.bestPrice();
    if (b === undefined || s === undefined || !(b >= s)) break;
    lastBid = b;
    lastAsk = s;
    bids.push(m.bid.pop()!);
    asks.push(m.ask.pop()!);
  }
  const k = bids.length;
  if (k === 0) return;
  const low = Math.max(lastAsk, m.bid.bestPrice() ?? -Infinity);
  const high = Math.min(lastBid, m.ask.bestPrice() ?? Infinity);
  const price = (low + high) / 2;
  for (let i = 0; i < k; i++) {
    for (const t of [bids[i]!, asks[i]!]) {
      t.order = undefined;
      t.price = undefined;
    }
    trade(m, bids[i]!, asks[i]!, price, step);
  }
}
