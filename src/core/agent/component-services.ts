// What the components of a role use while its turn is prepared (src/core/components): the run's shared
// key-value memory (extract writes, customize reads), knowledge bases, the workspace (code writes
// output_code/ there), executors bound to tool slots, and warnings given once. One instance per
// run; `runtime` gives a role's components their ComponentRuntime for one turn.
import { dirname, resolve } from 'node:path';
import { KnowledgeBase, embedderLearns, type KnowledgeMode } from '../components/knowledge-base.js';
import type { ComponentRuntime, ToolSlotExecutor } from '../components/registry.js';
import type { Embedder } from '../memory/embedder.js';
import { renderText } from '../prompt/templates.js';
import { Workspace } from '../workspace/workspace.js';

/** What components tell the run (a subset of its events, src/core/runtime/events.ts). */
export type ComponentEvent = { type: 'warning'; message: string } | { type: 'file_written'; path: string; content: string; turn: number };

export interface ComponentServicesOptions {
  /** The SOP file (knowledge paths are relative to its folder). */
  file: string;
  /** Makes an embedder (knowledge bases; a learning embedder gets one instance per base). */
  makeEmbedder: () => Promise<Embedder>;
  /** The shared embedder (default: one made by makeEmbedder on first use). */
  sharedEmbedder?: () => Promise<Embedder>;
  /** The run's workspace folder (code components write output_code/ there). */
  workspace?: string;
  /** Executors bound to tool slots, by executor name (or slot name when the slot names none). */
  toolExecutors?: Record<string, ToolSlotExecutor>;
  /** Cache folder for embedded knowledge bases (default: see components/knowledge-base.ts). */
  knowledgeCacheDir?: string;
  emit(event: ComponentEvent): void;
  turn(): number;
}

/** The turn a runtime is made for. */
export interface ComponentTurn {
  agent: { name: string; role: string; style?: string };
  state: string;
  /** JSON pointer of the role's components. */
  where: string;
  /** Template context of the role's texts. */
  context: Record<string, unknown>;
  callWithHistory: ComponentRuntime['callWithHistory'];
  observed: () => string;
}

export class ComponentServices {
  /** Shared key-value memory (extract writes, customize reads). */
  readonly shared = new Map<string, string>();
  private readonly knowledgeBases = new Map<string, Promise<KnowledgeBase>>();
  private readonly warned = new Set<string>();
  private readonly workspace?: Workspace;
  private embedder?: Promise<Embedder>;

  constructor(private readonly o: ComponentServicesOptions) {
    if (o.workspace) this.workspace = new Workspace(o.workspace);
  }

  sharedEmbedder(): Promise<Embedder> {
    this.embedder ??= this.o.sharedEmbedder?.() ?? this.o.makeEmbedder();
    return this.embedder;
  }

  warnOnce(message: string): void {
    if (this.warned.has(message)) return;
    this.warned.add(message);
    this.o.emit({ type: 'warning', message });
  }

  runtime(t: ComponentTurn): ComponentRuntime {
    return {
      agent: t.agent,
      state: t.state,
      where: t.where,
      text: (source, key) => renderText(source, t.context, `${t.where}/${key}`),
      shared: this.shared,
      callWithHistory: t.callWithHistory,
      observed: t.observed,
      knowledge: (path, mode) => this.knowledge(path, mode),
      writeWorkspaceFile: (relativePath, content) => {
        if (!this.workspace) return false;
        this.workspace.write(relativePath, content);
        this.o.emit({ type: 'file_written', path: `workspace/${relativePath}`, content, turn: this.o.turn() });
        return true;
      },
      toolExecutor: (slot, executor) => this.o.toolExecutors?.[executor ?? slot],
      warnOnce: (message) => this.warnOnce(message),
    };
  }

  private knowledge(path: string, mode: KnowledgeMode): Promise<KnowledgeBase> {
    const file = resolve(dirname(resolve(this.o.file)), path);
    const key = `${mode}\u0000${file}`;
    let kb = this.knowledgeBases.get(key);
    if (!kb) {
      kb = (async () => {
        const shared = await this.sharedEmbedder();
        // An embedder that learns from what it embeds gets its own instance per knowledge base.
        const embedder = embedderLearns(shared) ? await this.o.makeEmbedder() : shared;
        return KnowledgeBase.load({ file, mode, embedder, cacheDir: this.o.knowledgeCacheDir });
      })();
      this.knowledgeBases.set(key, kb);
    }
    return kb;
  }

  /** The shared memory, for checkpoints. */
  snapshotShared(): Record<string, string> {
    return Object.fromEntries(this.shared);
  }

  restoreShared(saved: Record<string, string> | undefined): void {
    this.shared.clear();
    for (const [k, v] of Object.entries(saved ?? {})) this.shared.set(k, v);
  }
}
