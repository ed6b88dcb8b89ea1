// `sop run --web` and `sop resume --web` (docs/seats.md): the SOP's seats served on a web page,
// one link per seat printed (and written with --links FILE), the run started once every seat has
// joined with --wait-seats. The seats feature's plugin answers the run's seat questions; with
// --replay-seats RUN_DIR, the answers each seat gave in that run do, with nobody present.
import { writeFileSync } from 'node:fs';
import type { PluginFactory } from '../../core/runtime/hooks.js';
import type { Sop } from '../../format/sop/types.js';
import { SeatDesk } from '../../features/seats/desk.js';
import { seatsPlugin } from '../../features/seats/plugin.js';
import { seatSlots } from '../../features/seats/slots.js';
import { journaledSeatAnswers, replaySeatsPlugin } from '../../features/seats/replay.js';
import { effectiveEvents, readJournal } from '../../features/journal/reader.js';
import { EngineError } from '../../shared/errors.js';
import { terminalSafe } from '../../shared/util/terminal-text.js';
import type { SeatServer } from '../seats/server.js';

export interface WebSeatOptions {
  web?: boolean;
  port?: number;
  host?: string;
  links?: string;
  waitSeats?: boolean;
  replaySeats?: string;
}

export interface WebSeats {
  plugins: PluginFactory;
  /** The run is over: seats are told, and the server stops once they have seen it (at most a few seconds). */
  finish(): Promise<void>;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);
/** How long the server stays up after the run for the seats to see it is over. */
const LINGER_MS = 5000;

export async function startWebSeats(sop: Sop, o: WebSeatOptions, err: (s: string) => void): Promise<WebSeats | undefined> {
  if (o.replaySeats !== undefined) {
    if (o.web) throw new EngineError('--replay-seats answers the seats from a journal: it does not go with --web', 'OPTION');
    const answers = journaledSeatAnswers(effectiveEvents(readJournal(o.replaySeats).events));
    if (answers.size === 0) throw new EngineError(`--replay-seats ${o.replaySeats}: its journal holds no seat's answer`, 'OPTION');
    const plugin = replaySeatsPlugin(answers, o.replaySeats);
    return { plugins: (ctx) => [plugin(ctx)!], finish: () => Promise.resolve() };
  }
  if (!o.web) {
    for (const [flag, given] of [
      ['--port', o.port],
      ['--host', o.host],
      ['--links', o.links],
      ['--wait-seats', o.waitSeats],
    ] as const)
      if (given !== undefined && given !== false) throw new EngineError(`${flag} needs --web`, 'OPTION');
    return undefined;
  }
  const slots = seatSlots(sop);
  if (slots.length === 0)
    throw new EngineError(
      `--web: ${sop.name} has no seats (an agent with "seat": true, or "seats" in a population state's "population")`,
      'OPTION',
    );
  const desk = new SeatDesk(slots);
  const host = o.host ?? '127.0.0.1';
  let server: SeatServer;
  try {
    const { startSeatServer } = await import('../seats/server.js'); // its web server (hono) only for --web
    server = await startSeatServer({ desk, title: sop.name, host, port: o.port ?? 0 });
  } catch (e) {
    throw new EngineError(`--web: cannot listen on ${host}:${o.port ?? 0}: ${(e as Error).message}`, 'OPTION');
  }
  if (!LOOPBACK.has(host)) err(`warning: serving seats on ${host}: anyone who can reach it and has a seat's link can play that seat\n`);
  err(`Seats of ${terminalSafe(sop.name)} (${slots.length}); runner page: ${server.runnerUrl}\n`);
  for (const l of server.links) err(`seat ${terminalSafe(l.seat)}: ${l.url}\n`);
  if (o.links) {
    writeFileSync(o.links, server.links.map((l) => `${l.seat} ${l.url}\n`).join(''), { mode: 0o600 });
    err(`Seat links written to ${o.links}\n`);
  }
  if (o.waitSeats) {
    err(`Waiting for every seat to join...\n`);
    await desk.allJoined();
    err(`Every seat has joined.\n`);
  }
  return {
    plugins: (ctx) => [seatsPlugin(desk)(ctx)!],
    async finish() {
      desk.finish();
      await Promise.race([desk.allSawFinish(), new Promise((r) => setTimeout(r, LINGER_MS).unref())]);
      await server.close();
    },
  };
}
