// The canonical order of a population's agents (agent ids by code unit: ./worlds/order.ts, which
// every resolution starts from), worked out once per visit, so that a step puts its actions in
// that order by the agents' places rather than by comparing their ids.
import { compareIds } from './worlds/seed.js';

export class CanonicalOrder {
  /** By place in the population: the agent's rank in id order; and the places in id order. */
  private rank?: Int32Array;
  private byRank?: Int32Array;

  constructor(private readonly ids: readonly string[]) {}

  /** Items of distinct agents (`placeOf`: an item's agent's place in the population) in canonical order, in place. */
  sort<T>(items: T[], placeOf: (item: T) => number): T[] {
    if (items.length < 2) return items;
    const { rank, byRank } = this.ranks();
    // many agents of the population: read off the agents in id order; few: sort by rank
    if (items.length * 8 < this.ids.length) return items.sort((a, b) => rank[placeOf(a)]! - rank[placeOf(b)]!);
    const at = new Int32Array(this.ids.length).fill(-1);
    items.forEach((item, n) => (at[placeOf(item)] = n));
    const copy = [...items];
    let n = 0;
    for (let r = 0; r < byRank.length; r++) {
      const k = at[byRank[r]!]!;
      if (k >= 0) items[n++] = copy[k]!;
    }
    return items;
  }

  private ranks(): { rank: Int32Array; byRank: Int32Array } {
    if (!this.rank || !this.byRank) {
      const ids = this.ids;
      const byRank = Int32Array.from(ids, (_, i) => i);
      // already in id order (ids like a0001, a0002): nothing to sort
      let sorted = true;
      for (let i = 1; i < ids.length && sorted; i++) sorted = compareIds(ids[i - 1]!, ids[i]!) < 0;
      if (!sorted) byRank.sort((a, b) => compareIds(ids[a]!, ids[b]!));
      const rank = new Int32Array(ids.length);
      byRank.forEach((i, r) => (rank[i] = r));
      this.rank = rank;
      this.byRank = byRank;
    }
    return { rank: this.rank, byRank: this.byRank };
  }
}
