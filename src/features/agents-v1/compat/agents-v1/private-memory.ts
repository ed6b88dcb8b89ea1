// Each agent's private memory under Agents 1.0 semantics (docs/agents-v1-semantics.md §3.6, §3.11): its
// observations as user messages and its own messages as assistant messages, never cleared
// between states. It is the history sent with the agent's LLM calls.
import type { ChatMessage } from '../../../../core/llm/types.js';

export interface PrivateEntry {
  role: 'user' | 'assistant';
  content: string;
}

export class PrivateMemories {
  private readonly byAgent = new Map<string, PrivateEntry[]>();

  /**
   * @param keepLastPrompts Agents 1.0 quirk (--compat agents-v1, §5 #29): the last prompt of a
   * call is glued onto the stored observation itself, so later calls show it in the history.
   */
  constructor(
    private readonly keepLastPrompts = false,
    /** Entries kept per agent: calls never send more (the largest MAX_CHAT_HISTORY of the SOP). */
    private readonly limit = Number.POSITIVE_INFINITY,
  ) {}

  entries(agent: string): PrivateEntry[] {
    let list = this.byAgent.get(agent);
    if (!list) {
      list = [];
      this.byAgent.set(agent, list);
    }
    return list;
  }

  add(agent: string, entry: PrivateEntry): void {
    const list = this.entries(agent);
    list.push(entry);
    if (list.length > this.limit) list.splice(0, list.length - this.limit);
  }

  /**
   * The chat history of a call: the last `max` entries, with `last` appended to the content of
   * the final one. Returns undefined when the memory is empty (the caller appends `last` to
   * the system prompt instead).
   */
  history(agent: string, max: number, last: string): ChatMessage[] | undefined {
    const list = this.entries(agent);
    if (list.length === 0) return undefined;
    const recent = list.slice(Math.max(0, list.length - max));
    const out: ChatMessage[] = recent.map((e) => ({ role: e.role, content: e.content }));
    if (last) {
      const final = out[out.length - 1]!;
      final.content = final.content + '\n' + last;
      if (this.keepLastPrompts) recent[recent.length - 1]!.content = final.content;
    }
    return out;
  }

  snapshot(): Record<string, PrivateEntry[]> {
    return Object.fromEntries([...this.byAgent].map(([k, v]) => [k, v.map((e) => ({ ...e }))]));
  }

  restore(data: Record<string, PrivateEntry[]>): void {
    this.byAgent.clear();
    for (const [k, v] of Object.entries(data))
      this.byAgent.set(
        k,
        v.map((e) => ({ ...e })),
      );
  }
}
