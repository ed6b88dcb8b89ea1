// Agent turns under Agents 1.0 semantics (a SOP with `agents_v1`, i.e. imported by `sop import`):
// at each of its turns an AI agent first observes (docs/agents-v1-semantics.md §3.8: relevant memory and the new
// conversation, appended to its private memory as a user message, begin turns included); its
// prompt is its private memory (at most MAX_CHAT_HISTORY entries) under a system prompt built
// from the environment prompt and its components, with the last prompt appended to the final
// history message (§3.7); the environment summary is not part of it (it informs the judge).
// The run loop (src/runtime/run.ts) calls observe/act/recorded; everything else is here.
import { dirname, resolve } from 'node:path';
import { stripSpeakerName } from '../../agent/output.js';
import { assembleComponents, type ComponentRuntime, type ToolSlotExecutor } from '../../components/index.js';
import { KnowledgeBase, embedderLearns, type KnowledgeMode } from '../../components/knowledge-base.js';
import type { EnvironmentMemory } from '../../environment/environment.js';
import { renderMessage, type Message } from '../../environment/message.js';
import type { CallMeta, ChatMessage } from '../../llm/types.js';
import type { Embedder } from '../../memory/embedder.js';
import { renderText } from '../../prompt/templates.js';
import type { RunEvent } from '../../runtime/events.js';
import { agentLlm, type ResolvedSop, type ResolvedState } from '../../sop/resolved.js';
import type { LlmSettings, Sop } from '../../sop/types.js';
import { Workspace } from '../../workspace/workspace.js';
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
  stream: boolean;
  call(messages: ChatMessage[], settings: LlmSettings, meta: CallMeta, stream?: boolean): Promise<string>;
  emit(event: RunEvent): void;
  /** Template context (inputs, goal, SOP facts). */
  context(): Record<string, unknown>;
  turn(): number;
  turnInState(state: string): number;
}

export interface AgentsV1Snapshot {
  memories: Record<string, PrivateEntry[]>;
  shared: Record<string, string>;
  observed: Record<string, string>;
}

async function defaultEmbedder(spec: string | undefined): Promise<Embedder> {
  const { createEmbedder } = await import('../../memory/create-embedder.js');
  return createEmbedder(spec);
}

export class AgentsV1Turns {
  readonly memories: PrivateMemories;
  /** Shared key-value memory (extract writes, customize reads). */
  readonly shared = new Map<string, string>();
  /** Per agent: the text of its latest observation's new conversation (the retrieval query). */
  private readonly observed = new Map<string, string>();
  private readonly makeEmbedder: () => Promise<Embedder>;
  private embedder?: Promise<Embedder>;
  /** Message embeddings for relevant memory, by message position; messages are embedded in order. */
  private readonly vectors: Float32Array[] = [];
  private readonly knowledgeBases = new Map<string, Promise<KnowledgeBase>>();
  private readonly warned = new Set<string>();
  private readonly workspace?: Workspace;

  constructor(private readonly host: AgentsV1Host, private readonly options: AgentsV1Options = {}) {
    const longest = Math.max(1, ...Object.values(host.resolved.states).map((s) => s.maxChatHistory));
    this.memories = new PrivateMemories(host.compat, longest);
    this.makeEmbedder = options.embedder ?? (() => defaultEmbedder(host.sop.environment?.embedder));
    if (options.workspace) this.workspace = new Workspace(options.workspace);
  }

  /** The concise-mode sentence when the SOP asks for it (agents_v1.concise). */
  static conciseSentence(sop: Sop): string | undefined {
    return sop.agents_v1?.concise ? renderV1('concise', {}) : undefined;
  }

  private sharedEmbedder(): Promise<Embedder> {
    this.embedder ??= this.makeEmbedder();
    return this.embedder;
  }

  private warnOnce(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.host.emit({ type: 'warning', message });
  }

  /** Start of an AI agent's turn (begin turns included): append its observation to its private memory. */
  async observe(state: ResolvedState, _role: string, agent: string): Promise<void> {
    const messages = this.host.env.messages;
    if (messages.length === 0) {
      this.observed.set(agent, '');
      return;
    }
    const parts = observationParts({
      messages, stateStart: this.host.env.stateStart, visibility: this.host.env.visibility, maxChatHistory: state.maxChatHistory, agent,
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
    const embedder = await this.sharedEmbedder();
    const all = this.host.env.messages;
    if (this.vectors.length <= query.id) {
      const batch = all.slice(this.vectors.length, query.id + 1).map((m) => m.content);
      this.vectors.push(...(await embedder.embed(batch)));
    }
    const picked = topKBySimilarity(this.vectors[query.id]!, candidates.map((m) => this.vectors[m.id]!), k);
    return picked.map((i) => candidates[i]!);
  }

  /** An AI agent's reply (not a begin turn): components, prompt, the streamed LLM call, name stripping. */
  async act(state: ResolvedState, role: string, agent: string): Promise<string> {
    const { sop } = this.host;
    const agentDef = sop.agents[agent]!;
    const where = `/states/${state.name}/components/${role}`;
    const base = this.host.context();
    const rt = this.runtime(state, role, agent, where, base);
    const comps = state.def.components?.[role] as Record<string, unknown> | undefined;
    const assembled = await assembleComponents(comps, rt);
    const ctx = {
      ...base,
      agent: { name: agent, role, style: agentDef.style ?? '' },
      environment_prompt: renderText(state.def.environment_prompt ?? '', base, `/states/${state.name}/environment_prompt`),
    };
    const system = renderV1('system', { ...ctx, parts: assembled.system });
    const last = renderV1('last', { ...ctx, parts: assembled.last });
    const reply = await this.host.call(this.messagesFor(agent, state, system, last), agentLlm(this.host.resolved, state, agent, role), {
      purpose: 'agent', state: state.name, agent, role, turn: this.host.turn(), turnInState: this.host.turnInState(state.name),
    }, this.host.stream);
    return stripSpeakerName(reply, agent, sop.agents_v1?.name_stripping ?? 'agents-v1');
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

  private runtime(state: ResolvedState, role: string, agent: string, where: string, base: Record<string, unknown>): ComponentRuntime {
    const host = this.host;
    return {
      agent: { name: agent, role, style: host.sop.agents[agent]?.style },
      state: state.name,
      where,
      text: (source, key) => renderText(source, base, `${where}/${key}`),
      shared: this.shared,
      callWithHistory: (system, last, what) => host.call(this.messagesFor(agent, state, system, last), agentLlm(host.resolved, state, agent, role), {
        purpose: 'tool', state: state.name, agent, role, turn: host.turn(), turnInState: host.turnInState(state.name), extractWord: what,
      }, false),
      observed: () => this.observed.get(agent) ?? '',
      knowledge: (path, mode) => this.knowledge(path, mode),
      writeWorkspaceFile: (relativePath, content) => {
        if (!this.workspace) return false;
        this.workspace.write(relativePath, content);
        host.emit({ type: 'file_written', path: `workspace/${relativePath}`, content, turn: host.turn() });
        return true;
      },
      toolExecutor: (slot, executor) => this.options.toolExecutors?.[executor ?? slot],
      warnOnce: (message) => this.warnOnce(message),
    };
  }

  private knowledge(path: string, mode: KnowledgeMode): Promise<KnowledgeBase> {
    const file = resolve(dirname(resolve(this.host.file)), path);
    const key = `${mode}\u0000${file}`;
    let kb = this.knowledgeBases.get(key);
    if (!kb) {
      kb = (async () => {
        const shared = await this.sharedEmbedder();
        // An embedder that learns from what it embeds gets its own instance per knowledge base.
        const embedder = embedderLearns(shared) ? await this.makeEmbedder() : shared;
        return KnowledgeBase.load({ file, mode, embedder, cacheDir: this.options.knowledgeCacheDir });
      })();
      this.knowledgeBases.set(key, kb);
    }
    return kb;
  }

  /** Checkpointable (src/journal/snapshot.ts): journaled at each turn boundary, restored on resume. */
  checkpoint(): AgentsV1Snapshot {
    return this.snapshot();
  }

  restoreCheckpoint(state: unknown): void {
    this.restore(state as AgentsV1Snapshot);
  }

  /** Private memories and shared memory, for checkpoints (a resumed run restores them). */
  snapshot(): AgentsV1Snapshot {
    return { memories: this.memories.snapshot(), shared: Object.fromEntries(this.shared), observed: Object.fromEntries(this.observed) };
  }

  restore(s: AgentsV1Snapshot): void {
    this.memories.restore(s.memories);
    this.shared.clear();
    for (const [k, v] of Object.entries(s.shared)) this.shared.set(k, v);
    this.observed.clear();
    for (const [k, v] of Object.entries(s.observed)) this.observed.set(k, v);
  }
}
