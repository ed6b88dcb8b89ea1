// The cost of a run as the closing line and `sop runs` tell it: "$0.0123", or unknown (never $0 for a model without a price).
import type { UsageTotals } from '../../core/runtime/usage.js';

/** "$0.0123", "cost unknown (no price for model X)", or undefined for a run that is not priced (the mock). */
export function costText(u: Pick<UsageTotals, 'cost' | 'unpriced_models'>): string | undefined {
  if (u.unpriced_models?.length) return `cost unknown (no price for model ${u.unpriced_models.join(', ')})`;
  if (typeof u.cost === 'number') return `$${u.cost.toFixed(4)}`;
  return undefined;
}
