// The population SOP of the benches (population.mjs, plan.mjs): generated agents on a social network.

/**
 * A SOP of one population state: `n` generated agents (name, age, interest) on a social network,
 * each acting with probability `activation` at each of `maxSteps` steps; `state` adds to the state
 * (e.g. its cognition tiers).
 */
export function populationSop(n, activation, maxSteps, state = {}) {
  return {
    name: `population-${n}`,
    agents: {},
    root: 'feed',
    states: {
      feed: {
        environment_prompt: 'You use a small social network.',
        population: {
          source: {
            generate: {
              n,
              seed: 7,
              columns: {
                name: { choice: ['Ada', 'Ben', 'Chloe', 'Dev', 'Eve', 'Finn'] },
                age: { normal: { mean: 40, sd: 12, min: 18, max: 90, round: true } },
                interest: { categorical: { sports: 0.3, politics: 0.3, music: 0.4 } },
              },
            },
          },
          persona: 'You are {{name}}, {{age}}, into {{interest}}.',
        },
        world: {
          type: 'social',
          params: { rank: 'recency', feed_size: 3, seed_posts: [{ id: 'news', author: 'a0', text: 'Buses are free.' }] },
        },
        actions: ['post', 'like', 'repost', 'idle'],
        activation: { probability: activation },
        max_steps: maxSteps,
        next_states: { 1: 'end' },
        ...state,
      },
      end: { final: true },
    },
  };
}
