// The seats feature's plugin (docs/seats.md): it answers the run's `seat` hook for the seats its
// desk serves, from the web page or the JSON API (src/apps/seats/server.ts). The step loop and the
// population feature journal each answer as the agent's reply (src/core/runtime/seat.ts).
import { definePlugin, type PluginMaker } from '../../core/runtime/hooks.js';
import type { SeatDesk } from './desk.js';

export function seatsPlugin(desk: SeatDesk): PluginMaker {
  return definePlugin({
    name: 'seats',
    make(ctx) {
      return {
        seat: (q) => (desk.serves(q.seat) ? desk.ask(q, ctx.signal) : Promise.resolve(undefined)),
      };
    },
  });
}
