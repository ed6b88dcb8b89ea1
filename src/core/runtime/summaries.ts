// The running summary of the shared history: refreshed every `summary.every` messages by the
// summary LLM (docs/memory.md). With the `summaryChunks` semantics (native SOPs) the summary is a
// list of chunks, oldest first: a refresh appends a summary of the messages it folds in, and the
// oldest chunks are merged into one only when there are more than `summary.max_chunks`, so the
// summary at the head of every prompt only grows between merges (provider prompt caches keep it).
// Agents 1.0 SOPs keep one running summary, rewritten at each refresh.
import { ALL, canSee, PUBLIC } from '../environment/audience.js';
import { renderMessage } from '../environment/message.js';
import type { EnvironmentMemory } from '../environment/environment.js';
import type { ChatMessage } from '../llm/types.js';
import { renderPrompts } from '../prompt/prompt-texts.js';
import { summaryLlm, type ResolvedState } from '../../format/sop/resolved.js';
import type { RunContext } from './context.js';

/** What refreshing the summary needs of the run. */
export type SummaryHost = Pick<
  RunContext,
  'resolved' | 'env' | 'templates' | 'topK' | 'baseContext' | 'envPrompt' | 'call' | 'turn' | 'emit' | 'semantics'
>;

/** What joins the chunks in the summary text an agent is shown. */
export const CHUNK_SEPARATOR = '\n\n';
const minSimilarity = (host: SummaryHost) => host.resolved.sop.environment?.min_similarity;

/** The chunks last set, by viewer ('' : the one summary; audiences: PUBLIC, an agent, ALL). */
const chunksOf = new WeakMap<EnvironmentMemory, Map<string, string[]>>();

const textOf = (env: EnvironmentMemory, viewer: string) => (viewer === '' ? env.summary : env.summaryFor(viewer));

/**
 * The chunks a summary is made of, oldest first: those last set, while the summary is still their
 * text (a summary set otherwise, e.g. emptied on entering a competitive state or restored from an
 * older checkpoint, is one chunk). `viewer`: a viewer's own summary under audiences.
 */
export function summaryChunks(env: EnvironmentMemory, viewer = ''): string[] {
  const text = textOf(env, viewer);
  // a viewer shown the public summary has its chunks
  for (const v of viewer === '' ? [''] : [viewer, PUBLIC]) {
    const chunks = chunksOf.get(env)?.get(v);
    if (chunks && chunks.join(CHUNK_SEPARATOR) === text) return [...chunks];
  }
  return text ? [text] : [];
}

/** Make the summary these chunks (their text joined by CHUNK_SEPARATOR); with `viewers`, the summary of those viewers. */
export function setSummaryChunks(env: EnvironmentMemory, chunks: readonly string[], viewers?: readonly string[]): void {
  let map = chunksOf.get(env);
  if (!map) chunksOf.set(env, (map = new Map<string, string[]>()));
  const text = chunks.join(CHUNK_SEPARATOR);
  if (!viewers) {
    map.set('', [...chunks]);
    env.summary = text;
    return;
  }
  for (const v of viewers) map.set(v, [...chunks]);
  env.setSummary(viewers, text);
}

/** For a checkpoint: each chunk's length in characters, when the summary has more than one. */
export function summaryChunkLengths(env: EnvironmentMemory, viewer = ''): number[] | undefined {
  const chunks = summaryChunks(env, viewer);
  return chunks.length > 1 ? chunks.map((c) => c.length) : undefined;
}

/** For a checkpoint under audiences: the chunk lengths of each viewer's summary that has several. */
export function viewerChunkLengths(env: EnvironmentMemory): Record<string, number[]> | undefined {
  const out: Record<string, number[]> = {};
  for (const viewer of chunksOf.get(env)?.keys() ?? []) {
    if (viewer === '') continue;
    const lengths = summaryChunkLengths(env, viewer);
    if (lengths) out[viewer] = lengths;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** On restore: the chunks of a summary from their lengths (ignored unless they make up its text). */
export function restoreSummaryChunks(env: EnvironmentMemory, summary: string, lengths: readonly number[] | undefined, viewer = ''): void {
  if (!lengths?.length) return;
  const chunks: string[] = [];
  let at = 0;
  for (const n of lengths) {
    chunks.push(summary.slice(at, at + n));
    at += n + CHUNK_SEPARATOR.length;
  }
  if (chunks.join(CHUNK_SEPARATOR) !== summary) return;
  if (viewer === '') setSummaryChunks(env, chunks);
  else {
    let map = chunksOf.get(env);
    if (!map) chunksOf.set(env, (map = new Map<string, string[]>()));
    map.set(viewer, chunks);
  }
}

/** Append a refresh's chunk to `chunks`, merging the oldest into one (a second summary call) when there are more than max_chunks. */
async function appendChunk(
  chunks: string[],
  reply: string,
  maxChunks: number,
  mergeCall: (merge: string[]) => Promise<string>,
): Promise<string[]> {
  const next = reply ? [...chunks, reply] : chunks;
  if (next.length <= maxChunks) return next;
  // the oldest half (and one) become one chunk: merges come every max_chunks / 2 refreshes
  const merge = next.slice(0, Math.ceil(maxChunks / 2) + 1);
  return [(await mergeCall(merge)).trim(), ...next.slice(merge.length)];
}

/**
 * Refresh the summary every `summary.every` messages (counted over the whole run), from the
 * previous summary, the messages since then and the earlier messages most similar to the last
 * one, all under the visibility rule. The call is issued as soon as the message is recorded and
 * shown, and awaited before the turn ends: the turn's checkpoint includes the summary, and the
 * next turn's judge and agent prompts need it.
 */
export async function maybeSummarize(host: SummaryHost, state: ResolvedState): Promise<void> {
  const env = host.env;
  const s = state.summary;
  const count = env.messages.length;
  if (!s.enabled || count % s.every !== 0) return;
  if (env.audiences?.active) return summarizePerViewer(host, state);
  // A competitive state folds in only its own messages when its summary starts empty on entry
  // (native SOPs). When the summary carries across states (Agents 1.0: one summary for the run,
  // its window not scoped to the state, docs/agents-v1-semantics.md §3.10), every message since the
  // last refresh is folded in: the messages of the previous state after its last refresh too.
  const visibleStart = env.visibility === 'competitive' && !host.semantics.keepSummaryOnEntry ? env.stateStart : 0;
  const from = Math.max(visibleStart, count - s.every);
  const recent = env.messages.slice(from);
  const relevant = await env.retrieve({
    topK: host.topK(),
    minSimilarity: minSimilarity(host),
    before: from,
  });
  const base = host.baseContext();
  const chunked = host.semantics.summaryChunks;
  const ctx = {
    ...base,
    state: { name: state.name },
    environment_prompt: host.envPrompt(state),
    summary: renderPrompts(s, base, state.def.summary ? `/states/${state.name}/summary` : '/environment/summary'),
    previous: env.summary,
    history: recent.map((m) => renderMessage(m)),
    relevant: relevant.map((m) => renderMessage(m)),
    ...(chunked ? { chunk: true } : {}),
  };
  const ask = (context: object) =>
    host.call(
      [
        { role: 'system', content: host.templates.render('summary_system', context) },
        { role: 'user', content: host.templates.render('summary_user', context) },
      ],
      summaryLlm(host.resolved, state),
      { purpose: 'summary', state: state.name, turn: host.turn() },
    );
  const reply = (await ask(ctx)).trim();
  if (!chunked) env.summary = reply;
  else
    setSummaryChunks(
      env,
      await appendChunk(summaryChunks(env), reply, s.maxChunks, (merge) => ask({ ...ctx, previous: '', history: [], relevant: [], merge })),
    );
  host.emit({ type: 'summary', state: state.name, turn: host.turn(), after_messages: count, summary: env.summary });
}

/**
 * Audiences: one summary per viewer (the public one, each agent's, and ALL's when a controller
 * sees all), each from the messages that viewer may see, so a private message never reaches a
 * summary shown to someone outside its audience. Viewers whose summary prompt is the same share
 * one call (a SOP whose messages are all public makes one call, as without audiences).
 */
async function summarizePerViewer(host: SummaryHost, state: ResolvedState): Promise<void> {
  const env = host.env;
  const rules = env.audiences!;
  const s = state.summary;
  const count = env.messages.length;
  const visibleStart = env.visibility === 'competitive' ? env.stateStart : 0;
  const from = Math.max(0, count - s.every);
  const viewers = [PUBLIC, ...rules.agents];
  if (Object.values(host.resolved.states).some((st) => st.def.controller?.sees === 'all')) viewers.push(ALL);
  const base = host.baseContext();
  const chunked = host.semantics.summaryChunks;
  const prompts = new Map<string, { messages: ChatMessage[]; viewers: string[]; ctx: object; chunks: string[] }>();
  for (const viewer of viewers) {
    const recent = env.messages.slice(from).filter((m) => canSee(viewer, m, visibleStart, rules));
    if (recent.length === 0) continue; // nothing new for this viewer: its summary stays
    const relevant = await env.retrieve({ topK: host.topK(), minSimilarity: minSimilarity(host), before: from, viewer });
    const ctx = {
      ...base,
      state: { name: state.name },
      environment_prompt: host.envPrompt(state),
      summary: renderPrompts(s, base, state.def.summary ? `/states/${state.name}/summary` : '/environment/summary'),
      previous: env.summaryFor(viewer),
      history: recent.map((m) => renderMessage(m)),
      relevant: relevant.map((m) => renderMessage(m)),
      ...(chunked ? { chunk: true } : {}),
    };
    const messages = summaryMessages(host, ctx);
    // viewers whose prompts are the same have the same summary so far: one call, and the same chunks
    const key = JSON.stringify(messages);
    const same = prompts.get(key);
    if (same) same.viewers.push(viewer);
    // (the chunks so far are read now, before any viewer's summary changes)
    else prompts.set(key, { messages, viewers: [viewer], ctx, chunks: chunked ? summaryChunks(env, viewer) : [] });
  }
  const settings = summaryLlm(host.resolved, state);
  const meta = { purpose: 'summary' as const, state: state.name, turn: host.turn() };
  for (const { messages, viewers: group, ctx, chunks: before } of prompts.values()) {
    const reply = await host.call(messages, settings, meta);
    let text = reply.trim();
    if (!chunked) env.setSummary(group, text);
    else {
      const merge = (parts: string[]) =>
        host.call(summaryMessages(host, { ...ctx, previous: '', history: [], relevant: [], merge: parts }), settings, meta);
      const chunks = await appendChunk(before, text, s.maxChunks, merge);
      setSummaryChunks(env, chunks, group);
      text = chunks.join(CHUNK_SEPARATOR);
    }
    const agents = group.filter((v) => v !== PUBLIC && v !== ALL);
    const everyone = group.includes(PUBLIC) && agents.length === rules.agents.length;
    host.emit({
      type: 'summary',
      state: state.name,
      turn: host.turn(),
      after_messages: count,
      summary: text,
      ...(everyone ? {} : { audience: group.includes(ALL) && agents.length === 0 ? ['*all'] : agents }),
    });
  }
}

function summaryMessages(host: SummaryHost, ctx: object): ChatMessage[] {
  return [
    { role: 'system', content: host.templates.render('summary_system', ctx) },
    { role: 'user', content: host.templates.render('summary_user', ctx) },
  ];
}
