// sop show RUN_DIR: the transcript of a run, derived from its journal (so it is complete even
// when the process was killed before writing transcript.md).
import { damageWarning, loadRunRecord } from '../../features/journal/record.js';
import { renderTranscript } from '../../features/journal/transcript.js';
import { formatPrompts, promptsOf } from '../../features/journal/recorded-prompts.js';

export interface ShowCommandOptions {
  dir: string;
  /** markdown (default), jsonl (one message per line) or events (the effective journal). */
  format: 'markdown' | 'jsonl' | 'events';
  /** Print the messages each LLM call was sent instead of the transcript, optionally of one turn or agent. */
  prompts?: boolean;
  turn?: number;
  agent?: string;
}

export function showCommand(o: ShowCommandOptions): number {
  if (o.turn !== undefined && (!Number.isInteger(o.turn) || o.turn < 0)) {
    process.stderr.write(`error: --turn must be a turn number, 0 or more (got ${o.turn})\n`);
    return 1;
  }
  if (!o.prompts && (o.turn !== undefined || o.agent !== undefined)) {
    process.stderr.write('error: --turn and --agent choose prompts: use them with --prompts\n');
    return 1;
  }
  // a transcript never uses a population step's actions: they stay on disk (--format events reads them back one at a time)
  const record = loadRunRecord(o.dir, { stepsOnDisk: true });
  if (record.damage) process.stderr.write(`${damageWarning(record.damage)}\n`);
  for (const w of record.lineWarnings) process.stderr.write(`${w}\n`);
  if (o.prompts) {
    const all = promptsOf(record);
    const shown = all.filter((p) => (o.turn === undefined || p.turn === o.turn) && (o.agent === undefined || p.agent === o.agent));
    if (all.length === 0)
      process.stderr.write(`${o.dir}: this run's journal records no prompts (it was written before prompts were kept)\n`);
    else if (shown.length === 0)
      process.stderr.write(
        `no LLM call matches${o.turn !== undefined ? ` --turn ${o.turn}` : ''}${o.agent !== undefined ? ` --agent ${o.agent}` : ''}\n`,
      );
    process.stdout.write(formatPrompts(shown));
    const incomplete = shown.filter((p) => p.problem).length;
    if (incomplete > 0)
      process.stderr.write(`warning: ${incomplete} prompt${incomplete === 1 ? ' is' : 's are'} incomplete (damaged journal lines)\n`);
    return 0;
  }
  if (o.format === 'events') {
    for (const e of record.effective) process.stdout.write(JSON.stringify(e) + '\n');
    return 0;
  }
  const t = renderTranscript(record.effective);
  process.stdout.write(o.format === 'jsonl' ? t.jsonl : t.markdown);
  if (!record.finished) {
    const how =
      record.status === 'running'
        ? `still running (process ${record.runningPid})`
        : `was stopped after turn ${record.turns} without finishing; continue it with: sop resume ${o.dir}`;
    process.stderr.write(`\nThe run ${how}\n`);
  }
  return 0;
}
