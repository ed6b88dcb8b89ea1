// A `sop run --web` (or `sop resume --web`) child process for the seat tests: its printed seat
// links read from stderr, its exit awaited, its run folder's journal read.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { spawnCli } from './cli.js';
import { until } from './until.js';

export interface SeatRun {
  /** Seat name -> link, as printed. */
  links: Map<string, string>;
  runner: string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  done(): boolean;
  kill(signal?: NodeJS.Signals): void;
}

/** Starts the CLI and resolves once it has printed a link for each of `seats` seats. */
export async function startSeatRun(args: readonly string[], seats: number): Promise<SeatRun> {
  const child = spawnCli(args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let err = '';
  let over = false;
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  child.stdout.on('data', () => undefined);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => {
      over = true;
      resolve({ code, signal });
    }),
  );
  const links = new Map<string, string>();
  const read = () => {
    for (const m of err.matchAll(/^seat (.+): (http:\/\/\S+)$/gm)) links.set(m[1]!, m[2]!);
    return links.size >= seats || over;
  };
  await until(read, { timeoutMs: 60_000 });
  if (links.size < seats) throw new Error(`the run printed ${links.size} of ${seats} seat links:\n${err}`);
  const runner = /runner page: (\S+)/.exec(err)?.[1] ?? '';
  return { links, runner, stderr: () => err, exited, done: () => over, kill: (s = 'SIGTERM') => child.kill(s) };
}

export interface SeatState {
  status: 'waiting' | 'your_turn' | 'finished';
  question?: string;
  state?: string;
  step?: number;
  sees: Record<string, unknown> | null;
  actions: Array<{ name: string; description?: string; parameters?: Record<string, unknown> }>;
  default: unknown;
}

export async function seatState(link: string): Promise<SeatState> {
  const r = await fetch(`${link}/state`);
  if (r.status !== 200) throw new Error(`GET ${link}/state: ${r.status}`);
  return (await r.json()) as SeatState;
}

export async function postAnswer(link: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const r = await fetch(`${link}/answer`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** Waits until the seat's turn is open (or the run is over); undefined when the run ended first. */
export async function nextTurn(run: SeatRun, link: string, timeoutMs = 60_000): Promise<SeatState | undefined> {
  let got: SeatState | undefined;
  await until(
    async () => {
      if (run.done()) return true;
      try {
        const s = await seatState(link);
        if (s.status === 'your_turn' || s.status === 'finished') got = s;
      } catch {
        // the server stopped with the run
      }
      return got !== undefined;
    },
    { timeoutMs, intervalMs: 50 },
  );
  return got?.status === 'your_turn' ? got : undefined;
}

/** The one run folder under `out`. */
export function runFolder(out: string): string {
  const dirs = readdirSync(out).filter((d) => !d.startsWith('.'));
  if (dirs.length !== 1) throw new Error(`expected one run folder in ${out}, found ${dirs.join(', ')}`);
  return join(out, dirs[0]!);
}

export function journal(dir: string): Array<Record<string, unknown>> {
  return readFileSync(join(dir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The seat answers the journal holds (effect_finished of kind seat): their results, and whether a resumed run reused one. */
export function seatAnswers(dir: string): Array<{ key: string; label: string; result: Record<string, unknown>; reused: boolean }> {
  return journal(dir)
    .filter((e) => e.type === 'effect_finished' && e.kind === 'seat')
    .map((e) => ({
      key: e.key as string,
      label: e.label as string,
      result: e.result as Record<string, unknown>,
      reused: e.reused === true,
    }));
}
