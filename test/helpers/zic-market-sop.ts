// A small ZI-C market SOP of generated traders (rule tier, no LLM), as the population durability
// tests write it: its name, size, steps and (optionally) the state's `snapshots` vary.
export function zicMarketSop(o: { name: string; n: number; steps: number; snapshots?: object }): object {
  return {
    name: o.name,
    agents: {},
    root: 'trading',
    states: {
      trading: {
        population: {
          source: {
            generate: {
              n: o.n,
              seed: 5,
              columns: {
                role: { categorical: { buyer: 0.5, seller: 0.5 } },
                value: { uniform: { min: 50, max: 150 } },
                cost: { uniform: { min: 50, max: 150 } },
              },
            },
          },
        },
        world: { type: 'market', params: { assign: { units: 3 } } },
        actions: ['bid', 'ask', 'idle'],
        activation: { probability: 0.6 },
        cognition: { tier: 'rule', policy: 'zic' },
        ...(o.snapshots ? { snapshots: o.snapshots } : {}),
        max_steps: o.steps,
        next_states: { 1: 'closed' },
      },
      closed: { final: true },
    },
  };
}
