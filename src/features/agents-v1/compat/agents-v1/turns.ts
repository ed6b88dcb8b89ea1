// Agent turns under Agents 1.0 semantics (a SOP with `agents_v1`, i.e. imported by `sop import`):
// at each of its turns an AI agent first observes (docs/agents-v1-semantics.md §3.8: relevant memory and the new
// conversation, appended to its private memory as a user message, begin turns included); its
// prompt is its private memory (at most MAX_CHAT_HISTORY entries) under a system prompt built
// from the environment prompt and its components, with the last prompt appended to the final
// history message (§3.7); the environment summary is not part of it (it informs the judge).
// The prompt itself is built by the one agent pipeline (src/core/agent/pipeline.ts) with the
// `privateMemory` option this class provides; observe and recorded keep the private memories.
import { ComponentServices } from '../../../../core/agent/component-services.js';
import type { PrivateMemoryOption } from '../../../../core/agent/pipeline.js';
import type { ToolSlotExecutor } from '../../../../core/components/index.js';
import type { EnvironmentMemory } from '../../../../core/environment/environment.js';
import { renderMessage, type Message } from '../../../../core/environment/message.js';
import type { ChatMessage } from '../../../../core/llm/types.js';
import type { Embedder } from '../../../../core/memory/embedder.js';
import type { RunEvent } from '../../../../core/runtime/events.js';
import type { ResolvedSop, ResolvedState } from '../../../../format/sop/resolved.js';
import type { Sop } from '../../../../format/sop/types.js';
import { observationParts, topKBySimilarity } from './observation.js';
import { PrivateMemories, type PrivateEntry } from './private-memory.js';
import { renderV1 } from './templates.js';

/** What a caller may provide (the CLI passes the run's workspace; tests pass embedders and tools). */
export interface AgentsV1Options {
  /** Makes the embedder for relevant memory and knowledge bases (default: the SOP's environment.embedder). */
  embedder?: () => Promise<Embedder>;
  /** The run's workspace folder (code components write output_code/ there). */
  workspace?: string;
  /** Executors bound to tool slots, by executor name (or slot name when the slot names none). */
  toolExecutors?: Record<string, ToolSlotExecutor>;
  /** Cache folder for embedded knowledge bases (default: see components/knowledge-base.ts). */
  knowledgeCacheDir?: string;
}

/** What the v1 turns need from the run loop. */
export interface AgentsV1Host {
  sop: Sop;
  resolved: ResolvedSop;
  /** The SOP file (knowledge paths are relative to its folder). */
  file: string;
  env: EnvironmentMemory;
  /** --compat agents-v1: keep the safe quirks (§5 #29; relevant memory shown twice). */
  compat: boolean;
  emit(event: RunEvent): void;
  turn(): number;
}

export interface AgentsV1Snapshot {
  memories: Record<string, PrivateEntry[]>;
  shared: Record<string, string>;
  observed: Record<string, string>;
}

async function defaultEmbedder(spec: string | undefined): Promise<Embedder> {
  const { createEmbedder } = await import('../../../../core/memory/create-embedder.js');
  return createEmbedder(spec);
}

export class AgentsV1Turns {
  readonly memories: PrivateMemories;
  /** Shared memory (extract writes, customize reads), knowledge bases, workspace and tool slots. */
  readonly components: ComponentServices;
  /** Per agent: the text of its latest observation's new conversation (the retrieval query). */
  private readonly observed = new Map<string, string>();
  /** Message embeddings for relevant memory, by message position; messages are embedded in order. */
  private readonly vectors: Float32Array[] = [];

  constructor(
    private readonly host: AgentsV1Host,
    options: AgentsV1Options = {},
  ) {
    const longest = Math.max(1, ...Object.values(host.resolved.states).map((s) => s.maxChatHistory));
    this.memories = new PrivateMemories(host.compat, longest);
    this.components = new ComponentServices({
      file: host.file,
      makeEmbedder: options.embedder ?? (() => defaultEmbedder(host.sop.environment?.embedder)),
      workspace: options.workspace,
      toolExecutors: options.toolExecutors,
      knowledgeCacheDir: options.knowledgeCacheDir,
      emit: (e) => host.emit(e),
      turn: () => host.turn(),
    });
  }

  /** Shared key-value memory (extract writes, customize reads). */
  get shared(): Map<string, string> {
    return this.components.shared;
  }

  /** The concise-mode sentence when the SOP asks for it (agents_v1.concise). */
  static conciseSentence(sop: Sop): string | undefined {
    return sop.agents_v1?.concise ? renderV1('concise', {}) : undefined;
  }

  /** The agent pipeline's option for Agents 1.0 turns (src/core/agent/pipeline.ts). */
  privateMemory(): PrivateMemoryOption {
    return {
      history: (agent, state, system, last) => this.messagesFor(agent, state, system, last),
      observed: (agent) => this.observed.get(agent) ?? '',
      components: this.components,
      render: { system: (ctx) => renderV1('system', ctx), last: (ctx) => renderV1('last', ctx) },
      nameStripping: this.host.sop.agents_v1?.name_stripping ?? 'agents-v1',
    };
  }

  /** Start of an AI agent's turn (begin turns included): append its observation to its private memory. */
  async observe(state: ResolvedState, _role: string, agent: string): Promise<void> {
    const messages = this.host.env.messages;
    if (messages.length === 0) {
      this.observed.set(agent, '');
      return;
    }
    const parts = observationParts({
      messages,
      stateStart: this.host.env.stateStart,
      visibility: this.host.env.visibility,
      maxChatHistory: state.maxChatHistory,
      agent,
    });
    const topK = this.host.sop.environment?.top_k ?? 0;
    let relevant: Message[] = [];
    if (topK > 0 && parts.query && parts.candidates.length > 0) relevant = await this.relevant(parts.query, parts.candidates, topK);
    const content = renderV1('observation', {
      relevant: relevant.map((m) => renderMessage(m, agent)),
      repeat_relevant: this.host.compat,
      conversation: parts.conversation.map((m) => renderMessage(m)),
    });
    this.memories.add(agent, { role: 'user', content });
    this.observed.set(agent, parts.conversation.map((m) => m.content).join('\n'));
  }

  /** The k candidates most similar to the query message (reference §3.13: no threshold). */
  private async relevant(query: Message, candidates: Message[], k: number): Promise<Message[]> {
    const embedder = await this.components.sharedEmbedder();
    const all = this.host.env.messages;
    if (this.vectors.length <= query.id) {
      const batch = all.slice(this.vectors.length, query.id + 1).map((m) => m.content);
      this.vectors.push(...(await embedder.embed(batch)));
    }
    const picked = topKBySimilarity(
      this.vectors[query.id]!,
      candidates.map((m) => this.vectors[m.id]!),
      k,
    );
    return picked.map((i) => candidates[i]!);
  }

  /** System message, then the private history with `last` appended to its final message (to the system prompt when the history is empty). */
  private messagesFor(agent: string, state: ResolvedState, system: string, last: string): ChatMessage[] {
    const history = this.memories.history(agent, state.maxChatHistory, last);
    if (!history) return [{ role: 'system', content: [system, last].filter((t) => t !== '').join('\n') }];
    return system !== '' ? [{ role: 'system', content: system }, ...history] : history;
  }

  /** A recorded message joins its sender's private memory (reference §3.11). */
  recorded(message: Message): void {
    this.memories.add(message.sender, { role: 'assistant', content: message.content });
  }

  /** Checkpointable (src/features/journal/snapshot.ts): journaled at each turn boundary, restored on resume. */
  checkpoint(): AgentsV1Snapshot {
    return this.snapshot();
  }

  restoreCheckpoint(state: unknown): void {
    this.restore(state as AgentsV1Snapshot);
  }

  /** Private memories and shared memory, for checkpoints (a resumed run restores them). */
  snapshot(): AgentsV1Snapshot {
    return { memories: this.memories.snapshot(), shared: this.components.snapshotShared(), observed: Object.fromEntries(this.observed) };
  }

  restore(s: AgentsV1Snapshot): void {
    this.memories.restore(s.memories);
    this.components.restoreShared(s.shared);
    this.observed.clear();
    for (const [k, v] of Object.entries(s.observed)) this.observed.set(k, v);
  }
}
