// The shared memory of a run: every message, the current state's start, the running summary,
// and each agent's view of it (the visibility rule and the recent window).
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
}

/** The plain environment: a list and a window; no retrieval. */
export class ListEnvironment implements EnvironmentMemory {
  readonly messages: Message[] = [];
  summary = '';
  stateStart = 0;
  constructor(readonly visibility: Visibility) {}

  async add(message: Message): Promise<void> {
    this.messages.push(message);
  }

  visible(): readonly Message[] {
    return this.visibility === 'competitive' ? this.messages.slice(this.stateStart) : this.messages;
  }

  async view(request: ViewRequest): Promise<EnvironmentView> {
    const visible = this.visible();
    return { window: visible.slice(Math.max(0, visible.length - request.window)), relevant: [], summary: this.summary };
  }

  async retrieve(): Promise<Message[]> {
    return [];
  }
}
