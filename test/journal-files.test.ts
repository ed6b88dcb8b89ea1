// The journal on disk: torn last lines, damaged lines, the effective history after resumes,
// and the one-writer lock.
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { acquireRunLock, lockHolder, LOCK_FILE } from '../src/features/journal/lock.js';
import { JournalError, effectiveEvents, parseJournal, readJournal } from '../src/features/journal/reader.js';
import { JOURNAL_FILE, JournalWriter, SLOW_CALL_MS } from '../src/features/journal/writer.js';
import type { RunEvent } from '../src/core/runtime/events.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sop-journal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const warning = (message: string): RunEvent => ({ type: 'warning', message });
const checkpoint = (turn: number): RunEvent => ({ type: 'checkpoint', turn, snapshot: {} as never });
const resumed = (from_turn: number): RunEvent => ({ type: 'resumed', mode: 'resume', from_turn, time: '' });

describe('reading a journal', () => {
  it('drops a torn last line and reports it, without failing', () => {
    const text = `${JSON.stringify(warning('a'))}\n${JSON.stringify(warning('b'))}\n{"type":"mess`;
    const read = parseJournal(text);
    expect(read.torn).toBe(true);
    expect(read.events.map((e) => (e as { message: string }).message)).toEqual(['a', 'b']);
  });

  it('treats an unterminated last line as torn even when it happens to parse', () => {
    const read = parseJournal(`${JSON.stringify(warning('a'))}\n${JSON.stringify(warning('b'))}`);
    expect(read.torn).toBe(true);
    expect(read.events).toHaveLength(1);
  });

  it('names the line of a damaged line in the middle, and keeps reading (readers use the last good checkpoint before it)', () => {
    const text = `${JSON.stringify(warning('a'))}\n{oops\n${JSON.stringify(warning('c'))}\n`;
    const read = parseJournal(text, 'j.jsonl');
    expect(read.damaged).toEqual([{ line: 2, at: 1, reason: expect.stringMatching(/^damaged line/) }]);
    expect(read.events.map((e) => (e as { message: string }).message)).toEqual(['a', 'c']);
    expect(read.lines).toEqual([1, 3]);
    expect(parseJournal('[1]\n', 'j.jsonl').damaged).toEqual([{ line: 1, at: 0, reason: 'not a journal event (no "type")' }]);
  });

  it('explains a folder without a journal', () => {
    expect(() => readJournal(dir)).toThrow(JournalError);
    expect(() => readJournal(dir)).toThrow(/no journal\.jsonl here/);
  });

  it('cuts the history back to the checkpoint a resume continued from', () => {
    const events: RunEvent[] = [
      checkpoint(0),
      warning('t1'),
      checkpoint(1),
      warning('t2 partial'),
      warning('t2 more'),
      resumed(1),
      warning('t2 again'),
      checkpoint(2),
      warning('t3 partial'),
      resumed(2),
      warning('t3 again'),
      checkpoint(3),
    ];
    const eff = effectiveEvents(events).map((e) => (e.type === 'checkpoint' ? `cp${e.turn}` : (e as { message: string }).message));
    expect(eff).toEqual(['cp0', 't1', 'cp1', 't2 again', 'cp2', 't3 again', 'cp3']);
    expect(() => effectiveEvents([checkpoint(0), resumed(4)])).toThrow(/no checkpoint at that turn/);
  });
});

describe('writing a journal', () => {
  it('cuts a torn tail before appending, so new lines never glue onto a fragment', () => {
    const file = join(dir, JOURNAL_FILE);
    writeFileSync(file, `${JSON.stringify(warning('kept'))}\n{"type":"warning","mess`);
    const w = new JournalWriter(file);
    expect(w.cut).toBe('{"type":"warning","mess'.length);
    w.append(warning('after'));
    w.append({ type: 'delta', agent: 'x', text: 'not journaled' });
    w.close();
    const read = readJournal(dir);
    expect(read.torn).toBe(false);
    expect(read.events.map((e) => (e as { message: string }).message)).toEqual(['kept', 'after']);
  });

  it('redacts each line as it is written', () => {
    const file = join(dir, JOURNAL_FILE);
    const w = new JournalWriter(file, (t) => t.split('hunter2-secret').join('[REDACTED]'));
    w.append(warning('the key is hunter2-secret'));
    w.close();
    expect(readFileSync(file, 'utf8')).toContain('the key is [REDACTED]');
  });

  it('a journal made only of a torn line is emptied', () => {
    const file = join(dir, JOURNAL_FILE);
    writeFileSync(file, '{"type":"run_sta');
    new JournalWriter(file).close();
    expect(readFileSync(file, 'utf8')).toBe('');
  });

  it('keeps a long journal whole when its last line is complete', () => {
    const file = join(dir, JOURNAL_FILE);
    const big = 'x'.repeat(200_000);
    appendFileSync(file, `${JSON.stringify(warning(big))}\n`);
    const w = new JournalWriter(file);
    expect(w.cut).toBe(0);
    w.close();
    expect(readJournal(dir).events).toHaveLength(1);
  });
});

describe('writing a journal a step at a time', () => {
  const file = () => join(dir, JOURNAL_FILE);
  const onDisk = () => readJournal(dir).events.map((e) => (e.type === 'warning' ? e.message : e.type));
  const llmCall = (ms: number, effect: string): RunEvent => ({
    type: 'llm_call',
    purpose: 'agent',
    state: 's',
    agent: 'Ada',
    turn: 1,
    model: 'm',
    usage: { promptTokens: 1, completionTokens: 1 },
    ms,
    prompt_chars: 1,
    reply: 'hi',
    effect,
  });

  it("writes a step's lines at its checkpoint; a kill before it leaves the previous step whole", () => {
    const w = new JournalWriter(file());
    w.append(warning('t1 a'));
    w.append(warning('t1 b'));
    expect(readFileSync(file(), 'utf8')).toBe(''); // not written yet: a kill here loses the step in progress only
    expect(w.append(checkpoint(1))).toBe(true);
    expect(onDisk()).toEqual(['t1 a', 't1 b', 'checkpoint']);
    w.append(warning('t2 a'));
    expect(onDisk()).toEqual(['t1 a', 't1 b', 'checkpoint']);
    w.close(); // a run stopped between checkpoints writes what its step holds
    expect(onDisk()).toEqual(['t1 a', 't1 b', 'checkpoint', 't2 a']);
  });

  it('writes at once, with the lines before it, what a side effect needs on disk before it happens', () => {
    const w = new JournalWriter(file());
    w.append(warning('before'));
    w.append({ type: 'effect_started', key: '0.0', kind: 'code', label: 'run_code', turn: 1 });
    expect(onDisk()).toEqual(['before', 'effect_started']);
    w.append(warning('after'));
    w.append({ type: 'effect_finished', key: '0.0', kind: 'code', label: 'run_code', turn: 1, result: { ok: true } });
    expect(onDisk()).toEqual(['before', 'effect_started', 'after', 'effect_finished']);
    w.close();
  });

  it('a sub-flow checkpoint ends a step too, and its side effects are written before they happen', () => {
    const w = new JournalWriter(file());
    w.append({ type: 'subflow', flow: 'Coder-1', event: warning('inside') });
    w.append({
      type: 'subflow',
      flow: 'Coder-1',
      event: { type: 'effect_started', key: 'Coder-1/0.0', kind: 'code', label: 'x', turn: 0 },
    });
    expect(readJournal(dir).events).toHaveLength(2);
    w.append({ type: 'subflow', flow: 'Coder-1', event: warning('later') });
    w.append({ type: 'subflow', flow: 'Coder-1', event: checkpoint(1) });
    expect(readJournal(dir).events).toHaveLength(4);
    w.close();
  });

  it('writes a slow LLM call soon after it returns; a fast one waits for the checkpoint', async () => {
    const w = new JournalWriter(file());
    w.append(llmCall(1, '0.0'));
    await new Promise((r) => setImmediate(r));
    expect(onDisk()).toEqual([]);
    w.append(llmCall(SLOW_CALL_MS, '0.1'));
    expect(onDisk()).toEqual([]);
    await new Promise((r) => setImmediate(r));
    expect(onDisk()).toEqual(['llm_call', 'llm_call']); // a resume reuses both replies
    w.close();
  });

  it('writes run_started at once, so a run killed in its first turn starts over', () => {
    const w = new JournalWriter(file());
    w.append({ type: 'run_started' } as RunEvent);
    expect(onDisk()).toEqual(['run_started']);
    w.close();
  });
});

describe('the run folder lock', () => {
  it('lets one process write; a live holder stops a second writer, a dead one is taken over', async () => {
    const release = acquireRunLock(dir);
    expect(lockHolder(dir)?.pid).toBe(process.pid);
    release();
    expect(lockHolder(dir)).toBeUndefined();

    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    await new Promise((r) => child.once('spawn', r));
    writeFileSync(join(dir, LOCK_FILE), JSON.stringify({ pid: child.pid, host: (await import('node:os')).hostname(), time: 'now' }));
    expect(() => acquireRunLock(dir)).toThrow(new RegExp(`in use by process ${child.pid}`));
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const again = acquireRunLock(dir);
    expect(lockHolder(dir)?.pid).toBe(process.pid);
    again();
  });
});
