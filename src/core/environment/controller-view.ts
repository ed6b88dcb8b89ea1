// What a state's controller (its judge and speaker choice) sees of the shared memory: the state's
// recent messages and the earlier ones most similar to the last, through the audience rules when
// the SOP has audiences (controller.sees; default: what every agent of the state's roles may see).
import { alignedWindow, viewerAlignedWindow } from '../memory/window.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import { canSee } from './audience.js';
import type { EnvironmentMemory } from './environment.js';
import type { Message } from './message.js';

export interface ControllerViewOptions {
  topK: number;
  minSimilarity?: number;
  /** The last max_chat_history messages (Agents 1.0), not a window grown since the last summary refresh. */
  sliding: boolean;
  /** The summary is kept as chunks: the window moves only at summary refreshes (src/core/memory/window.ts). */
  chunks?: boolean;
}

/**
 * The state's messages, at most the last max_chat_history of them (grown since the last summary
 * refresh, as agents' windows are; sliding under Agents 1.0 semantics), and the earlier visible
 * messages most similar to the last one.
 */
export async function controllerHistory(
  env: EnvironmentMemory,
  state: ResolvedState,
  o: ControllerViewOptions,
): Promise<{ history: Message[]; relevant: Message[] }> {
  const rules = env.audiences;
  if (rules?.active) {
    const viewer = rules.controllerViewer(state.name);
    // the window rule per viewer: it grows by what the viewer may see until its summary is refreshed
    const all = env.seenBy(viewer);
    const w = o.sliding
      ? state.maxChatHistory
      : viewerAlignedWindow(state.maxChatHistory, all, env.messages.length, state.summary.every, o.chunks);
    const history = all.slice(Math.max(0, all.length - w)).filter((m) => m.id >= env.stateStart);
    const before = history[0]?.id ?? env.messages.length;
    const relevant = await env.retrieve({ topK: o.topK, minSimilarity: o.minSimilarity, before, viewer });
    return { history, relevant };
  }
  const n = env.messages.length;
  const w = o.sliding ? state.maxChatHistory : alignedWindow(state.maxChatHistory, n, state.summary.every, o.chunks);
  const start = Math.max(env.stateStart, n - w);
  const history = env.messages.slice(start);
  const relevant = await env.retrieve({ topK: o.topK, minSimilarity: o.minSimilarity, before: start });
  return { history, relevant };
}

/** The last message the state's controller may see (audiences), else the last message. */
export function controllerLast(env: EnvironmentMemory, state: string): Message | undefined {
  const msgs = env.messages;
  const rules = env.audiences;
  if (!rules?.active) return msgs[msgs.length - 1];
  const viewer = rules.controllerViewer(state);
  const start = env.visibility === 'competitive' ? env.stateStart : 0;
  for (let i = msgs.length - 1; i >= 0; i--) if (canSee(viewer, msgs[i]!, start, rules)) return msgs[i];
  return undefined;
}

/** The summary the state's controller reads (its viewer's under audiences). */
export function controllerSummary(env: EnvironmentMemory, state: string): string {
  const viewer = env.audiences?.active ? env.audiences.controllerViewer(state) : undefined;
  return env.summaryFor(viewer);
}
