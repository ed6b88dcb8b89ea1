// Component kinds of a role: what each contributes to the agent's system prompt, and what each
// does before the agent answers (extra LLM calls, retrieval, tools) and adds to its last prompt.
// Keys are processed in the order they appear in the SOP: that order is the prompt order.
import type { KnowledgeBase, KnowledgeMode } from './knowledge-base.js';

/** One contribution to the system prompt. */
export interface SystemPart {
  kind: 'style' | 'task' | 'rule' | 'demonstrations' | 'cot' | 'system' | 'customize';
  text?: string;
  items?: string[];
  role?: string;
  style?: string;
  /** The text list of commands: left out of the prompt sent with the commands as function tools. */
  toolList?: boolean;
}

/** One contribution to the last prompt. */
export interface LastPart {
  kind: 'last' | 'output' | 'knowledge' | 'tool';
  text?: string;
  tag?: string;
}

/** What a component may use while the role's turn is prepared. */
export interface ComponentRuntime {
  agent: { name: string; role: string; style?: string };
  state: string;
  /** JSON pointer of the role's components (for messages). */
  where: string;
  /** Render a SOP text that may hold {{...}} (inputs, memory). */
  text(source: string, key: string): string;
  /** The run's shared key-value memory (written by extract, read by customize). */
  shared: Map<string, string>;
  /** One non-streaming LLM call with the role's private history, this system prompt and last prompt. */
  callWithHistory: (system: string, last: string, what: string) => Promise<string>;
  /** What the role has just observed (the new conversation), used as the retrieval query. */
  observed(): string;
  knowledge(path: string, mode: KnowledgeMode): Promise<KnowledgeBase>;
  /** Write a file inside the run's workspace; false when the run has no workspace. */
  writeWorkspaceFile(relativePath: string, content: string): boolean;
  toolExecutor(slot: string, executor: string | undefined): ToolSlotExecutor | undefined;
  /** Report a problem once per run (same text, same warning). */
  warnOnce(message: string): void;
}

export interface ComponentKind {
  system?(value: unknown, rt: ComponentRuntime, key: string): SystemPart | undefined;
  before?(value: unknown, rt: ComponentRuntime): Promise<LastPart[]>;
}

export interface AssembledComponents {
  system: SystemPart[];
  last: LastPart[];
}

export interface ToolSlotRequest {
  slot: string;
  /** What the role just observed. */
  query: string;
  settings: Record<string, unknown>;
  agent: string;
  role: string;
  state: string;
}

/** An executor bound to a tool slot: its text result enters the role's last prompt. */
export interface ToolSlotExecutor {
  run(request: ToolSlotRequest): Promise<string>;
}
