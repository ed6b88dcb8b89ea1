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
        seat(q) {
          if (!desk.serves(q.seat)) return Promise.resolve(undefined);
          // a turn-based seat is shown its state's commands beside its message box
          const commands = q.kind === 'turn' ? ctx.resolved.states[q.state]?.def.commands : undefined;
          const listed = Object.entries((commands ?? {}) as Record<string, { description?: string; executor: string }>).map(
            ([name, c]) => ({
              name,
              description: c.description ?? c.executor,
            }),
          );
          return desk.ask(listed.length > 0 ? { ...q, choices: [...q.choices, ...listed] } : q, ctx.signal);
        },
      };
    },
  });
}
