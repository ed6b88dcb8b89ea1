// Resume and fork, in process: a run stopped at a turn boundary, a turn broken off in the middle
// (its LLM replies and human answer are reused, not asked again), forks, and run listings.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { forkCommand } from '../src/apps/cli/fork-command.js';
import { resumeCommand } from '../src/apps/cli/resume-command.js';
import { runCommand, type RunCommandOptions } from '../src/apps/cli/run-command.js';
import { listRuns } from '../src/apps/cli/runs-command.js';
import { loadPricing } from '../src/core/llm/pricing.js';
import { showCommand } from '../src/apps/cli/show-command.js';
import { AnswersFileInput } from '../src/core/io/human.js';
import { RunFolder } from '../src/features/journal/run-folder.js';
import { ReplayProvider, readCassette } from '../src/core/llm/cassette.js';
import { loadRunRecord } from '../src/features/journal/record.js';
import { readJournal } from '../src/features/journal/reader.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';

const FIX = resolve('test/fixtures/durable');
const SOP = join(FIX, 'town.sop.json');
const CASSETTE = join(FIX, 'town.cassette.json');
const ANSWERS = join(FIX, 'answers.txt');
const base: Omit<RunCommandOptions, 'out'> = {
  file: SOP,
  llm: `replay:${CASSETTE}`,
  answers: ANSWERS,
  seed: 7,
  inputs: [],
  json: false,
  quiet: true,
};

let root: string;
let reference: { md: string; jsonl: string; usage: string };

function folderIn(out: string): string {
  const dirs = readdirSync(out).filter((d) => !d.endsWith('.tmp'));
  expect(dirs).toHaveLength(1);
  return join(out, dirs[0]!);
}

/** Transcripts without run id, start time and message timestamps. */
function transcripts(dir: string) {
  const md = readFileSync(join(dir, 'transcript.md'), 'utf8');
  return {
    md: md.slice(md.indexOf('\n## ')),
    jsonl: readFileSync(join(dir, 'transcript.jsonl'), 'utf8').replace(/"timestamp":"[^"]*"/g, ''),
    usage: readFileSync(join(dir, 'usage.json'), 'utf8'),
  };
}

/** A run of the fixture in process, with extra listeners that may stop or break it. */
async function runInProcess(out: string, extra: (run: Run) => (e: RunEvent) => void, cassette = CASSETTE) {
  const { sop } = loadSopFile(SOP);
  const folder = new RunFolder(out, 'inproc', undefined);
  // eslint-disable-next-line prefer-const -- declared before the hook that reads it, assigned once the run exists
  let run: Run | undefined;
  const hook = (e: RunEvent) => extra(run!)(e);
  run = new Run({
    sop,
    file: SOP,
    llm: new ReplayProvider(cassette),
    human: new AnswersFileInput(ANSWERS),
    seed: 7,
    stream: false,
    listeners: [folder.onEvent, hook],
    launch: { llm: `replay:${cassette}`, answers: ANSWERS },
    pricing: loadPricing(), // priced as the CLI prices a replay
  });
  const result = await run.run();
  folder.close();
  return { result, dir: folder.dir };
}

const quietStderr = () => vi.spyOn(process.stderr, 'write').mockImplementation(() => true);

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sop-resume-'));
  const spy = quietStderr();
  try {
    expect(await runCommand({ ...base, out: join(root, 'ref') })).toBe(0);
  } finally {
    spy.mockRestore();
  }
  reference = transcripts(folderIn(join(root, 'ref')));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('resume', () => {
  it('continues a run stopped at a turn boundary (as after Ctrl-C) to the uninterrupted transcript', async () => {
    const out = join(root, 'stop');
    const { result, dir } = await runInProcess(out, (run) => (e) => {
      if (e.type === 'checkpoint' && e.turn === 12) run.requestStop();
    });
    expect(result.status).toBe('interrupted');
    expect(result.turns).toBe(12);
    expect(loadRunRecord(dir).status).toBe('interrupted');
    const spy = quietStderr();
    try {
      expect(await resumeCommand({ dir, json: false, quiet: true })).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(transcripts(dir)).toEqual(reference);
    expect(loadRunRecord(dir).status).toBe('finished');
  });

  it('reuses the journaled LLM replies and human answer of a turn broken off in the middle', async () => {
    // Break the run right after the first human answer is journaled; the resumed run must not
    // ask for it again, and must take the broken turn's LLM replies from the journal: the
    // cassette used to resume has those replies changed, and they must not appear.
    const out = join(root, 'broken');
    let humanTurn = 0;
    const { result, dir } = await runInProcess(out, () => (e) => {
      if (e.type === 'message' && e.message.kind === 'human') {
        humanTurn = e.message.turn;
        throw new Error('simulated crash');
      }
    });
    expect(result.status).toBe('failed');
    const journal = readJournal(dir).events;
    const last = [...journal].reverse().find((e) => e.type === 'checkpoint') as Extract<RunEvent, { type: 'checkpoint' }>;
    const partial = journal.slice(journal.indexOf(last)).filter((e) => e.type === 'llm_call');
    expect(partial.length).toBeGreaterThan(0);

    const cassette = readCassette(CASSETTE);
    const cursor = last.snapshot.llm_cursor!;
    for (let i = 0; i < partial.length; i++) cassette.interactions[cursor + i]!.response = 'CHANGED REPLY <end>1</end>';
    const changed = join(root, 'changed.cassette.json');
    writeFileSync(changed, JSON.stringify(cassette));

    const spy = quietStderr();
    try {
      expect(await resumeCommand({ dir, llm: `replay:${changed}`, json: false, quiet: true })).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(transcripts(dir)).toEqual(reference);
    const all = readJournal(dir).events;
    const humanDone = all.filter(
      (e): e is Extract<RunEvent, { type: 'effect_finished' }> => e.type === 'effect_finished' && e.kind === 'human',
    );
    const reused = humanDone.filter((e) => e.reused);
    expect(reused).toHaveLength(1);
    expect(reused[0]!.turn).toBe(humanTurn);
    // Every human answer was asked exactly once: one performed answer per human message.
    const humanMessages = readFileSync(join(dir, 'transcript.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l.includes('"kind":"human"'));
    expect(humanDone.filter((e) => !e.reused)).toHaveLength(humanMessages.length);
  });

  it('starts over a run killed between run_started and its first checkpoint', async () => {
    const started = loadRunRecord(folderIn(join(root, 'ref'))).started;
    const dir = join(root, 'early', 'early-run');
    (await import('node:fs')).mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'journal.jsonl'), `${JSON.stringify(started)}\n{"type":"checkpoint","tu`);
    expect(loadRunRecord(dir).status).toBe('killed');
    const spy = quietStderr();
    try {
      expect(await resumeCommand({ dir, json: false, quiet: true })).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(transcripts(dir)).toEqual(reference);
  });

  it('says there is nothing to do for a finished run, and rebuilds its derived files', async () => {
    const dir = folderIn(join(root, 'ref'));
    const before = transcripts(dir);
    writeFileSync(join(dir, 'transcript.md'), 'damaged');
    const spy = quietStderr();
    try {
      expect(await resumeCommand({ dir, json: false, quiet: true })).toBe(0);
      expect(spy.mock.calls.map((c) => String(c[0])).join('')).toMatch(/already finished.*nothing to resume/);
    } finally {
      spy.mockRestore();
    }
    expect(transcripts(dir)).toEqual(before);
  });

  it('continues a run that hit --max-turns only with a larger limit', async () => {
    const out = join(root, 'limit');
    const spy = quietStderr();
    try {
      expect(await runCommand({ ...base, out, maxTurns: 8 })).toBe(0);
      const dir = folderIn(out);
      expect(loadRunRecord(dir).status).toBe('max_turns');
      expect(await resumeCommand({ dir, json: false, quiet: true })).toBe(1);
      expect(await resumeCommand({ dir, maxTurns: 200, json: false, quiet: true })).toBe(0);
      expect(transcripts(dir)).toEqual(reference);
    } finally {
      spy.mockRestore();
    }
  });
});

describe('fork', () => {
  it('branches from a turn: the same cassette gives the same run, another LLM a new ending', async () => {
    const original = folderIn(join(root, 'ref'));
    const same = join(root, 'fork-same');
    const other = join(root, 'fork-mock');
    const spy = quietStderr();
    try {
      expect(await forkCommand({ dir: original, at: 10, out: same, json: false, quiet: true })).toBe(0);
      expect(await forkCommand({ dir: original, at: 10, out: other, llm: 'mock', json: false, quiet: true })).toBe(0);
      await expect(forkCommand({ dir: original, at: 99, out: other, json: false, quiet: true })).rejects.toThrow(
        /no turn boundary at turn 99/,
      );
    } finally {
      spy.mockRestore();
    }
    const forked = folderIn(same);
    expect(transcripts(forked)).toEqual(reference);
    const record = loadRunRecord(forked);
    expect(record.started.forked_from).toMatchObject({ run_id: loadRunRecord(original).started.run_id, turn: 10 });
    expect(readFileSync(join(forked, 'transcript.md'), 'utf8')).toMatch(/, LLM: replay, seed \d+\.\n\nForked from run `.*` at turn 10\.\n/);
    // a branch on another LLM is named by it (sop show, transcript.md), with the LLM of the turns it took over
    expect(readFileSync(join(folderIn(other), 'transcript.md'), 'utf8')).toMatch(
      /, LLM: mock, seed \d+\.\n\nForked from run `.*` at turn 10 \(turns up to there: LLM replay\)\.\n/,
    );

    const mocked = readFileSync(join(folderIn(other), 'transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn: number; content: string });
    const ref = readFileSync(join(original, 'transcript.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turn: number; content: string });
    expect(mocked.filter((m) => m.turn <= 10).map((m) => m.content)).toEqual(ref.filter((m) => m.turn <= 10).map((m) => m.content));
    expect(mocked.filter((m) => m.turn > 10).some((m) => m.content.startsWith('[mock]'))).toBe(true);
  });
});

describe('runs and show', () => {
  it('lists statuses from the journals and shows a transcript derived from the journal', async () => {
    const out = join(root, 'list');
    const spy = quietStderr();
    try {
      await runCommand({ ...base, out });
      await runCommand({ ...base, out, maxTurns: 3 });
    } finally {
      spy.mockRestore();
    }
    // A killed run: a journal that stops after a checkpoint, with no end.
    const done = loadRunRecord(folderIn(join(root, 'ref')));
    const cut = done.effective.findIndex((e) => e.type === 'checkpoint' && e.turn === 5);
    const killed = join(out, 'killed-run');
    (await import('node:fs')).mkdirSync(killed);
    writeFileSync(
      join(killed, 'journal.jsonl'),
      done.effective
        .slice(0, cut + 3)
        .map((e) => JSON.stringify(e))
        .join('\n') + '\n{"type":"mess',
    );
    writeFileSync(join(out, 'not-a-run.txt'), '');

    const runs = listRuns(out);
    expect(runs.map((r) => r.status).sort()).toEqual(['finished', 'killed', 'max_turns']);
    expect(runs.find((r) => r.status === 'killed')!.turns).toBe(5);

    const dir = runs.find((r) => r.status === 'finished')!.dir;
    let printed = '';
    const out1 = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      printed += String(s);
      return true;
    });
    try {
      showCommand({ dir, format: 'markdown' });
    } finally {
      out1.mockRestore();
    }
    // Written to a file, text is UTF-8 (a lone surrogate in a reply becomes U+FFFD), as on a terminal.
    expect(Buffer.from(printed, 'utf8').toString('utf8')).toBe(readFileSync(join(dir, 'transcript.md'), 'utf8'));
  });
});
