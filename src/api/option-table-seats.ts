// Entries of the option table (./option-table.ts) for seats played from web pages (docs/seats.md):
// `sop run --web` and `sop resume --web`.
import type { OptionSpec } from './option-spec.js';

export const SEAT_OPTIONS = {
  web: {
    api: false,
    flag: 'web',
    type: 'boolean',
    on: {
      run: 'Serve the seats (agents with "seat": true, population seats) on a web page; prints one link per seat (docs/seats.md)',
      resume: 'Serve the seats on a web page again (new links); a seat that answered is not asked again (docs/seats.md)',
    },
  },
  port: {
    api: false,
    flag: 'port',
    type: 'number',
    on: { run: 'With --web: the port (default: any free one)', resume: 'With --web: the port (default: any free one)' },
  },
  host: {
    api: false,
    flag: 'host',
    type: 'string',
    on: {
      run: 'With --web: the address to listen on (default 127.0.0.1; any other is reachable by others, with a warning)',
      resume: 'With --web: the address to listen on (default 127.0.0.1)',
    },
  },
  links: {
    api: false,
    flag: 'links',
    type: 'string',
    metavar: 'FILE',
    on: {
      run: 'With --web: also write the seat links to FILE (one "SEAT URL" a line, readable by you alone) for distribution',
      resume: 'With --web: also write the seat links to FILE',
    },
  },
  replaySeats: {
    api: false,
    flag: 'replay-seats',
    type: 'string',
    metavar: 'RUN_DIR',
    on: {
      run: "Answer every seat with the answers it gave in that run's journal, in order (no person present; with --llm replay:CASSETTE the run is reproduced)",
    },
  },
  waitSeats: {
    api: false,
    flag: 'wait-seats',
    type: 'boolean',
    on: {
      run: 'With --web: start the run once every seat has joined (opened its link and given a name)',
      resume: 'With --web: go on once every seat has joined',
    },
  },
} as const satisfies Record<string, OptionSpec>;
