// Gode and Sunder's (1993) zero-intelligence-constrained (ZI-C) traders as a `rule` policy for
// the market world: a buyer bids uniformly in [min_price, value], a seller asks uniformly in
// [cost, max_price], one unit per value or cost of its schedule; they never trade at a loss.
// The policy reads only the trader's own observation (./market.ts observe): role, value or
// cost of its next unit, units left, and the price range.
import type { RulePolicy } from './rule.js';

export interface ZicOptions {
  /** Round prices to this many decimals (default 2). */
  decimals?: number;
}

export function ziC(options: ZicOptions = {}): RulePolicy {
  const scale = Math.pow(10, options.decimals ?? 2);
  return ({ observation, rng }) => {
    const o = observation as Record<string, unknown> | null;
    if (!o || typeof o !== 'object' || Array.isArray(o) || Number(o.units_left ?? 0) <= 0) return [];
    const min = Number(o.min_price);
    const max = Number(o.max_price);
    if (o.role === 'buyer' && typeof o.value === 'number') {
      const top = Math.max(min, o.value);
      return [{ name: 'bid', args: { price: Math.floor((min + rng.next() * (top - min)) * scale) / scale } }];
    }
    if (o.role === 'seller' && typeof o.cost === 'number') {
      const bottom = Math.min(max, o.cost);
      return [{ name: 'ask', args: { price: Math.ceil((bottom + rng.next() * (max - bottom)) * scale) / scale } }];
    }
    return [];
  };
}
