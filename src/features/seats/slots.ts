// The seats of a SOP (docs/seats.md): every agent with "seat": true, and the members of each
// population state's `population.seats` (a count: STATE/1 .. STATE/N, the first members in
// population order; ids: STATE/ID). Read from the SOP alone, so links exist before the run starts.
import type { Sop } from '../../format/sop/types.js';

export interface SeatSlotSpec {
  /** The seat's name: an agent's, or STATE/N or STATE/ID in a population state. */
  seat: string;
  /** The state of a population seat. */
  state?: string;
}

export function seatSlots(sop: Sop): SeatSlotSpec[] {
  const out: SeatSlotSpec[] = [];
  for (const [name, agent] of Object.entries(sop.agents)) if ((agent as { seat?: boolean }).seat === true) out.push({ seat: name });
  for (const [state, def] of Object.entries(sop.states)) {
    const seats = (def as { population?: { seats?: number | string[] } }).population?.seats;
    if (typeof seats === 'number') for (let n = 1; n <= seats; n++) out.push({ seat: `${state}/${n}`, state });
    else if (Array.isArray(seats)) for (const id of seats) out.push({ seat: `${state}/${id}`, state });
  }
  return out;
}
