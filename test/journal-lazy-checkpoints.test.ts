// A reader that holds a run's whole history (sop show, sop view, sop resume, sop fork: loadRunRecord)
// does not hold every whole save of a population visit: a checkpoint line of LAZY_CHECKPOINT_BYTES
// or more keeps its snapshot's extensions on disk, read again from its line when used
// (src/features/journal/reader.ts). Here a 10,000-agent social run with a whole save about every 20 steps
// (lines of more than 1 MiB): the record holds none of them, its events read the same as the file's,
// and a run killed after the last whole save resumes (reading it from disk) to the uninterrupted steps.
import { closeSync, mkdtempSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkCommand } from '../src/apps/cli/fork-command.js';
import { resumeCommand } from '../src/apps/cli/resume-command.js';
import { runCommand } from '../src/apps/cli/run-command.js';
import { effectiveEvents, LAZY_CHECKPOINT_BYTES, LAZY_STEP_BYTES, readJournal } from '../src/features/journal/reader.js';
import { loadRunRecord } from '../src/features/journal/record.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { quietStderr } from './helpers/quiet.js';

const STEPS = 45;
let root: string;
let sopFile: string;

type Saved = { world?: unknown; base?: number; step: number };
const linesOf = (dir: string) => readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n').slice(0, -1);
const onlyDir = (out: string) => join(out, readdirSync(out).filter((d) => !d.endsWith('.tmp'))[0]!);
const savedOf = (e: RunEvent): Saved | undefined =>
  e.type === 'checkpoint' ? (e.snapshot.extensions?.population as Record<string, Saved> | undefined)?.feed : undefined;
function steps(dir: string) {
  const out = new Map<number, { actions: unknown; metrics: unknown }>();
  for (const l of linesOf(dir)) {
    const e = JSON.parse(l) as { type: string; step?: number; actions?: unknown; metrics?: unknown };
    if (e.type === 'population_step') out.set(e.step!, { actions: e.actions, metrics: e.metrics });
  }
  return [...out.entries()].sort((a, b) => a[0] - b[0]);
}
const run = (out: string) =>
  quietStderr(() => runCommand({ file: sopFile, llm: 'mock', seed: 3, inputs: [], json: false, quiet: true, out }));

let whole: string;
beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sop-lazy-checkpoints-'));
  sopFile = join(root, 'social.sop.json');
  writeFileSync(
    sopFile,
    JSON.stringify({
      name: 'social-lazy',
      agents: {},
      root: 'feed',
      states: {
        feed: {
          population: {
            source: { generate: { n: 10_000, seed: 7, columns: { interest: { categorical: { sports: 0.5, music: 0.5 } } } } },
          },
          world: {
            type: 'social',
            params: { rank: 'recency', feed_size: 3, seed_posts: [{ id: 'news', author: 'a0', text: 'Buses are free.' }] },
            graph: { generate: { model: 'barabasi_albert', m: 3, seed: 7 } },
          },
          actions: ['post', 'like', 'repost', 'idle'],
          activation: { probability: 0.1 },
          cognition: { tier: 'rule', policy: 'cascade', params: { repost: 0.2, like: 0.3, post: 0.05 } },
          snapshots: { steps: 20 },
          max_steps: STEPS,
          next_states: { 1: 'end' },
        },
        end: { final: true },
      },
    }),
  );
  expect(await run(join(root, 'whole'))).toBe(0);
  whole = onlyDir(join(root, 'whole'));
}, 240_000);
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a long checkpoint read by loadRunRecord', () => {
  it('keeps its whole save on disk, and reads the same as the file', () => {
    const lines = linesOf(whole);
    const long = lines.filter((l) => l.startsWith('{"type":"checkpoint"') && Buffer.byteLength(l) >= LAZY_CHECKPOINT_BYTES);
    expect(long.length).toBeGreaterThanOrEqual(2); // the whole saves of steps 21 and 42 (after twice the population in actions)
    const record = loadRunRecord(whole);
    const checkpoints = record.effective.filter((e) => e.type === 'checkpoint');
    const held = checkpoints.filter((e) => Object.getOwnPropertyDescriptor(e.snapshot, 'extensions')?.get === undefined);
    const onDisk = checkpoints.filter((e) => Object.getOwnPropertyDescriptor(e.snapshot, 'extensions')?.get !== undefined);
    expect(onDisk).toHaveLength(long.length);
    // every whole save of the visit is among those on disk; the checkpoints held are the small ones
    expect(held.every((e) => savedOf(e)?.world === undefined)).toBe(true);
    expect(onDisk.map((e) => savedOf(e)?.step)).toEqual([21, 42]);
    expect(onDisk.every((e) => savedOf(e)?.world !== undefined)).toBe(true);
    // written out (sop show --format events), the record's events are those of the journal read whole
    const complete = effectiveEvents(readJournal(whole).events);
    expect(record.effective.map((e) => JSON.stringify(e))).toEqual(complete.map((e) => JSON.stringify(e)));
  });

  it('with stepsOnDisk (sop show, sop runs), a long step keeps its actions on disk too, and reads the same', () => {
    const lines = linesOf(whole);
    const long = lines.filter((l) => l.startsWith('{"type":"population_step"') && Buffer.byteLength(l) >= LAZY_STEP_BYTES);
    expect(long.length).toBeGreaterThan(STEPS / 2);
    const record = loadRunRecord(whole, { stepsOnDisk: true });
    const onDisk = record.effective.filter(
      (e) => e.type === 'population_step' && Object.getOwnPropertyDescriptor(e, 'actions')?.get !== undefined,
    );
    expect(onDisk).toHaveLength(long.length);
    // a resume or a fork holds them (they are replayed)
    const held = loadRunRecord(whole).effective.filter(
      (e) => e.type === 'population_step' && Object.getOwnPropertyDescriptor(e, 'actions')?.get !== undefined,
    );
    expect(held).toHaveLength(0);
    const complete = effectiveEvents(readJournal(whole).events);
    expect(record.effective.map((e) => JSON.stringify(e))).toEqual(complete.map((e) => JSON.stringify(e)));
  });

  it('a journal rewritten under the record is a clear error, not a wrong whole save', () => {
    const lines = linesOf(whole);
    const record = loadRunRecord(whole);
    const onDisk = (e: RunEvent) => e.type === 'checkpoint' && Object.getOwnPropertyDescriptor(e.snapshot, 'extensions')?.get !== undefined;
    const first = record.effective.find(onDisk);
    expect(first).toBeDefined();
    // the line of the first whole save overwritten in place by blanks
    const at = lines.findIndex((l) => l.startsWith('{"type":"checkpoint"') && Buffer.byteLength(l) >= LAZY_CHECKPOINT_BYTES);
    const offset = lines.slice(0, at).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    const fd = openSync(join(whole, 'journal.jsonl'), 'r+');
    try {
      writeSync(fd, Buffer.alloc(64, ' '), 0, 64, offset);
      expect(() => (first as Extract<RunEvent, { type: 'checkpoint' }>).snapshot.extensions).toThrow(
        /the checkpoint of turn 21 is no longer where it was read; the journal was rewritten/,
      );
    } finally {
      writeSync(fd, Buffer.from(lines[at]!.slice(0, 64)), 0, 64, offset);
      closeSync(fd);
    }
    const read = readJournal(whole).events.find((e) => e.type === 'checkpoint' && e.turn === 21);
    expect(JSON.stringify(first)).toBe(JSON.stringify(read)); // put back: read as written
  });

  it('a run killed after its last whole save resumes, reading it from disk, to the steps of the uninterrupted run', async () => {
    const out = join(root, 'cut');
    expect(await run(out)).toBe(0);
    const dir = onlyDir(out);
    const lines = linesOf(dir);
    const at = lines.findIndex((l) => l.startsWith('{"type":"checkpoint","turn":44,'));
    expect(at).toBeGreaterThan(0);
    expect(JSON.parse(lines[at]!).snapshot.extensions.population.feed).toMatchObject({ step: 44, base: 42 });
    writeFileSync(join(dir, 'journal.jsonl'), lines.slice(0, at + 1).join('\n') + '\n');
    expect(steps(dir)).toHaveLength(44);
    expect(await quietStderr(() => resumeCommand({ dir, json: false, quiet: true }))).toBe(0);
    expect(steps(dir)).toEqual(steps(whole));
  }, 240_000);

  it('a fork before step 30 rebuilds the visit from the whole save of step 21, read from disk, to the same steps after it', async () => {
    const out = join(root, 'fork');
    expect(await quietStderr(() => forkCommand({ dir: whole, step: 30, out, json: false, quiet: true }))).toBe(0);
    const forked = onlyDir(out);
    const after = (d: string) => steps(d).filter(([step]) => step >= 30);
    expect(after(forked)).toHaveLength(STEPS - 29);
    expect(after(forked)).toEqual(after(whole));
  }, 240_000);
});
