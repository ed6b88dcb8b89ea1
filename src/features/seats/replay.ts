// A run's seats played again from its journal, with no person present (docs/seats.md#replay):
// `sop run FILE --replay-seats RUN_DIR` answers each seat's questions with the answers that seat
// gave in that run, in order, each with who gave it and when; with the LLM's replies from a
// cassette (--llm replay:FILE), the run is reproduced.
import { HumanInputError } from '../../core/io/human.js';
import type { SeatReply } from '../../core/io/seats.js';
import type { RunEvent } from '../../core/runtime/events.js';
import { definePlugin, type PluginMaker } from '../../core/runtime/hooks.js';

/** Each seat's journaled answers, in the order it gave them (an effect reused by a resume counted once). */
export function journaledSeatAnswers(events: readonly RunEvent[]): Map<string, SeatReply[]> {
  const byKey = new Map<string, SeatReply>();
  for (const e of events)
    if (e.type === 'effect_finished' && e.kind === 'seat' && !byKey.has(e.key)) {
      const r = e.result as Partial<SeatReply> | undefined;
      if (r && typeof r.seat === 'string' && r.answer !== undefined) byKey.set(e.key, r as SeatReply);
    }
  const out = new Map<string, SeatReply[]>();
  for (const r of byKey.values()) out.set(r.seat, [...(out.get(r.seat) ?? []), r]);
  return out;
}

export class SeatReplayError extends HumanInputError {
  constructor(message: string) {
    super(message);
    this.name = 'SeatReplayError';
  }
}

/** Answers every seat from the answers it gave in a journaled run. */
export function replaySeatsPlugin(answers: Map<string, SeatReply[]>, from: string): PluginMaker {
  const next = new Map<string, number>();
  return definePlugin({
    name: 'seats-replay',
    make() {
      return {
        seat(q) {
          const given = answers.get(q.seat) ?? [];
          const n = next.get(q.seat) ?? 0;
          const reply = given[n];
          if (!reply)
            return Promise.reject(
              new SeatReplayError(
                `--replay-seats ${from}: seat ${q.seat} gave ${given.length} answers in that run; the replay asks it for answer ${n + 1} (${q.state}, turn ${q.turn})`,
              ),
            );
          next.set(q.seat, n + 1);
          return Promise.resolve(reply);
        },
      };
    },
  });
}
