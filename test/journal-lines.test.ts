// Issue 23 (low items): a duplicated or deleted journal line draws a warning. Each checkpoint line
// carries how many lines were written before it (src/features/journal/line-count.ts); readers count again.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readJournal } from '../src/features/journal/reader.js';
import { runCli } from './helpers/cli.js';
import { runFolderIn } from './helpers/golden.js';

async function debateRun(extra: string[] = []): Promise<string> {
  const out = mkdtempSync(join(tmpdir(), 'sop-lines-'));
  const r = await runCli([
    'run',
    'examples/debate/debate.sop.json',
    '--llm',
    'replay:examples/debate/debate.cassette.json',
    '--out',
    out,
    '--quiet',
    ...extra,
  ]);
  expect(r.stderr).toContain('Run folder:');
  return runFolderIn(out);
}

/** The journal's lines, and the 1-based number of the n-th line of a type. */
function lines(dir: string): { all: string[]; nth: (type: string, n: number) => number } {
  const all = readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n');
  const nth = (type: string, n: number) => {
    let seen = 0;
    for (let i = 0; i < all.length; i++) if (all[i]!.startsWith(`{"type":"${type}"`) && ++seen === n) return i + 1;
    throw new Error(`no ${type} line ${n}`);
  };
  return { all, nth };
}

describe('duplicated and deleted journal lines', () => {
  it('a journal as written draws no warning, and its checkpoints read as the events the run emitted (no count field)', async () => {
    const dir = await debateRun();
    const show = await runCli(['show', dir]);
    expect(show.status, show.stderr).toBe(0);
    expect(show.stderr).not.toMatch(/duplicated or deleted/);
    const read = readJournal(dir);
    expect(read.miscounts).toEqual([]);
    const checkpoints = read.events.filter((e) => e.type === 'checkpoint');
    expect(checkpoints.length).toBeGreaterThan(5);
    for (const c of checkpoints) expect(Object.keys(c)).toEqual(['type', 'turn', 'snapshot']);
    expect(readFileSync(join(dir, 'journal.jsonl'), 'utf8')).toMatch(/"lines":\d+\}\n/);
  });

  it('a duplicated line: sop show and sop resume name the checkpoint after it', async () => {
    const dir = await debateRun(['--max-turns', '6']);
    const { all, nth } = lines(dir);
    const at = nth('speaker_chosen', 3);
    all.splice(at, 0, all[at - 1]!); // the line again, right after itself
    writeFileSync(join(dir, 'journal.jsonl'), all.join('\n'));
    const checkpointLine = lines(dir).all.findIndex((l, i) => i >= at && l.startsWith('{"type":"checkpoint"')) + 1;
    const show = await runCli(['show', dir]);
    expect(show.stderr).toContain(
      `journal.jsonl:${checkpointLine}: the journal holds 1 more line before this checkpoint than were written`,
    );
    expect(show.stderr.match(/duplicated or deleted/g)).toHaveLength(1);
    const resume = await runCli(['resume', dir, '--llm', 'replay:examples/debate/debate.cassette.json', '--quiet']);
    expect(resume.stderr).toContain(`journal.jsonl:${checkpointLine}: the journal holds 1 more line`);
  });

  it('a deleted line: one warning naming the checkpoint after it', async () => {
    const dir = await debateRun();
    const { all, nth } = lines(dir);
    const at = nth('speaker_chosen', 5);
    all.splice(at - 1, 1);
    writeFileSync(join(dir, 'journal.jsonl'), all.join('\n'));
    const checkpointLine = lines(dir).all.findIndex((l, i) => i >= at - 1 && l.startsWith('{"type":"checkpoint"')) + 1;
    const show = await runCli(['show', dir]);
    expect(show.stderr).toContain(
      `journal.jsonl:${checkpointLine}: the journal holds 1 fewer line before this checkpoint than were written`,
    );
  });
});
