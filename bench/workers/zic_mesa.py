"""The ZI-C market of the rules bench (bench/rules.mjs) in Mesa: Gode and Sunder's (1993)
zero-intelligence-constrained traders in a continuous double auction, the same model as
bench/lib/zic-sop.mjs runs in sop. `n` traders, half buyers with a value and half sellers with a
cost, each uniform in [50, 150], one unit each; at every step every trader, in a random order
(`shuffle_do`), bids uniformly in [min_price, value] (a buyer) or asks uniformly in
[cost, max_price] (a seller), prices rounded to cents; a new order replaces the trader's resting
one; an order that crosses the best opposite order trades at once at the resting order's price,
else it rests (price-time priority). Prints one JSON line: CPU seconds of the model (made and
stepped), agent-steps, efficiency, Mesa's version.

usage: python3 zic_mesa.py N STEPS SEED
"""
import bisect
import json
import math
import sys
import time

import mesa

MIN_PRICE, MAX_PRICE, LOW, HIGH = 0.0, 200.0, 50.0, 150.0


class Trader(mesa.Agent):
    def __init__(self, model, buyer, limit):
        super().__init__(model)
        self.buyer = buyer
        self.limit = limit
        self.done = False
        self.profit = 0.0
        self.order = None  # the key of its resting order in its side of the book

    def step(self):
        if self.done:
            return
        r = self.random.random()
        if self.buyer:
            top = max(MIN_PRICE, self.limit)
            self.model.bid(self, math.floor((MIN_PRICE + r * (top - MIN_PRICE)) * 100) / 100)
        else:
            bottom = min(MAX_PRICE, self.limit)
            self.model.ask(self, math.ceil((bottom + r * (MAX_PRICE - bottom)) * 100) / 100)


class ZicMarket(mesa.Model):
    def __init__(self, n, seed):
        super().__init__(seed=seed)
        # books as sorted lists of keys: bids (-price, arrival), asks (price, arrival); the trader by key
        self.bids, self.asks, self.owner = [], [], {}
        self.arrivals = 0
        self.surplus = 0.0
        self.trades = 0
        values, costs = [], []
        for _ in range(n):
            buyer = self.random.random() < 0.5
            limit = round(LOW + self.random.random() * (HIGH - LOW), 2)
            (values if buyer else costs).append(limit)
            Trader(self, buyer, limit)
        values.sort(reverse=True)
        costs.sort()
        self.max_surplus = sum(v - c for v, c in zip(values, costs) if v > c)

    def cancel(self, t):
        if t.order is None:
            return
        book = self.bids if t.buyer else self.asks
        i = bisect.bisect_left(book, t.order)
        del book[i]
        del self.owner[t.order]
        t.order = None

    def trade(self, buyer, seller, price):
        buyer.done = seller.done = True
        buyer.profit += buyer.limit - price
        seller.profit += price - seller.limit
        self.surplus += buyer.limit - seller.limit
        self.trades += 1

    def bid(self, t, price):
        self.cancel(t)
        if self.asks and price >= self.asks[0][0]:
            key = self.asks.pop(0)
            seller = self.owner.pop(key)
            seller.order = None
            self.trade(t, seller, key[0])
            return
        self.arrivals += 1
        t.order = (-price, self.arrivals)
        bisect.insort(self.bids, t.order)
        self.owner[t.order] = t

    def ask(self, t, price):
        self.cancel(t)
        if self.bids and price <= -self.bids[0][0]:
            key = self.bids.pop(0)
            buyer = self.owner.pop(key)
            buyer.order = None
            self.trade(buyer, t, -key[0])
            return
        self.arrivals += 1
        t.order = (price, self.arrivals)
        bisect.insort(self.asks, t.order)
        self.owner[t.order] = t

    def step(self):
        self.agents.shuffle_do("step")


def main():
    n, steps, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    cpu0 = time.process_time()
    model = ZicMarket(n, seed)
    for _ in range(steps):
        model.step()
    cpu = time.process_time() - cpu0
    print(json.dumps({
        "cpu_s": cpu,
        "agent_steps": n * steps,
        "efficiency": model.surplus / model.max_surplus if model.max_surplus > 0 else None,
        "trades": model.trades,
        "mesa": mesa.__version__,
    }))


if __name__ == "__main__":
    main()
