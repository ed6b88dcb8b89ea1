// The leak check of audiences: in a run's recorded cassette (--record), no agent's request may
// contain a message whose audience in transcript.jsonl leaves that agent out, nor a summary
// kept for other agents (the journal's `summary` events with an `audience`).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Recorded {
  purpose: string;
  agent?: string;
  request?: Array<{ content?: unknown }>;
}

export interface LeakReport {
  /** Agent requests checked. */
  requests: number;
  /** Messages with an audience narrower than every agent. */
  restricted: number;
  /** (agent request, hidden text) pairs checked. */
  checks: number;
  leaks: string[];
}

export function findLeaks(runDir: string, cassetteFile: string): LeakReport {
  const messages = readFileSync(join(runDir, 'transcript.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { id: number; sender: string; content: string; audience?: string[] });
  const summaries = readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { type: string; summary?: string; audience?: string[] })
    .filter((e) => e.type === 'summary' && e.audience !== undefined);
  const agents = new Set(messages.flatMap((m) => m.audience ?? []));
  const interactions = (JSON.parse(readFileSync(cassetteFile, 'utf8')) as { interactions: Recorded[] }).interactions;
  const report: LeakReport = { requests: 0, restricted: 0, checks: 0, leaks: [] };
  report.restricted = messages.filter((m) => m.audience !== undefined && m.audience.length < agents.size).length;
  for (const it of interactions) {
    if (it.agent === undefined || (it.purpose !== 'agent' && it.purpose !== 'tool')) continue;
    report.requests++;
    const text = (it.request ?? []).map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content))).join('\n');
    for (const m of messages) {
      if (m.audience === undefined || m.audience.includes(it.agent) || m.content.trim() === '') continue;
      report.checks++;
      if (text.includes(m.content)) report.leaks.push(`${it.agent}'s request holds message ${m.id} (audience ${m.audience.join(', ')})`);
    }
    for (const s of summaries) {
      if (s.audience!.includes(it.agent) || !s.summary) continue;
      // a summary shared word for word with the agent's own is not a leak
      if (summaries.some((o) => o.summary === s.summary && o.audience!.includes(it.agent!))) continue;
      report.checks++;
      if (text.includes(s.summary)) report.leaks.push(`${it.agent}'s request holds the summary for ${s.audience!.join(', ')}`);
    }
  }
  return report;
}
