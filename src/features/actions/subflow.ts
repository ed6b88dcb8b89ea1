// A `sop` command's sub-flow: the SOP it names runs as a nested Run, sharing the caller's memory
// files it maps, its code sessions (unless "session": "own") and its top-level emitter; its
// usage joins the caller's.
import { join } from 'node:path';
import type { RunEvent, RunListener } from '../../core/runtime/events.js';
import { mergeUsage } from '../../core/runtime/usage.js';
import { SubflowDepthError } from './executors/subflow-failure.js';
import type { SubflowRequest, SubflowResult } from '../../core/commands/executor.js';
import type { CodeSessions } from './executors/session/code-session.js';
import type { MemoryFiles, MemoryLink } from '../../core/workspace/memory-files.js';
import type { ActionHost, ActionOptions } from './host.js';

export const MAX_SUBFLOW_DEPTH = 8;

/** The caller's parts a sub-flow runs with. */
export interface SubflowParts {
  host: ActionHost;
  options: ActionOptions;
  memory: MemoryFiles;
  sessions: CodeSessions;
  /** Sub-flows run so far, by command (names the next one: COMMAND-N). */
  counts: Map<string, number>;
  /** Where sub-flows' memory folders go. */
  base: string | undefined;
  /** The top-level run's emitter and turn. */
  root: { emit(event: RunEvent): void; turn(): number };
}

export async function runSubflow(command: string, req: SubflowRequest, ownSessions: boolean, p: SubflowParts): Promise<SubflowResult> {
  const { host, options: o } = p;
  const depth = (o.depth ?? 0) + 1;
  if (depth > MAX_SUBFLOW_DEPTH)
    throw new SubflowDepthError(
      `sub-flows nested more than ${MAX_SUBFLOW_DEPTH} deep (command "${command}" of ${host.file}); is a SOP calling itself?`,
    );
  const { sop, file } = host.loadSop(req.file);
  const n = (p.counts.get(command) ?? 0) + 1;
  p.counts.set(command, n);
  const name = `${command}-${n}`;
  const flow = o.flow ? `${o.flow}/${name}` : name;
  const links: Record<string, MemoryLink> = {};
  for (const [sub, mine] of Object.entries(req.memory)) links[sub] = { store: p.memory, name: mine };
  // A sub-flow's streamed deltas and checkpoints stay inside it: it is resumed as a whole.
  const forward: RunListener = (e) => {
    if (e.type === 'delta' || e.type === 'checkpoint') return;
    host.emit(e.type === 'subflow' ? e : { type: 'subflow', flow, event: e });
  };
  const out = await host.subRun({
    sop,
    file,
    runId: `${host.runId}/${flow}`,
    inputs: req.inputs,
    listeners: [forward],
    actions: {
      ...o,
      depth,
      flow,
      memoryLinks: links,
      root: p.root,
      sessions: ownSessions ? undefined : p.sessions, // "session": "own" gives the sub-flow sessions of its own
      memoryDir: p.base ? join(p.base, name) : undefined,
    },
  });
  mergeUsage(host.usage, out.usage);
  return { flow, status: out.status, result: out.result, summary: out.summary, turns: out.turns, error: out.error };
}
