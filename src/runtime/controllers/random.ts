// random: a role picked by the run's seeded random generator (same seed, same order).
import type { ControllerStrategy } from './types.js';

export const random: ControllerStrategy = {
  type: 'random',
  pick: (state, _rt, ctx) => ({ role: ctx.rng.pick(state.roles), how: 'random' }),
};
