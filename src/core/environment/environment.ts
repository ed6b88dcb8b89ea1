// The shared memory of a run: every message, the current state's start, the running summary,
// and each agent's view of it (the visibility rule and the recent window).
import { canSee, PUBLIC, type AudienceRules, type Viewer } from './audience.js';
import type { Message } from './message.js';

export type Visibility = 'cooperative' | 'competitive';

export interface ViewRequest {
  /** The agent asking (its own messages may be labelled differently by callers). */
  agent?: string;
  /** Size of the recent window. */
  window: number;
  /** Number of relevant earlier messages to retrieve (0: none). */
  topK: number;
  minSimilarity?: number;
  /** Query for retrieval (defaults to the last visible message). */
  query?: string;
}

export interface RetrieveRequest {
  /** Number of messages to return (0: none). */
  topK: number;
  minSimilarity?: number;
  /** Query text (default: the last message, whose stored embedding is reused). */
  query?: string;
  /** Only messages before this position are candidates (e.g. the start of the window shown). */
  before?: number;
  /** Only messages this viewer may see are candidates, and the default query is the last of them (audiences). */
  viewer?: Viewer;
}

export interface EnvironmentView {
  /** Messages the agent may see, oldest first, ending with the recent window. */
  window: Message[];
  /** Relevant earlier visible messages, most similar first, never overlapping the window. */
  relevant: Message[];
  summary: string;
}

/** What the run loop needs from the environment memory. */
export interface EnvironmentMemory {
  readonly visibility: Visibility;
  readonly messages: readonly Message[];
  summary: string;
  /** Index of the first message of the current state's visit. */
  stateStart: number;
  add(message: Message): Promise<void>;
  /** Messages visible under the visibility rule (competitive: since the state began). */
  visible(): readonly Message[];
  view(request: ViewRequest): Promise<EnvironmentView>;
  /** Visible earlier messages most similar to the query, most similar first (none without embeddings). */
  retrieve(request: RetrieveRequest): Promise<Message[]>;
  /** The SOP's audience rules (docs/memory.md#audiences); view, retrieve and summaries follow them when active. */
  audiences?: AudienceRules;
  /** The messages a viewer may see, oldest first (the environment type's rule and the audiences). */
  seenBy(viewer: Viewer): Message[];
  /** The running summary a viewer is shown (the one summary unless audiences keep one per viewer). */
  summaryFor(viewer: Viewer | undefined): string;
  /** Set the summary of some viewers (summary = the public one, which setting `summary` resets everyone to). */
  setSummary(viewers: readonly string[], text: string): void;
  /** The summaries kept per viewer that differ from the public one (for checkpoints). */
  viewerSummaries(): Record<string, string>;
}

/** Per-viewer summaries over a public one: setting `summary` gives everyone that text. */
export class ViewerSummaries {
  private publicText = '';
  private readonly own = new Map<string, string>();
  get summary(): string {
    return this.publicText;
  }
  set summary(text: string) {
    this.publicText = text;
    this.own.clear();
  }
  summaryFor(viewer: Viewer | undefined): string {
    if (viewer === undefined || viewer === PUBLIC) return this.publicText;
    if (typeof viewer === 'string') return this.own.get(viewer) ?? this.publicText;
    // Common ground: a summary every member has; else the public one.
    const texts = new Set(viewer.map((v) => this.summaryFor(v)));
    return texts.size === 1 ? [...texts][0]! : this.publicText;
  }
  setSummary(viewers: readonly string[], text: string): void {
    for (const v of viewers) {
      if (v === PUBLIC) this.publicText = text;
      else this.own.set(v, text);
    }
  }
  viewerSummaries(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [v, t] of this.own) if (t !== this.publicText) out[v] = t;
    return out;
  }
}

/** The plain environment: a list and a window; no retrieval. Its summaries are ViewerSummaries'. */
export class ListEnvironment extends ViewerSummaries implements EnvironmentMemory {
  readonly messages: Message[] = [];
  stateStart = 0;
  audiences?: AudienceRules;
  constructor(readonly visibility: Visibility) {
    super();
  }

  seenBy(viewer: Viewer): Message[] {
    const start = this.visibility === 'competitive' ? this.stateStart : 0;
    return this.messages.filter((m) => canSee(viewer, m, start, this.audiences));
  }

  async add(message: Message): Promise<void> {
    this.messages.push(message);
  }

  visible(): readonly Message[] {
    return this.visibility === 'competitive' ? this.messages.slice(this.stateStart) : this.messages;
  }

  async view(request: ViewRequest): Promise<EnvironmentView> {
    const agent = request.agent;
    const visible = agent !== undefined && this.audiences?.active ? this.seenBy(agent) : this.visible();
    return { window: visible.slice(Math.max(0, visible.length - request.window)), relevant: [], summary: this.summaryFor(agent) };
  }

  async retrieve(): Promise<Message[]> {
    return [];
  }
}
