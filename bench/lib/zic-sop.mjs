// The ZI-C market of the rules bench (rules.mjs), as a SOP: `n` traders of the `market` world, half
// buyers with a value and half sellers with a cost, each uniform in [50, 150] (one unit each), every
// trader acting at every step (activation 1) by the `zic` rule tier (Gode and Sunder 1993) in a
// continuous double auction over prices 0..200, the actions applied in a seeded shuffle.
// bench/workers/zic_mesa.py is the same model in Mesa.
export const ZIC = { minPrice: 0, maxPrice: 200, low: 50, high: 150, buyerShare: 0.5 };

export function zicSop(n, steps) {
  return {
    name: `zic-${n}`,
    agents: {},
    root: 'trading',
    states: {
      trading: {
        population: {
          source: {
            generate: {
              n,
              seed: 11,
              columns: {
                role: { categorical: { buyer: ZIC.buyerShare, seller: 1 - ZIC.buyerShare } },
                value: { uniform: { min: ZIC.low, max: ZIC.high } },
                cost: { uniform: { min: ZIC.low, max: ZIC.high } },
              },
            },
          },
          persona: 'You are a {{role}}.',
        },
        world: { type: 'market', params: { mechanism: 'continuous', min_price: ZIC.minPrice, max_price: ZIC.maxPrice } },
        actions: ['bid', 'ask', 'idle'],
        activation: { probability: 1 },
        cognition: { tier: 'rule', policy: 'zic' },
        resolution: { type: 'shuffle' },
        max_steps: steps,
        next_states: { 1: 'closed' },
      },
      closed: { final: true },
    },
  };
}
