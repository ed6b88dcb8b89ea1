// Continuing a journaled run: `sop resume` (same folder, from the last checkpoint, reusing the
// journal's effect results) and `sop fork` (a new folder whose journal is the original's up to
// a turn boundary, then a new branch). Both hand a Continuation to the run command.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, isAbsolute, join, normalize, resolve, sep } from 'node:path';
import type { RunEvent, RunSettings } from '../core/runtime/events.js';
import type { Sop } from '../format/sop/types.js';
import { validateSopDocument } from './loader/checked-load.js';
import { continuePoint, loadRunRecord, type RunRecord } from '../features/journal/record.js';
import { appliedSettings } from '../features/journal/applied-settings.js';
import { JournalError } from '../features/journal/reader.js';
import { RunInUseError, acquireRunLock } from '../features/journal/lock.js';
import type { ResumeFrom } from '../features/journal/snapshot.js';
import { JOURNAL_FILE } from '../features/journal/writer.js';
import { SharedTextWriter } from '../features/journal/shared-text.js';
import type { Redactor } from '../shared/util/redact.js';
import { writeFileAtomic } from '../shared/util/atomic-write.js';
import { renderTranscript } from '../features/journal/transcript.js';
import { usageFileText } from '../features/journal/predicted.js';
import { writeFailure } from '../shared/io/disk-full.js';

export interface Continuation {
  mode: 'resume' | 'fork';
  /** Folder holding the run folder, and the run folder's name. */
  outDir: string;
  runId: string;
  sop: Sop;
  inputs: Record<string, string>;
  seed: number;
  settings: RunSettings;
  /** Effective events already in the run folder's journal (the transcripts are rebuilt from them). */
  history: RunEvent[];
  resume: ResumeFrom;
  /** Turn continued from. */
  fromTurn: number;
  /**
   * The command line of the original run (defaults for LLM, answers, base URL), as the last
   * resume that recorded it left it.
   */
  launch: Record<string, string | number | boolean>;
  /**
   * resume: the run folder's lock, taken before the journal was read (so two resumes of one run
   * cannot both continue from what they read). The run folder takes it over; whoever ends
   * without one calls it (idempotent).
   */
  unlock?: () => void;
}

/** The SOP document a run ran (journaled in its run_started), validated again. */
export function documentOf(record: RunRecord): Sop {
  const doc = record.started.document;
  if (doc === undefined)
    throw new JournalError(`${record.dir}: the journal does not hold the SOP document (written by an older sop); it cannot be continued`);
  // The journaled document was valid when the run started; validating again guards against a damaged journal.
  return validateSopDocument(doc, `${record.dir}/${JOURNAL_FILE}#/document`).sop;
}

function base(record: RunRecord, mode: 'resume' | 'fork', turn?: number) {
  const point = continuePoint(record, mode, turn);
  const started = record.started;
  return {
    point,
    sop: documentOf(record),
    inputs: { ...started.inputs },
    seed: started.seed,
  };
}

/**
 * The rest of an interrupted or killed run, in its own folder. The folder's lock is taken first:
 * of two resumes of one run, the second stops here, and one that comes after the first ended
 * reads what the first wrote.
 */
export function prepareResume(dir: string): { record: RunRecord; continuation: Continuation } {
  const unlock = lockToResume(dir);
  try {
    return resumeOf(dir, unlock);
  } catch (err) {
    unlock?.();
    throw err;
  }
}

/** Take the run folder's lock; undefined when there is no folder to lock (reading it says why). */
function lockToResume(dir: string): (() => void) | undefined {
  if (!existsSync(join(dir, JOURNAL_FILE))) return undefined;
  try {
    return acquireRunLock(dir);
  } catch (err) {
    if (err instanceof RunInUseError) {
      const holder = err.holder;
      throw new JournalError(
        `${dir} is still running (process ${holder.pid}${holder.host !== hostname() ? ` on ${holder.host}` : ''}); ` +
          `stop it first (Ctrl-C), or delete its run.lock if that process is gone`,
      );
    }
    throw err;
  }
}

function resumeOf(dir: string, unlock: (() => void) | undefined): { record: RunRecord; continuation: Continuation } {
  const record = loadRunRecord(dir, { ownLock: unlock !== undefined });
  if (record.status === 'running') {
    throw new JournalError(
      `${dir} is still running (process ${record.runningPid}); stop it first (Ctrl-C), or delete its run.lock if that process is gone`,
    );
  }
  const { point, sop, inputs, seed } = base(record, 'resume');
  const { settings, launch } = appliedSettings(record); // the last resume's settings, else the launch's
  const full = resolve(dir);
  return {
    record,
    continuation: {
      ...(unlock ? { unlock } : {}),
      mode: 'resume',
      outDir: dirname(full),
      runId: basename(full),
      sop,
      inputs,
      seed,
      settings,
      history: point.history,
      resume: point.resume,
      fromTurn: point.turn,
      launch,
    },
  };
}

export interface ForkOptions {
  at: number;
  /** Folder for the new run folder (default: next to the original). */
  out?: string;
  newRunId: string;
  /** The new branch uses the same cassette as the original: continue it from the same interaction. */
  sameLlm: boolean;
  /** Settings and command line of the new branch (recorded in its run_started). */
  settings: RunSettings;
  launch: Record<string, string | number | boolean>;
  redact: Redactor;
}

/** A new run folder holding the original's journal up to turn `at`, ready to continue from there. */
export function prepareFork(dir: string, o: ForkOptions): { record: RunRecord; continuation: Continuation; folder: string } {
  const record = loadRunRecord(dir);
  const { point, sop, inputs, seed } = base(record, 'fork', o.at);
  const outDir = resolve(o.out ?? dirname(resolve(dir)));
  const folder = join(outDir, o.newRunId);
  // the branch's own LLM (`sop show` names it), and the one its first turns came from
  const given = typeof o.launch.llm === 'string' ? o.launch.llm : undefined;
  const llm = o.sameLlm || given === undefined ? record.started.llm : given.startsWith('replay:') ? 'replay' : given;
  const started: RunEvent = {
    ...record.started,
    run_id: o.newRunId,
    time: new Date().toISOString(),
    llm,
    settings: o.settings,
    launch: o.launch,
    forked_from: { run_id: record.started.run_id, dir: resolve(dir), turn: point.turn, llm: record.started.llm },
  };
  const history = [started, ...point.history.slice(1)];
  mkdirSync(folder, { recursive: true });
  const lines = new SharedTextWriter(o.redact); // long texts written once, as the run wrote them
  try {
    writeFileSync(join(folder, JOURNAL_FILE), history.map((e) => lines.line(e) + '\n').join(''));
  } catch (err) {
    throw writeFailure(err, join(folder, JOURNAL_FILE)); // files: a full disk names the file
  }
  for (const [path, content] of point.files) writeRunFile(folder, path, content);
  return {
    record,
    folder,
    continuation: {
      mode: 'fork',
      outDir,
      runId: o.newRunId,
      sop,
      inputs,
      seed,
      settings: o.settings,
      history,
      resume: { ...point.resume, seekLlm: o.sameLlm },
      fromTurn: point.turn,
      launch: o.launch,
    },
  };
}

/** Write a run file journaled by `file_written`, refusing paths that leave the run folder. */
function writeRunFile(folder: string, path: string, content: string): void {
  const clean = normalize(path);
  if (isAbsolute(clean) || clean === '..' || clean.startsWith(`..${sep}`)) {
    throw new JournalError(`journal names run file "${path}", which is outside the run folder`);
  }
  const target = join(folder, clean);
  mkdirSync(dirname(target), { recursive: true });
  try {
    writeFileSync(target, content);
  } catch (err) {
    throw writeFailure(err, target);
  }
}

/**
 * Write the files derived from the journal (transcripts, usage.json) again: a run killed right
 * after its last journal line may not have written them. Used when resuming a finished run.
 */
export function rewriteDerivedFiles(record: RunRecord, redact: Redactor): void {
  const { markdown, jsonl } = renderTranscript(record.effective);
  replaceFile(join(record.dir, 'transcript.md'), redact(markdown));
  replaceFile(join(record.dir, 'transcript.jsonl'), redact(jsonl));
  writeDerivedUsage(record);
}

/** Write usage.json of a finished run again (with the prediction of RUN/plan.json beside it, when there is one). */
export function writeDerivedUsage(record: RunRecord): void {
  if (record.finished) replaceFile(join(record.dir, 'usage.json'), usageFileText(record.dir, record.finished.usage));
}

function replaceFile(file: string, content: string): void {
  try {
    writeFileAtomic(file, content);
  } catch (err) {
    throw writeFailure(err, file);
  }
}
