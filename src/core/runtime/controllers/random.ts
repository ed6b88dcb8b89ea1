// random: a role picked by the run's seeded random generator (same seed, same order). With
// `controller.repeat: false`, never the role that spoke last in the state (when it has another).
import type { ControllerStrategy } from './types.js';

export const random: ControllerStrategy = {
  type: 'random',
  pick: (state, rt, ctx) => {
    const last = rt.begun ? rt.currentRole : undefined;
    const others = state.def.controller?.repeat === false && last !== undefined ? state.roles.filter((r) => r !== last) : [];
    return { role: ctx.rng.pick(others.length > 0 ? others : state.roles), how: 'random' };
  },
};
