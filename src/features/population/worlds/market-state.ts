// The state of the market world (./market.ts), laid out for many traders: each trader a number
// (its place in the agents the world was made with), its figures in typed arrays by that number
// (struct of arrays: a step reads and writes a few small arrays, not an object per trader), each
// side of the book an indexed heap (./market-heap.ts), the profits kept sorted for the wealth
// Gini. `traders` shows each trader as an object read from those arrays. A checkpoint keeps the
// state as the JSON the market always had (traders by id, both sides as lists in priority order).
import type { Rng } from '../../../core/runtime/rng.js';
import { maxSurplus, type Order } from './market-book.js';
import { SideBook, SortedAmounts } from './market-heap.js';
import type { Json, WorldAgent } from './world.js';

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
  /** Each trader by id (read-only views of the market's figures). */
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

/** What a trader starts with: its role and its units in the order it trades them. */
interface Start {
  id: string;
  role: Trader['role'];
  units: number[];
}

export class Market implements MarketState {
  nextOrder = 0;
  trades: MarketState['trades'] = { count: 0, priceSum: 0, last: null, recent: [] };
  stepVolume: MarketState['stepVolume'] = { step: -1, volume: 0, priceSum: 0 };
  surplus = 0;
  readonly traders: Record<string, Trader> = {};
  /** By trader number: its id, whether it buys, its units (first unit at `unitStart`), units traded, profit. */
  readonly ids: string[];
  readonly buyer: Uint8Array;
  readonly unitStart: Int32Array;
  readonly unitCount: Int32Array;
  readonly units: Float64Array;
  readonly traded: Int32Array;
  readonly profit: Float64Array;
  /** Its resting order's arrival number and price (NaN: none). */
  readonly order: Float64Array;
  readonly price: Float64Array;
  readonly bid: SideBook;
  readonly ask: SideBook;
  readonly profits: SortedAmounts;
  /** Trader numbers by id. */
  private readonly numbers = new Map<string, number>();
  /** Whether no id is given twice (then a trader's number is its place in the agents). */
  private readonly distinct: boolean;

  constructor(
    public params: MarketParams,
    starts: readonly Start[],
    public maxSurplus: number,
  ) {
    const n = starts.length;
    this.ids = starts.map((s) => s.id);
    this.buyer = new Uint8Array(n);
    this.unitStart = new Int32Array(n);
    this.unitCount = new Int32Array(n);
    this.units = new Float64Array(starts.reduce((sum, s) => sum + s.units.length, 0));
    this.traded = new Int32Array(n);
    this.profit = new Float64Array(n);
    this.order = new Float64Array(n).fill(NaN);
    this.price = new Float64Array(n).fill(NaN);
    const slot = new Int32Array(n).fill(-1);
    let at = 0;
    starts.forEach((s, t) => {
      this.buyer[t] = s.role === 'buyer' ? 1 : 0;
      this.unitStart[t] = at;
      this.unitCount[t] = s.units.length;
      this.units.set(s.units, at);
      at += s.units.length;
      // an id given twice is one trader, the last (as a record keyed by id keeps it)
      this.numbers.set(s.id, t);
    });
    this.distinct = this.numbers.size === n;
    for (const [id, t] of this.numbers) this.traders[id] = new TraderView(this, t);
    this.bid = new SideBook('bid', slot, n);
    this.ask = new SideBook('ask', slot, n);
    this.profits = new SortedAmounts(Array.from(this.profit));
  }

  /** The trader number of an agent (-1: not a trader); `hint`, its place in the agents, spares a look-up when right. */
  numberOf(agent: string, hint?: number): number {
    if (hint !== undefined && this.distinct && this.ids[hint] === agent) return hint;
    return this.numbers.get(agent) ?? -1;
  }

  /** The value (buyer) or cost (seller) of its next unit; undefined when it has none left. */
  nextUnit(t: number): number | undefined {
    return this.traded[t]! < this.unitCount[t]! ? this.units[this.unitStart[t]! + this.traded[t]!] : undefined;
  }

  get bids(): Order[] {
    return this.bid.sorted((t) => this.ids[t]!);
  }

  get asks(): Order[] {
    return this.ask.sorted((t) => this.ids[t]!);
  }

  sideOf(t: number): SideBook {
    return this.buyer[t] ? this.bid : this.ask;
  }
}

/** A trader as `traders` shows it: its figures read from the market's arrays. */
class TraderView implements Trader {
  constructor(
    private readonly m: Market,
    private readonly t: number,
  ) {}
  get role(): Trader['role'] {
    return this.m.buyer[this.t] ? 'buyer' : 'seller';
  }
  get units(): number[] {
    const start = this.m.unitStart[this.t]!;
    return Array.from(this.m.units.subarray(start, start + this.m.unitCount[this.t]!));
  }
  get traded(): number {
    return this.m.traded[this.t]!;
  }
  get profit(): number {
    return this.m.profit[this.t]!;
  }
  get order(): number | undefined {
    const o = this.m.order[this.t]!;
    return Number.isNaN(o) ? undefined : o;
  }
  get price(): number | undefined {
    return this.order === undefined ? undefined : this.m.price[this.t];
  }
}

function numbers(v: unknown): number[] {
  if (Array.isArray(v)) return v.map(Number);
  if (typeof v === 'number') return [v];
  if (typeof v === 'string' && v.trim() !== '') return v.split(/[;|]/).map((x) => Number(x.trim()));
  return [];
}

function startOf(agent: WorldAgent, params: MarketParams, rng: Rng): Start {
  const declared = agent.attrs[params.role_column];
  const draw = (r: { min: number; max: number }) => Math.round((r.min + rng.next() * (r.max - r.min)) * 100) / 100;
  const role: Trader['role'] =
    declared === 'buyer' || declared === 'seller' ? declared : rng.next() < params.assign.buyer_share ? 'buyer' : 'seller';
  let units = numbers(agent.attrs[role === 'buyer' ? params.value_column : params.cost_column]).filter((x) => Number.isFinite(x));
  if (units.length === 0)
    units = Array.from({ length: params.assign.units }, () => draw(role === 'buyer' ? params.assign.value : params.assign.cost));
  units.sort(role === 'buyer' ? (a, b) => b - a : (a, b) => a - b);
  return { id: agent.id, role, units };
}

/** A new market of the agents: each a buyer or a seller with its units, as its row says or drawn. */
export function newMarket(params: MarketParams, agents: readonly WorldAgent[], rng: Rng): Market {
  const starts = agents.map((agent) => startOf(agent, params, rng));
  const values: number[] = [];
  const costs: number[] = [];
  for (const s of starts) (s.role === 'buyer' ? values : costs).push(...s.units);
  return new Market(params, starts, maxSurplus(values, costs));
}

/** The market as JSON, as a checkpoint keeps it: fresh objects throughout. */
export function saveMarket(m: Market): Json {
  const traders: Record<string, Json> = {};
  for (const [id, v] of Object.entries(m.traders)) {
    const order = v.order;
    traders[id] = {
      role: v.role,
      units: v.units,
      traded: v.traded,
      profit: v.profit,
      ...(order !== undefined ? { order, price: v.price! } : {}),
    };
  }
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
export function restoreMarket(saved: Json): Market {
  const s = saved as unknown as Omit<MarketState, 'traders'> & { traders: Record<string, Trader> };
  const starts = Object.entries(s.traders).map(([id, t]) => ({ id, role: t.role, units: [...t.units] }));
  const m = new Market(structuredClone(s.params), starts, s.maxSurplus);
  Object.values(s.traders).forEach((t, n) => {
    m.traded[n] = t.traded;
    m.profit[n] = t.profit;
  });
  m.profits.reset(Array.from(m.profit));
  m.nextOrder = s.nextOrder;
  m.trades = structuredClone(s.trades);
  m.stepVolume = { ...s.stepVolume };
  m.surplus = s.surplus;
  for (const o of [...s.bids, ...s.asks]) {
    const t = m.numberOf(o.agent);
    if (t < 0 || !Number.isNaN(m.order[t]!)) continue;
    (o.side === 'bid' ? m.bid : m.ask).insert(t, o.price, o.id, o.step);
    m.order[t] = o.id;
    m.price[t] = o.price;
  }
  return m;
}
