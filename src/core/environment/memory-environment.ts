// The environment memory with embeddings: every message is embedded (in the background, in
// order, batched when messages arrive faster than the embedder), retrieval finds the earlier
// messages most similar to a query under the visibility rule, and each agent's memory records
// what it said and what it was shown.
import type { Embedder } from '../memory/embedder.js';
import { VectorStore } from '../memory/vector-store.js';
import type { VectorIndex, VectorIndexFactory } from '../memory/vector-index.js';
import { canSee, type AudienceRules, type Viewer } from './audience.js';
import {
  ViewerSummaries,
  type EnvironmentMemory,
  type EnvironmentView,
  type RetrieveRequest,
  type ViewRequest,
  type Visibility,
} from './environment.js';
import type { Message } from './message.js';
import { EngineError } from '../../shared/errors.js';

export interface MemoryEnvironmentOptions {
  visibility: Visibility;
  /**
   * Embedder for retrieval, or a factory called once when the first embedding is needed.
   * Without one, nothing is embedded and retrieval returns nothing.
   */
  embedder?: Embedder | (() => Promise<Embedder>);
  /** Use the plain JS scan instead of WebAssembly SIMD (same results; for tests). */
  simd?: boolean;
  /** Where embeddings are kept and searched (default: an in-memory VectorStore). */
  vectorIndex?: VectorIndexFactory;
}

/** What one agent said (oldest first) and heard: the messages of others shown in its prompts, in the order first shown. */
export interface AgentMemory {
  said: Message[];
  heard: Message[];
}

interface AgentRecord {
  said: number[];
  heard: number[];
  heardSet: Set<number>;
}

/** The environment with retrieval: every message embedded and searchable; its summaries (the public one and per viewer) are ViewerSummaries'. */
export class MemoryEnvironment extends ViewerSummaries implements EnvironmentMemory {
  readonly visibility: Visibility;
  readonly messages: Message[] = [];
  stateStart = 0;
  /** The SOP's audience rules; when active, views, retrieval and summaries are per viewer. */
  audiences?: AudienceRules;
  /** textKey of each message's content (for repeats among the messages a viewer sees). */
  private readonly keys: number[] = [];
  private embedder?: Embedder;
  private readonly source?: Embedder | (() => Promise<Embedder>);
  private store?: VectorIndex;
  private readonly makeIndex?: VectorIndexFactory;
  /** messages[0, embedded) have rows in the store (row = message position). */
  private embedded = 0;
  private running?: Promise<void>;
  private failure?: Error;
  private readonly agents = new Map<string, AgentRecord>();
  private readonly simd?: boolean;
  /** superseded[i] = 1 when a later message repeats message i's text exactly. */
  private superseded = new Uint8Array(64);
  private readonly latestByText = new Map<number, number>();
  /** Time spent embedding, in milliseconds (for benchmarks and run summaries). */
  embedMs = 0;

  constructor(options: MemoryEnvironmentOptions) {
    super();
    this.visibility = options.visibility;
    this.source = options.embedder;
    this.simd = options.simd;
    this.makeIndex = options.vectorIndex;
  }

  /** The messages a viewer may see, oldest first. */
  seenBy(viewer: Viewer): Message[] {
    const start = this.visibleStart();
    return this.messages.filter((m) => canSee(viewer, m, start, this.audiences));
  }

  private filters(viewer: Viewer | undefined): viewer is Viewer {
    return viewer !== undefined && this.audiences?.active === true;
  }

  /** Whether messages are embedded (an embedder was given). */
  get embeds(): boolean {
    return this.source !== undefined;
  }

  /** The embedder's id once it is loaded. */
  get embedderId(): string | undefined {
    return this.embedder?.id;
  }

  async add(message: Message): Promise<void> {
    if (message.id !== this.messages.length) {
      throw new EngineError(`environment: message id ${message.id} does not match its position ${this.messages.length}`, 'INTERNAL');
    }
    this.messages.push(message);
    this.record(message.sender).said.push(message.id);
    this.noteRepeat(message);
    this.startEmbedding();
  }

  visibleStart(): number {
    return this.visibility === 'competitive' ? Math.min(this.stateStart, this.messages.length) : 0;
  }

  visible(): readonly Message[] {
    const start = this.visibleStart();
    return start === 0 ? this.messages : this.messages.slice(start);
  }

  async view(request: ViewRequest): Promise<EnvironmentView> {
    if (this.filters(request.agent)) return this.viewOf(request.agent, request);
    const start = this.visibleStart();
    const n = this.messages.length;
    const windowStart = Math.max(start, n - Math.max(0, request.window));
    const window = this.messages.slice(windowStart);
    const relevant =
      request.topK > 0 && n > 0
        ? await this.retrieve({ topK: request.topK, minSimilarity: request.minSimilarity, query: request.query, before: windowStart })
        : [];
    if (request.agent !== undefined) {
      const rec = this.record(request.agent);
      for (const m of [...relevant, ...window]) {
        if (m.sender !== request.agent && !rec.heardSet.has(m.id)) {
          rec.heardSet.add(m.id);
          rec.heard.push(m.id);
        }
      }
    }
    return { window, relevant, summary: this.summary };
  }

  /** The view of an agent under audiences: the last messages it may see, retrieval among the earlier ones it may see, its summary. */
  private async viewOf(agent: string, request: ViewRequest): Promise<EnvironmentView> {
    const start = this.visibleStart();
    const want = Math.max(0, request.window);
    const window: Message[] = [];
    let i = this.messages.length - 1;
    for (; i >= 0 && window.length < want; i--) {
      const m = this.messages[i]!;
      if (canSee(agent, m, start, this.audiences)) window.push(m);
    }
    window.reverse();
    const windowStart = window.length > 0 ? window[0]!.id : i + 1;
    const relevant =
      request.topK > 0 && this.messages.length > 0
        ? await this.retrieve({
            topK: request.topK,
            minSimilarity: request.minSimilarity,
            query: request.query,
            before: windowStart,
            viewer: agent,
          })
        : [];
    this.noteHeard(agent, [...relevant, ...window]);
    return { window, relevant, summary: this.summaryFor(agent) };
  }

  private noteHeard(agent: string, shown: Message[]): void {
    const rec = this.record(agent);
    for (const m of shown) {
      if (m.sender !== agent && !rec.heardSet.has(m.id)) {
        rec.heardSet.add(m.id);
        rec.heard.push(m.id);
      }
    }
  }

  /**
   * The visible messages before `before` most similar to the query (default: the last message),
   * most similar first. The query message itself is never returned, nor a text that a later
   * message repeats exactly (the text is then either already in the prompt or found once).
   */
  async retrieve(request: RetrieveRequest): Promise<Message[]> {
    const n = this.messages.length;
    if (!this.source || request.topK <= 0 || n === 0) return [];
    await this.flush();
    const store = this.store;
    if (!store) return [];
    if (this.filters(request.viewer)) return this.retrieveFor(request.viewer, request, store);
    const from = this.visibleStart();
    const to = Math.min(request.before ?? n, n);
    if (to <= from) return [];
    let query: ArrayLike<number>;
    let exclude: { from: number; to: number } | undefined;
    if (request.query !== undefined) query = await this.queryVector(request.query);
    else {
      query = store.get(n - 1);
      exclude = { from: n - 1, to: n };
    }
    // Only the latest copy of a repeated text is a candidate: an older copy adds nothing, and when
    // the latest copy is at or after `before` the text is already in the prompt.
    const hits = store.search(query, request.topK, { from, to, exclude, minSimilarity: request.minSimilarity, skip: this.superseded });
    return hits.map((h) => this.messages[h.row]!);
  }

  /**
   * Retrieval for a viewer: candidates are the messages before `before` it may see; of a repeated
   * text only the latest copy it may see counts; the default query is the last message it may see.
   */
  private async retrieveFor(viewer: Viewer, request: RetrieveRequest, store: VectorIndex): Promise<Message[]> {
    const n = this.messages.length;
    const start = this.visibleStart();
    const skip = new Uint8Array(n);
    const latest = new Set<number>();
    let last = -1;
    for (let i = n - 1; i >= 0; i--) {
      if (!canSee(viewer, this.messages[i]!, start, this.audiences)) {
        skip[i] = 1;
        continue;
      }
      if (last === -1) last = i;
      const key = this.keys[i]!;
      if (latest.has(key)) skip[i] = 1;
      else latest.add(key);
    }
    const to = Math.min(request.before ?? n, n);
    if (to <= 0) return [];
    let query: ArrayLike<number>;
    let exclude: { from: number; to: number } | undefined;
    if (request.query !== undefined) query = await this.queryVector(request.query);
    else {
      if (last === -1) return [];
      query = store.get(last);
      exclude = { from: last, to: last + 1 };
    }
    const hits = store.search(query, request.topK, { from: 0, to, exclude, minSimilarity: request.minSimilarity, skip });
    return hits.map((h) => this.messages[h.row]!);
  }

  /** The embedding of a retrieval's query text. */
  private async queryVector(text: string): Promise<ArrayLike<number>> {
    const embedder = this.embedder!;
    const [v] = await (embedder.embedQuery ? embedder.embedQuery([text]) : embedder.embed([text]));
    return v!;
  }

  /** Wait until every message added so far is embedded; rethrows an embedding failure. */
  async flush(): Promise<void> {
    for (;;) {
      if (this.running) await this.running;
      if (this.failure) throw this.failure;
      if (!this.source || this.embedded >= this.messages.length) return;
      this.startEmbedding();
    }
  }

  /** The stored (unit) embedding of a message, once embedded. */
  embeddingOf(id: number): Float32Array | undefined {
    return this.store && id < this.embedded ? this.store.get(id) : undefined;
  }

  /** What an agent said, and the messages of others it was shown (window or retrieved). */
  memoryOf(agent: string): AgentMemory {
    const rec = this.agents.get(agent);
    return {
      said: (rec?.said ?? []).map((i) => this.messages[i]!),
      heard: (rec?.heard ?? []).map((i) => this.messages[i]!),
    };
  }

  /** Bytes held by the vector store (embeddings only). */
  get vectorBytes(): number {
    return this.store?.byteLength ?? 0;
  }

  /** Mark the previous message with the same text as superseded by this one. */
  private noteRepeat(message: Message): void {
    if (message.id >= this.superseded.length) {
      const grown = new Uint8Array(Math.max(64, this.superseded.length * 2));
      grown.set(this.superseded);
      this.superseded = grown;
    }
    const key = textKey(message.content);
    this.keys[message.id] = key;
    const previous = this.latestByText.get(key);
    if (previous !== undefined) this.superseded[previous] = 1;
    this.latestByText.set(key, message.id);
  }

  private record(agent: string): AgentRecord {
    let rec = this.agents.get(agent);
    if (!rec) {
      rec = { said: [], heard: [], heardSet: new Set() };
      this.agents.set(agent, rec);
    }
    return rec;
  }

  /** Embed pending messages in the background, one batch at a time, in order. */
  private startEmbedding(): void {
    if (!this.source || this.running || this.failure) return;
    this.running = (async () => {
      try {
        const source = this.source!;
        this.embedder ??= typeof source === 'function' ? await source() : source;
        const embedder = this.embedder;
        while (this.embedded < this.messages.length) {
          const batch = this.messages.slice(this.embedded).map((m) => m.content);
          const started = performance.now();
          const vectors = await embedder.embed(batch);
          this.embedMs += performance.now() - started;
          if (vectors.length !== batch.length)
            throw new EngineError(`embedder ${embedder.id} returned ${vectors.length} vectors for ${batch.length} texts`, 'EMBEDDER');
          for (const v of vectors) {
            this.store ??= this.makeIndex ? this.makeIndex(v.length) : new VectorStore(v.length, { simd: this.simd });
            this.store.add(v);
          }
          this.embedded += batch.length;
        }
      } catch (err) {
        this.failure = err instanceof Error ? err : new Error(String(err));
      } finally {
        this.running = undefined;
      }
    })();
  }
}

/** A 53-bit hash of a text (two FNV-1a hashes), for spotting exact repeats. */
function textKey(text: string): number {
  let a = 0x811c9dc5,
    b = 0x01000193 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
  }
  return (a >>> 0) * 2 ** 21 + ((b >>> 0) & 0x1fffff);
}
