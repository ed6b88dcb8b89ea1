// The shipped examples' replays, as their README files give them, and what a replay leaves
// behind (transcript.md and the journal's events) in a form that does not change from one run
// to the next: run ids, run folders, clock times and durations are replaced by fixed words, and
// long texts by their length and digest, so the fixtures stay small and a difference still shows.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { readJournal } from '../../src/features/journal/reader.js';

export interface GoldenExample {
  name: string;
  args: string[];
}

const replay = (name: string, sop: string, cassette: string, ...extra: string[]): GoldenExample => ({
  name,
  args: ['run', sop, '--llm', `replay:${cassette}`, ...extra],
});

/** Every shipped example's replay command (examples/NAME/README.md). */
export const GOLDEN_EXAMPLES: GoldenExample[] = [
  replay('debate', 'examples/debate/debate.sop.json', 'examples/debate/debate.cassette.json'),
  // the first real recording: SmolLM2-135M-Instruct through --llm local: (its open floor's speakers come from --seed 7)
  replay('debate-smollm2', 'examples/debate/debate.sop.json', 'examples/debate/debate.smollm2.cassette.json', '--seed', '7'),
  replay('auction', 'examples/auction/auction.sop.json', 'examples/auction/auction.cassette.json'),
  replay('werewolf', 'examples/werewolf/werewolf.sop.json', 'examples/werewolf/werewolf.cassette.json'),
  replay(
    'assistant',
    'examples/assistant/assistant.sop.json',
    'examples/assistant/assistant.cassette.json',
    '--answers',
    'examples/assistant/answers.txt',
  ),
  replay('mcp', 'examples/mcp/notes.sop.json', 'examples/mcp/notes.cassette.json', '--yes'),
  // Ana's seat answered from a file, as a person at the terminal would (examples/seats/public-goods/README.md)
  replay(
    'seats-public-goods',
    'examples/seats/public-goods/public-goods.sop.json',
    'examples/seats/public-goods/public-goods.cassette.json',
    '--answers',
    'examples/seats/public-goods/answers.txt',
  ),
  replay(
    'jarvis',
    'sops/jarvis.sop.json',
    'examples/jarvis/jarvis.cassette.json',
    '--goal',
    'Compute summary statistics (count, mean, min, max) of the numeric columns of examples/jarvis/sales.csv and write them to report.md.',
    '--answers',
    'examples/jarvis/answers.txt',
    '--auto-run',
  ),
  replay(
    'scientist',
    'sops/scientist.sop.json',
    'examples/scientist/scientist.cassette.json',
    '--goal',
    'How does the period of a simple pendulum depend on its length and on the mass of its bob?',
    '--answers',
    'examples/scientist/answers.txt',
    '--auto-run',
  ),
];

/** Keys whose values are clock readings or durations. */
const CLOCK_KEYS = new Set(['time', 'timestamp', 'ms', 'started_at', 'finished_at', 'elapsed_ms', 'duration_ms']);
const ISO_TIME = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g;
const LONG = 160;

/** The one run folder a `--out` folder holds. */
export function runFolderIn(out: string): string {
  const [dir] = readdirSync(out);
  if (!dir) throw new Error(`${out}: no run folder`);
  return join(out, dir);
}

function fixedWords(text: string, runDir: string, runId: string): string {
  return text.split(runDir).join('RUN_DIR').split(runId).join('RUN_ID').split(process.cwd()).join('REPO').replace(ISO_TIME, 'TIME');
}

function digest(text: string): string {
  return `<${text.length} chars sha256:${createHash('sha256').update(text).digest('hex').slice(0, 16)}>`;
}

function normalise(value: unknown, runDir: string, runId: string): unknown {
  if (typeof value === 'string') {
    const fixed = fixedWords(value, runDir, runId);
    return fixed.length > LONG ? digest(fixed) : fixed;
  }
  if (Array.isArray(value)) return value.map((v) => normalise(v, runDir, runId));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = CLOCK_KEYS.has(k) ? 'CLOCK' : normalise(v, runDir, runId);
    return out;
  }
  return value;
}

/**
 * The actions plugin journals its state in every checkpoint; since the step loop it is made only
 * for SOPs that use actions, so a SOP without commands or memory files no longer journals the
 * empty state `{finished: {}, subflows: {}, code_cells: {}}`. Restoring that empty state and
 * restoring nothing give the same run, so the two are the same here.
 */
function withoutEmptyActions(event: unknown): unknown {
  const e = event as { type?: string; snapshot?: { extensions?: Record<string, unknown> } };
  const ext = e.type === 'checkpoint' ? e.snapshot?.extensions : undefined;
  if (!ext || JSON.stringify(ext.actions) !== '{"finished":{},"subflows":{},"code_cells":{}}') return event;
  const { actions: _empty, ...rest } = ext;
  const snapshot = { ...e.snapshot };
  if (Object.keys(rest).length > 0) snapshot.extensions = rest;
  else delete snapshot.extensions;
  return { ...e, snapshot };
}

/** transcript.md and the journal's events of a run folder, with what differs between two replays made fixed. */
export function goldenOf(runDir: string): { transcript: string; events: string } {
  const runId = runDir.split('/').pop()!;
  const transcript = fixedWords(readFileSync(join(runDir, 'transcript.md'), 'utf8'), runDir, runId);
  const events = readJournal(runDir)
    .events.map((e) => JSON.stringify(normalise(withoutEmptyActions(e), runDir, runId)))
    .join('\n');
  return { transcript, events: `${events}\n` };
}
