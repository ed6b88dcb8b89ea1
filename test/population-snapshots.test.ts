// A population visit is saved whole in a checkpoint only every 50 steps (src/features/population/snapshots.ts);
// in between a checkpoint says where it stands, and a resume rebuilds it from the last whole save
// (or the visit's start) and the journaled steps after it. A run cut after a checkpoint, as a
// SIGKILL leaves it, then resumed, has the steps of an uninterrupted run: the same actions, in
// the same order, with the same outcomes, and the same metrics.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resumeCommand } from '../src/apps/cli/resume-command.js';
import { runCommand } from '../src/apps/cli/run-command.js';
import { quietStderr } from './helpers/quiet.js';
import { zicMarketSop } from './helpers/zic-market-sop.js';

const STEPS = 56;
let root: string;
let sopFile: string;

type Line = {
  type: string;
  turn?: number;
  step?: number;
  metrics?: unknown;
  actions?: unknown;
  snapshot?: { extensions?: { population?: Record<string, { world?: unknown; base?: number; step: number }> } };
};
/** The journal's complete lines (a torn last one, as a kill leaves it, is not a line). */
const linesOf = (dir: string) => readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n').slice(0, -1);
const events = (dir: string): Line[] => linesOf(dir).map((l) => JSON.parse(l) as Line);
const onlyDir = (out: string) => join(out, readdirSync(out).filter((d) => !d.endsWith('.tmp'))[0]!);
/** The steps as the effective history has them (the events of a resumed attempt after its checkpoint are void, and the resume redoes them). */
function steps(dir: string) {
  const out = new Map<number, { actions: unknown; metrics: unknown }>();
  for (const e of events(dir)) if (e.type === 'population_step') out.set(e.step!, { actions: e.actions, metrics: e.metrics });
  return [...out.entries()].sort((a, b) => a[0] - b[0]);
}

/** The run folder as a kill right after the checkpoint of `turn` leaves it (and a torn half line after it). */
function cutAfterCheckpoint(dir: string, turn: number): void {
  const lines = linesOf(dir);
  const at = lines.findIndex((l) => (JSON.parse(l) as Line).type === 'checkpoint' && (JSON.parse(l) as Line).turn === turn);
  expect(at).toBeGreaterThan(0);
  const keep = lines.slice(0, at + 1).join('\n') + '\n';
  writeFileSync(join(dir, 'journal.jsonl'), keep + lines[at + 1]!.slice(0, 20));
}

const run = (out: string) =>
  quietStderr(() => runCommand({ file: sopFile, llm: 'mock', seed: 3, inputs: [], json: false, quiet: true, out }));

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'sop-pop-snapshots-'));
  sopFile = join(root, 'market.sop.json');
  writeFileSync(sopFile, JSON.stringify(zicMarketSop({ name: 'market-snapshots', n: 40, steps: STEPS })));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('population checkpoints', () => {
  let reference: ReturnType<typeof steps>;
  let whole: string;
  beforeAll(async () => {
    expect(await run(join(root, 'whole'))).toBe(0);
    whole = onlyDir(join(root, 'whole'));
    reference = steps(whole);
    expect(reference).toHaveLength(STEPS);
  });

  it('hold the world whole only every 50 steps', () => {
    const saved = events(whole)
      .filter((e) => e.type === 'checkpoint' && e.snapshot?.extensions?.population?.trading)
      .map((e) => e.snapshot!.extensions!.population!.trading!);
    expect(saved.filter((v) => v.world !== undefined).map((v) => v.step)).toEqual([50]);
    expect(saved.find((v) => v.step === 30)).toMatchObject({ base: 0 });
    expect(saved.find((v) => v.step === 53)).toMatchObject({ base: 50 });
  });

  it.each([
    ['from the visit start', 20],
    ['from the whole save of step 50', 53],
  ])('a run killed after step %s resumes to the steps of an uninterrupted run (%i)', async (_label, turn) => {
    const out = join(root, `cut-${turn}`);
    expect(await run(out)).toBe(0);
    const dir = onlyDir(out);
    cutAfterCheckpoint(dir, turn);
    expect(steps(dir)).toHaveLength(turn);
    expect(await quietStderr(() => resumeCommand({ dir, json: false, quiet: true }))).toBe(0);
    expect(steps(dir)).toEqual(reference);
  });
});
