// A run as its journal tells it: how it started, its effective history, its checkpoints, its
// status, and the point a resume or a fork continues from.
import { miscountWarning } from './line-count.js';
import type { Message } from '../../core/environment/message.js';
import type { RunEvent } from '../../core/runtime/events.js';
import { indexEffects } from './effects.js';
import { lockHolder } from './lock.js';
import { lostCalls } from './lost-calls.js';
import { JournalError, effectiveHistory, readJournal } from './reader.js';
import { snapshotProblem, type ResumeFrom, type RunSnapshot } from './snapshot.js';

export type RunStartedEvent = Extract<RunEvent, { type: 'run_started' }>;
export type RunFinishedEvent = Extract<RunEvent, { type: 'run_finished' }>;
export type CheckpointEvent = Extract<RunEvent, { type: 'checkpoint' }>;

/** finished / max_turns / failed / interrupted from the journal; running or killed when it has no end. */
export type RunStatusName = RunFinishedEvent['status'] | 'running' | 'killed';

export interface RunRecord {
  dir: string;
  started: RunStartedEvent;
  /** Every line of the journal (what a resume may reuse). */
  all: RunEvent[];
  /** The history that counts (see effectiveEvents). */
  effective: RunEvent[];
  /** Positions in `effective` of the checkpoints, by turn. */
  checkpoints: Map<number, number>;
  finished?: RunFinishedEvent;
  status: RunStatusName;
  /** Turns taken (the last checkpoint's turn, or the finish's). */
  turns: number;
  /** A torn last line was dropped. */
  torn: boolean;
  /** Pid of the process writing it, when one is running. */
  runningPid?: number;
  /**
   * The first damaged line (or checkpoint that does not match the journal) of the effective
   * history: everything from the last good checkpoint before it on is left out of `effective`.
   */
  damage?: JournalDamage;
  /** Warnings about lines duplicated or deleted since the run wrote them (./line-count.ts). */
  lineWarnings: string[];
}

export interface JournalDamage {
  file: string;
  line: number;
  reason: string;
  /** Turn of the last good checkpoint before it (what a resume or a show continues from). */
  turn: number;
  /** Events of the effective history left out after that checkpoint. */
  dropped: number;
}

/** The warning readers print about a damaged journal. */
export function damageWarning(d: JournalDamage): string {
  return (
    `warning: ${d.file}:${d.line}: ${d.reason}; using the last good checkpoint before it (turn ${d.turn}); ` +
    `${d.dropped} later event${d.dropped === 1 ? '' : 's'} of the journal ${d.dropped === 1 ? 'is' : 'are'} ignored`
  );
}

/**
 * Why a checkpoint cannot be trusted, if it cannot: its snapshot is incomplete, or its turn or
 * message count does not match the journal before it (a hand-edited or damaged checkpoint).
 * `messages` undefined: the message count is not checked (a reader that does not count them).
 */
export function checkpointProblem(c: CheckpointEvent, expectedTurn: number, messages?: number): string | undefined {
  const problem = snapshotProblem(c.snapshot);
  if (problem) return `checkpoint cannot be restored: ${problem}`;
  if (c.turn !== expectedTurn) return `checkpoint says turn ${c.turn}, but by the journal before it, it is turn ${expectedTurn}`;
  const s = c.snapshot;
  if (s.position.turn !== c.turn) return `checkpoint of turn ${c.turn} holds a snapshot of turn ${s.position.turn}`;
  if (messages !== undefined && s.environment.messages !== messages)
    return `checkpoint at turn ${c.turn} counts ${s.environment.messages} messages but the journal holds ${messages} before it`;
  return undefined;
}

/**
 * Read a run folder's journal. `ownLock`: this process took the folder's lock before reading (a
 * resume), so the lock does not mean the run is still running. A checkpoint's extensions (a
 * population visit's whole save) on a line of LAZY_CHECKPOINT_BYTES or more are not held: reading
 * them reads their line of the journal again. `stepsOnDisk`: nor are a long population step's
 * actions (for readers that never use them, or once: a transcript, a summary).
 */
export function loadRunRecord(dir: string, o: { ownLock?: boolean; stepsOnDisk?: boolean } = {}): RunRecord {
  // a long checkpoint's extensions (a population's whole save) stay on disk until used
  const read = readJournal(dir, { lazy: true, lazySteps: o.stepsOnDisk === true });
  const { events, torn } = read;
  const history = effectiveHistory(read);
  let effective = history.events;
  // The first place the history cannot be trusted from: a damaged line, or a checkpoint whose
  // turn or counts do not match the journal. Checkpoints before it are checked in order.
  let bad: { index: number; line: number; reason: string } | undefined = history.damaged[0]
    ? { index: history.damaged[0].index, line: history.damaged[0].line, reason: history.damaged[0].reason }
    : undefined;
  let lastGood = -1;
  let turns = 0;
  let messages = 0;
  for (let i = 0; i < (bad?.index ?? effective.length); i++) {
    const e = effective[i]!;
    if (e.type === 'message') messages++;
    if (e.type !== 'checkpoint') continue;
    const problem = checkpointProblem(e, turns, messages);
    if (problem) {
      bad = { index: i, line: history.lines[i]!, reason: problem };
      break;
    }
    lastGood = i;
    turns++;
  }
  let damage: JournalDamage | undefined;
  if (bad) {
    if (bad.index === 0)
      throw new JournalError(`${read.file}:${bad.line}: ${bad.reason}; the run's first line is lost, so there is nothing to continue`);
    const keep = lastGood >= 0 ? lastGood + 1 : 1; // no good checkpoint: start over from run_started
    const last = lastGood >= 0 ? (effective[lastGood] as CheckpointEvent) : undefined;
    damage = { file: read.file, line: bad.line, reason: bad.reason, turn: last?.turn ?? 0, dropped: effective.length - keep };
    effective = effective.slice(0, keep);
  }
  const first = effective[0];
  if (!first || first.type !== 'run_started') {
    throw new JournalError(
      `${dir}: the journal does not start with run_started; the run was killed before it began, so there is nothing to resume`,
    );
  }
  const checkpoints = new Map<number, number>();
  effective.forEach((e, i) => {
    if (e.type === 'checkpoint') checkpoints.set(e.turn, i);
  });
  const last = effective[effective.length - 1]!;
  const finished = last.type === 'run_finished' ? last : undefined;
  const holder = finished || o.ownLock ? undefined : lockHolder(dir);
  let lastTurn = 0;
  for (const t of checkpoints.keys()) lastTurn = Math.max(lastTurn, t);
  return {
    dir,
    started: first,
    all: events,
    effective,
    checkpoints,
    finished,
    status: finished ? finished.status : holder ? 'running' : 'killed',
    turns: finished ? finished.turns : lastTurn,
    torn,
    runningPid: holder?.pid,
    ...(damage ? { damage } : {}),
    lineWarnings: read.miscounts.map((m) => miscountWarning(read.file, m)),
  };
}

export interface ContinuePoint {
  /** Turn of the checkpoint continued from. */
  turn: number;
  /** Absent for a run killed before its first checkpoint (it starts over). */
  checkpoint?: CheckpointEvent;
  /** Effective events up to and including that checkpoint. */
  history: RunEvent[];
  resume: ResumeFrom;
  /** Content of run files (memory files) as they were at that checkpoint, by path. */
  files: Map<string, string>;
}

/**
 * The state at a checkpoint: the last one (resume) or the one at `turn` (fork). A resume reuses
 * the journal's effect results; a fork starts without them (it is a new branch).
 */
export function continuePoint(record: RunRecord, mode: 'resume' | 'fork', turn?: number): ContinuePoint {
  const turns = [...record.checkpoints.keys()].sort((a, b) => a - b);
  if (turns.length === 0 && (turn ?? 0) === 0) {
    // Killed before its first checkpoint: run_started says everything needed to start over.
    return {
      turn: 0,
      history: [record.started],
      files: new Map(),
      resume: {
        mode,
        messages: [],
        effects: mode === 'resume' ? indexEffects(record.all) : undefined,
        files: {},
        ...(mode === 'resume' ? lostOf(lostCalls(record.all)) : {}),
      },
    };
  }
  const at = turn ?? turns[turns.length - 1]!;
  const index = record.checkpoints.get(at);
  if (index === undefined) {
    throw new JournalError(
      `${record.dir}: no turn boundary at turn ${at}; this run has checkpoints at turns ${describeTurns(turns)}` +
        (record.damage ? ` (its journal is damaged at line ${record.damage.line}; later turns cannot be used)` : ''),
    );
  }
  const checkpoint = record.effective[index] as CheckpointEvent;
  const problem = snapshotProblem(checkpoint.snapshot);
  if (problem) throw new JournalError(`${record.dir}: checkpoint at turn ${at} cannot be restored: ${problem}`);
  const history = record.effective.slice(0, index + 1);
  const messages: Message[] = [];
  const files = new Map<string, string>();
  for (const e of history) {
    if (e.type === 'message') messages.push(e.message);
    else if (e.type === 'file_written') files.set(e.path, e.content);
  }
  const snapshot: RunSnapshot = checkpoint.snapshot;
  if (messages.length !== snapshot.environment.messages) {
    throw new JournalError(
      `${record.dir}: checkpoint at turn ${at} counts ${snapshot.environment.messages} messages but the journal holds ${messages.length} before it; the journal is inconsistent`,
    );
  }
  return {
    turn: at,
    checkpoint,
    history,
    files,
    resume: {
      mode,
      snapshot,
      messages,
      effects: mode === 'resume' ? indexEffects(record.all) : undefined,
      files: Object.fromEntries(files),
      history,
      // calls a kill lost after this checkpoint (in file order: every attempt since)
      ...(mode === 'resume' ? lostOf(lostCalls(record.all.slice(record.all.indexOf(checkpoint) + 1))) : {}),
    },
  };
}

function lostOf(lost: ReturnType<typeof lostCalls>): { lost?: typeof lost } {
  return lost.length > 0 ? { lost } : {};
}

function describeTurns(turns: number[]): string {
  if (turns.length <= 12) return turns.join(', ');
  return `${turns.slice(0, 5).join(', ')}, ..., ${turns.slice(-5).join(', ')}`;
}
