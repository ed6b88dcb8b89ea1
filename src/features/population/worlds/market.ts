// The `market` world: traders with private values (buyers) and costs (sellers), one unit per
// value or cost in their schedule, trading by one-unit limit orders in
//   continuous - a continuous double auction: an order that crosses the best opposite order trades
//                at once at the resting order's price (price-time priority), else it rests;
//   call       - a call auction: the step's orders rest, then the book clears at one uniform price.
// A trader has at most one resting order: a new one replaces it. Built-in metrics: price (last,
// mean), volume, spread, allocative efficiency (realised surplus / the maximum surplus of the
// supply and demand curves) and the Gini of wealth (endowment + profit).
import type { Rng } from '../../../core/runtime/rng.js';
import { clearingOf, gini, insertOrder, levels, maxSurplus, removeOrder, type Order, type Side } from './market-book.js';
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
  order?: number;
  /** The resting order's price (its side is the trader's role's): found in the book without a scan. */
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
  bids: Order[];
  asks: Order[];
  nextOrder: number;
  trades: { count: number; priceSum: number; last: number | null; recent: Trade[] };
  stepVolume: { step: number; volume: number; priceSum: number };
  surplus: number;
  maxSurplus: number;
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
    const traders: Record<string, Trader> = {};
    const values: number[] = [];
    const costs: number[] = [];
    for (const agent of agents) {
      const t = traderOf(agent, params, rng);
      traders[agent.id] = t;
      (t.role === 'buyer' ? values : costs).push(...t.units);
    }
    return {
      params,
      traders,
      bids: [],
      asks: [],
      nextOrder: 0,
      trades: { count: 0, priceSum: 0, last: null, recent: [] },
      stepVolume: { step: -1, volume: 0, priceSum: 0 },
      surplus: 0,
      maxSurplus: maxSurplus(values, costs),
    };
  },

  snapshot(state, step) {
    return {
      step,
      best_bid: state.bids[0]?.price ?? null,
      best_ask: state.asks[0]?.price ?? null,
      last_price: state.trades.last,
      trades: state.trades.count,
    };
  },

  observe(state, agentId, k): Json {
    const t = state.traders[agentId];
    // the book and the recent prices are the same for every trader of a step: made once, shared (read-only)
    const { book, recent } = publicView(state, k);
    const visible: Json = { book, recent_prices: recent };
    if (!t) return visible;
    const own = ownOrder(state, t);
    const next = t.units[t.traded] ?? null;
    const open_order = own ? { side: own.side, price: own.price } : null;
    const { min_price, max_price } = state.params;
    const units_left = t.units.length - t.traded;
    // one literal per role (not a computed key): every observation of a role has one shape
    if (t.role === 'buyer')
      return { role: t.role, value: next, units_left, open_order, profit: t.profit, book, recent_prices: recent, min_price, max_price };
    return { role: t.role, cost: next, units_left, open_order, profit: t.profit, book, recent_prices: recent, min_price, max_price };
  },

  apply(state, actions, step) {
    state.stepVolume = { step, volume: 0, priceSum: 0 };
    const out = actions.map((a) => applyOne(state, a, step));
    if (state.params.mechanism === 'call') clearCall(state, step);
    return out;
  },

  metrics(state, step) {
    const thisStep = state.stepVolume.step === step;
    const wealth = Object.values(state.traders).map((t) => state.params.endowment + t.profit);
    const m: Metrics = {
      price: state.trades.last,
      price_mean: state.trades.count === 0 ? null : state.trades.priceSum / state.trades.count,
      price_step_mean: thisStep && state.stepVolume.volume > 0 ? state.stepVolume.priceSum / state.stepVolume.volume : null,
      volume: thisStep ? state.stepVolume.volume : 0,
      volume_total: state.trades.count,
      best_bid: state.bids[0]?.price ?? null,
      best_ask: state.asks[0]?.price ?? null,
      spread: state.bids[0] && state.asks[0] ? state.asks[0].price - state.bids[0].price : null,
      surplus: state.surplus,
      max_surplus: state.maxSurplus,
      efficiency: state.maxSurplus > 0 ? state.surplus / state.maxSurplus : null,
      gini: gini(wealth),
    };
    return m;
  },

  objectOf(action) {
    if (action.name === 'bid' || action.name === 'ask') return `book:${action.name}:${String(action.args.price)}`;
    return undefined;
  },
});

/** What every trader sees of the book and the tape, kept while the state is unchanged. */
const views = new WeakMap<MarketState, { key: number[]; book: Json; recent: Json }>();

function publicView(state: MarketState, k: number): { book: Json; recent: Json } {
  // every change to the book or the tape moves one of these counts (ids and trades only grow,
  // a cancel between them shortens a side), so the key names one state of the book
  const key = [k, state.params.recent_trades, state.nextOrder, state.trades.count, state.bids.length, state.asks.length];
  const cached = views.get(state);
  if (cached && cached.key.every((x, i) => x === key[i])) return cached;
  const book = { bids: levels(state.bids, k) as unknown as Json, asks: levels(state.asks, k) as unknown as Json };
  const recent = state.trades.recent.slice(-Math.min(k, state.params.recent_trades)).map((tr) => tr.price);
  const view = { key, book, recent };
  views.set(state, view);
  return view;
}

/** A trader's resting order: by its price when known (a bisection), else by a scan (a checkpoint from before prices were kept). */
function ownOrder(state: MarketState, t: Trader): { side: Side; price: number } | undefined {
  if (t.order === undefined) return undefined;
  if (t.price !== undefined) return { side: t.role === 'buyer' ? 'bid' : 'ask', price: t.price };
  return [...state.bids, ...state.asks].find((o) => o.id === t.order);
}

function numbers(v: unknown): number[] {
  if (Array.isArray(v)) return v.map(Number);
  if (typeof v === 'number') return [v];
  if (typeof v === 'string' && v.trim() !== '') return v.split(/[;|]/).map((x) => Number(x.trim()));
  return [];
}

function traderOf(agent: WorldAgent, params: MarketParams, rng: Rng): Trader {
  const declared = agent.attrs[params.role_column];
  const draw = (r: { min: number; max: number }) => Math.round((r.min + rng.next() * (r.max - r.min)) * 100) / 100;
  const role: Trader['role'] =
    declared === 'buyer' || declared === 'seller' ? declared : rng.next() < params.assign.buyer_share ? 'buyer' : 'seller';
  let units = numbers(agent.attrs[role === 'buyer' ? params.value_column : params.cost_column]).filter((x) => Number.isFinite(x));
  if (units.length === 0)
    units = Array.from({ length: params.assign.units }, () => draw(role === 'buyer' ? params.assign.value : params.assign.cost));
  units.sort(role === 'buyer' ? (a, b) => b - a : (a, b) => a - b);
  return { role, units, traded: 0, profit: 0 };
}

function cancelOwn(state: MarketState, t: Trader): Order | undefined {
  if (t.order === undefined) return undefined;
  const side = t.role === 'buyer' ? state.bids : state.asks;
  const o = removeOrder(side, t.order, t.price) ?? removeOrder(state.bids, t.order) ?? removeOrder(state.asks, t.order);
  t.order = undefined;
  t.price = undefined;
  return o;
}

function trade(state: MarketState, buyer: string, seller: string, price: number, step: number): void {
  const b = state.traders[buyer]!;
  const s = state.traders[seller]!;
  const value = b.units[b.traded]!;
  const cost = s.units[s.traded]!;
  b.traded++;
  s.traded++;
  b.profit += value - price;
  s.profit += price - cost;
  state.surplus += value - cost;
  state.trades.count++;
  state.trades.priceSum += price;
  state.trades.last = price;
  state.trades.recent.push({ step, price, buyer, seller });
  if (state.trades.recent.length > Math.max(1, state.params.recent_trades)) state.trades.recent.shift();
  state.stepVolume.volume++;
  state.stepVolume.priceSum += price;
}

const outcome = (a: StepAction, ok: boolean, output: string): ActionOutcome => ({ agent: a.agent, name: a.name, ok, output });

function applyOne(state: MarketState, a: StepAction, step: number): ActionOutcome {
  const t = state.traders[a.agent];
  if (a.name === 'idle') return outcome(a, true, 'idle');
  if (!t) return outcome(a, false, `${a.agent} is not a trader`);
  if (a.name === 'cancel') return cancelOwn(state, t) ? outcome(a, true, 'order cancelled') : outcome(a, false, 'no open order');
  if (a.name !== 'bid' && a.name !== 'ask') return outcome(a, false, `"${a.name}" is not an action of world "market"`);
  const side = a.name;
  if ((side === 'bid') !== (t.role === 'buyer')) return outcome(a, false, `a ${t.role} cannot ${side}`);
  if (t.traded >= t.units.length) return outcome(a, false, 'no units left');
  const price = Number(a.args.price);
  const { min_price, max_price } = state.params;
  if (!Number.isFinite(price) || price < min_price || price > max_price)
    return outcome(a, false, `price must be within ${min_price}..${max_price}`);
  const limit = t.units[t.traded]!;
  if (state.params.budget_constraint && (side === 'bid' ? price > limit : price < limit))
    return outcome(a, false, side === 'bid' ? `bid above your value ${limit}` : `ask below your cost ${limit}`);
  cancelOwn(state, t);
  const opposite = side === 'bid' ? state.asks : state.bids;
  const best = opposite[0];
  if (state.params.mechanism === 'continuous' && best && (side === 'bid' ? price >= best.price : price <= best.price)) {
    opposite.shift();
    const other = state.traders[best.agent]!;
    other.order = undefined;
    other.price = undefined;
    const [buyer, seller] = side === 'bid' ? [a.agent, best.agent] : [best.agent, a.agent];
    trade(state, buyer, seller, best.price, step);
    if (state.params.clear_after_trade) clearBook(state);
    return outcome(a, true, `traded 1 at ${best.price}`);
  }
  const order: Order = { id: state.nextOrder++, agent: a.agent, side, price, step };
  insertOrder(side === 'bid' ? state.bids : state.asks, order);
  t.order = order.id;
  t.price = price;
  return outcome(a, true, `${side} ${price} rests`);
}

/** Withdraws every open order (clear_after_trade). */
function clearBook(state: MarketState): void {
  for (const o of [...state.bids, ...state.asks]) {
    const t = state.traders[o.agent]!;
    t.order = undefined;
    t.price = undefined;
  }
  state.bids.length = 0;
  state.asks.length = 0;
}

function clearCall(state: MarketState, step: number): void {
  const clearing = clearingOf(state.bids, state.asks);
  if (!clearing) return;
  const bids = state.bids.splice(0, clearing.k);
  const asks = state.asks.splice(0, clearing.k);
  for (let i = 0; i < clearing.k; i++) {
    for (const o of [bids[i]!, asks[i]!]) {
      const t = state.traders[o.agent]!;
      t.order = undefined;
      t.price = undefined;
    }
    trade(state, bids[i]!.agent, asks[i]!.agent, clearing.price, step);
  }
}
