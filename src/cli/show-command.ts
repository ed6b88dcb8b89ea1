// sop show RUN_DIR: the transcript of a run, derived from its journal (so it is complete even
// when the process was killed before writing transcript.md).
import { damageWarning, loadRunRecord } from '../journal/record.js';
import { renderTranscript } from '../journal/transcript.js';

export interface ShowCommandOptions {
  dir: string;
  /** markdown (default), jsonl (one message per line) or events (the effective journal). */
  format: 'markdown' | 'jsonl' | 'events';
}

export function showCommand(o: ShowCommandOptions): number {
  const record = loadRunRecord(o.dir);
  if (record.damage) process.stderr.write(`${damageWarning(record.damage)}\n`);
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
