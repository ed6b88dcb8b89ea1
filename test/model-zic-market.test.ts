// examples/models/zic-market: Gode and Sunder's (1993) ZI-C traders in a continuous double auction
// whose book is cleared after each trade (the market world's clear_after_trade). The trades and
// the allocative efficiency after each step are checked against the auction computed here from
// traders.csv and the documented seeded streams (test/helpers/seeded.ts): trader x acts at step t
// when mix(seed, "activation", t, x) / 2^32 < 0.5; with units left, u the first draw of
// (seed, "rule", t, x), a buyer bids floor(100 (1 + u (value - 1))) / 100 and a seller asks
// ceil(100 (cost + u (200 - cost))) / 100 for its next unit; the orders are applied in the
// shuffle order of the acting traders.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSop, runSop, type RunEvent } from '../src/index.js';
import { csvRows, mix, shuffledAgents, stream } from './helpers/seeded.js';

interface Order {
  agent: string;
  price: number;
  n: number;
}

function auction(seed: number, steps: number) {
  const rows = csvRows(readFileSync('examples/models/zic-market/traders.csv', 'utf8'));
  const units = new Map(
    rows.map((r) => [
      r.id!,
      (r.role === 'buyer' ? r.value! : r.cost!)
        .split(';')
        .map(Number)
        .sort((a, b) => (r.role === 'buyer' ? b - a : a - b)),
    ]),
  );
  const role = new Map(rows.map((r) => [r.id!, r.role!]));
  const traded = new Map(rows.map((r) => [r.id!, 0]));
  const values = rows.filter((r) => r.role === 'buyer').flatMap((r) => units.get(r.id!)!);
  const costs = rows.filter((r) => r.role === 'seller').flatMap((r) => units.get(r.id!)!);
  const v = [...values].sort((a, b) => b - a);
  const c = [...costs].sort((a, b) => a - b);
  let max = 0;
  for (let i = 0; i < v.length && i < c.length && v[i]! > c[i]!; i++) max += v[i]! - c[i]!;
  let bids: Order[] = [];
  let asks: Order[] = [];
  let n = 0;
  let surplus = 0;
  let trades = 0;
  const out: Array<{ trades: number; efficiency: number }> = [];
  for (let t = 1; t <= steps; t++) {
    const active = rows.map((r) => r.id!).filter((id) => mix(seed, 'activation', t, id) / 4294967296 < 0.5);
    const price = new Map<string, number>();
    for (const id of active) {
      const next = units.get(id)![traded.get(id)!];
      if (next === undefined) continue;
      const u = stream(seed, 'rule', t, id).next();
      price.set(
        id,
        role.get(id) === 'buyer'
          ? Math.floor((1 + u * (Math.max(1, next) - 1)) * 100) / 100
          : Math.ceil((Math.min(200, next) + u * (200 - Math.min(200, next))) * 100) / 100,
      );
    }
    for (const id of shuffledAgents(active, seed, t)) {
      const p = price.get(id);
      // decided at the step's start; refused when the trader's last unit traded earlier in the step
      if (p === undefined || traded.get(id)! >= units.get(id)!.length) continue;
      const buyer = role.get(id) === 'buyer';
      bids = bids.filter((o) => o.agent !== id);
      asks = asks.filter((o) => o.agent !== id);
      const best = buyer ? asks[0] : bids[0];
      if (best && (buyer ? p >= best.price : p <= best.price)) {
        const [b, s] = buyer ? [id, best.agent] : [best.agent, id];
        surplus += units.get(b)![traded.get(b)!]! - units.get(s)![traded.get(s)!]!;
        traded.set(b, traded.get(b)! + 1);
        traded.set(s, traded.get(s)! + 1);
        trades++;
        bids = [];
        asks = [];
        continue;
      }
      const side = buyer ? bids : asks;
      side.push({ agent: id, price: p, n: n++ });
      side.sort((x, y) => (buyer ? y.price - x.price : x.price - y.price) || x.n - y.n);
    }
    out.push({ trades, efficiency: surplus / max });
  }
  return out;
}

async function run(seed: number) {
  const handle = runSop(loadSop('examples/models/zic-market/zic-market.sop.json'), { seed });
  const out: Array<{ trades: number; efficiency: number }> = [];
  let calls = 0;
  for await (const e of handle as AsyncIterable<RunEvent>) {
    if (e.type === 'population_step') out.push({ trades: e.metrics.volume_total!, efficiency: e.metrics.efficiency! });
    if (e.type === 'llm_call') calls++;
  }
  expect((await handle.result).status).toBe('finished');
  expect(calls).toBe(0);
  return out;
}

describe('examples/models/zic-market', () => {
  it.each([1, 2, 3])('follows the independent auction step by step (seed %i)', async (seed) => {
    const expected = auction(seed, 60);
    const got = await run(seed);
    expect(got.map((s) => s.trades)).toEqual(expected.map((s) => s.trades));
    got.forEach((s, i) => expect(s.efficiency).toBeCloseTo(expected[i]!.efficiency, 9));
    // Gode and Sunder report about 97% to 99% for ZI-C traders
    expect(got.at(-1)!.efficiency).toBeGreaterThan(0.9);
  });
});
