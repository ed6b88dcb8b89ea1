// Memory files of a run (plan, logs, code_library, any others a SOP declares): named texts
// kept as NAME.md in the run's memory folder, rendered into prompts as {{memory.NAME}}.
// A sub-flow gets its own folder; files it shares with its caller are links to the caller's.
// Without a folder (in-process runs, tests) the texts live in memory only.
import { EngineError } from '../../shared/errors.js';
import type { Sop } from '../../format/sop/types.js';
import { contextVar } from '../../shared/util/context-vars.js';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { readNoFollow, writeNoFollow } from './workspace.js';
import { PathEscapeError, resolveInside } from '../../shared/workspace/safe-path.js';
import { FileAccessError, UnsafeFileError, replacePlainFile } from '../../shared/workspace/safe-file.js';

export const MEMORY_NAME = /^[A-Za-z_][A-Za-z0-9_.-]*$/;
/** files: a memory file larger than this (16 MiB) is refused (code may have inflated it). */
export const MAX_MEMORY_FILE_BYTES = 16 * 1024 * 1024;
/** Every run has a logs file: one line per executor result. */
export const LOGS = 'logs';

export class MemoryError extends EngineError {
  constructor(message: string) {
    super(message, 'MEMORY_FILE');
    this.name = 'MemoryError';
  }
}

export interface MemoryWrite {
  name: string;
  op: 'write' | 'append';
  path?: string;
  bytes: number;
}

export interface MemoryLink {
  store: MemoryFiles;
  name: string;
}

export interface MemoryFilesOptions {
  /** Folder of the files; omitted: kept in memory only. */
  dir?: string;
  /** Declared files and their initial content. */
  initial: Record<string, string>;
  /** Files shared with another store (a caller's): name here -> the other store's file. */
  links?: Record<string, MemoryLink>;
  onWrite?: (w: MemoryWrite) => void;
  /** File extension per name (default .md); e.g. .json for a task board. */
  extensions?: Record<string, string>;
  /** durability: start from the initial contents even where files exist (a sub-flow replayed after a crash). */
  fresh?: boolean;
}

/**
 * The memory files a SOP's memory_types declare (structured files, kept as NAME.json): their
 * initial content (the SOP's memory entry of that name, else empty) and their extension.
 */
export function typedMemoryFiles(sop: Pick<Sop, 'memory_types' | 'memory'>): {
  initial: Record<string, string>;
  extensions: Record<string, string>;
} {
  const initial: Record<string, string> = {};
  const extensions: Record<string, string> = {};
  const given = sop.memory ?? {};
  for (const name of Object.keys(sop.memory_types ?? {})) {
    initial[name] = Object.prototype.hasOwnProperty.call(given, name) ? given[name]! : '';
    extensions[name] = '.json';
  }
  return { initial, extensions };
}

/** The run's memory files, shared through the run's context (the actions plugin sets it; the scientist's views read it). */
export const MEMORY_FILES = contextVar<MemoryFiles>('memoryFiles');

/** --memory-dir: the input-made memory files this run's inputs replaced (the mission from a new --goal); the actions plugin sets it. */
export const MEMORY_REPLACED = contextVar<string[]>('memoryReplaced');

export class MemoryFiles {
  private readonly texts = new Map<string, string>();
  private readonly declared: string[];
  private readonly links: Record<string, MemoryLink>;
  private readonly taps = new Set<(name: string, content: string) => void>();
  private created = false;

  constructor(private readonly o: MemoryFilesOptions) {
    this.links = { ...(o.links ?? {}) };
    const names = new Set([...Object.keys(o.initial), ...Object.keys(this.links), LOGS]);
    for (const name of names) {
      if (!MEMORY_NAME.test(name)) throw new MemoryError(`memory file name "${name}" must match ${MEMORY_NAME}`);
      const link = this.links[name];
      if (link && !link.store.has(link.name))
        throw new MemoryError(`memory file "${name}" is linked to "${link.name}", which the caller does not have`);
    }
    this.declared = [...names];
    for (const name of this.declared) if (!this.links[name]) this.texts.set(name, o.initial[name] ?? '');
  }

  get dir(): string | undefined {
    return this.o.dir;
  }

  names(): string[] {
    return [...this.declared];
  }

  has(name: string): boolean {
    return this.declared.includes(name);
  }

  /** Write the initial contents to the folder (once). */
  init(): this {
    if (this.created || !this.o.dir) return this;
    mkdirSync(this.o.dir, { recursive: true });
    this.created = true;
    for (const [name, text] of this.texts) {
      const file = this.ownPath(name)!;
      // files: a fresh start replaces whatever is there (a link or pipe is never written through)
      if (this.o.fresh) replacePlainFile(file, text);
      else if (!existsSync(file)) writeNoFollow(file, text, false);
    }
    return this;
  }

  private known(name: string): void {
    if (!this.has(name)) {
      throw new MemoryError(`unknown memory file "${name}"; this SOP declares: ${this.declared.join(', ')}`);
    }
  }

  /** Absolute path of a file, or undefined when kept in memory. */
  pathOf(name: string): string | undefined {
    this.known(name);
    const link = this.links[name];
    if (link) return link.store.pathOf(link.name);
    if (!this.o.dir) return undefined;
    mkdirSync(this.o.dir, { recursive: true });
    const ext = this.o.extensions && Object.prototype.hasOwnProperty.call(this.o.extensions, name) ? this.o.extensions[name] : '.md';
    return resolveInside(this.o.dir, `${name}${ext}`);
  }

  /** Path of a file of this store, without refusing what is there (the name is checked: one plain segment). */
  private ownPath(name: string): string | undefined {
    if (!this.o.dir) return undefined;
    const ext = this.o.extensions && Object.prototype.hasOwnProperty.call(this.o.extensions, name) ? this.o.extensions[name] : '.md';
    return join(this.o.dir, `${name}${ext}`);
  }

  read(name: string): string {
    this.known(name);
    const link = this.links[name];
    if (link) return link.store.read(link.name);
    const file = this.pathOf(name);
    if (file && this.created && existsSync(file)) {
      const text = readNoFollow(file, undefined, MAX_MEMORY_FILE_BYTES);
      this.texts.set(name, text);
      return text;
    }
    return this.texts.get(name) ?? '';
  }

  write(name: string, text: string): void {
    this.put(name, text, 'write');
  }

  append(name: string, text: string): void {
    this.put(name, text, 'append');
  }

  private put(name: string, text: string, op: 'write' | 'append'): void {
    this.known(name);
    this.raw(name, text, op);
    this.o.onWrite?.({ name, op, path: this.pathOf(name), bytes: Buffer.byteLength(text) });
  }

  /** Write without an event (used through links by a sub-flow's store). */
  private raw(name: string, text: string, op: 'write' | 'append'): void {
    const link = this.links[name];
    if (link) {
      // Through a chain of links, every store's taps hear of the write (durability: an
      // executor's result must hold the files it changed, even a caller's caller's).
      link.store.raw(link.name, text, op);
      const next = link.store.read(link.name);
      for (const tap of this.taps) tap(name, next);
      return;
    }
    this.init();
    const next = op === 'append' ? this.read(name) + text : text;
    const file = this.pathOf(name);
    if (file) writeNoFollow(file, text, op === 'append');
    this.texts.set(name, next);
    for (const tap of this.taps) tap(name, next);
  }

  /**
   * Be told the whole new content of this store's own files at every write (also writes made
   * through a sub-flow's link). Returns the function that stops it.
   */
  tap(fn: (name: string, content: string) => void): () => void {
    this.taps.add(fn);
    return () => this.taps.delete(fn);
  }

  /** Set a file's content with no event (a resumed run putting back what the journal says). */
  restore(name: string, content: string): void {
    this.known(name);
    const link = this.links[name];
    if (link) return link.store.restore(link.name, content);
    this.init();
    const file = this.ownPath(name);
    if (file) {
      mkdirSync(this.o.dir!, { recursive: true });
      // files: what the journal says replaces whatever is there (a planted link or pipe included)
      replacePlainFile(file, content);
    }
    this.texts.set(name, content);
  }

  /** The initial content the SOP declares for a file. */
  initial(name: string): string {
    return this.o.initial[name] ?? '';
  }

  /** Whether a file belongs to this store (not a link to a caller's). */
  owns(name: string): boolean {
    return this.has(name) && !this.links[name];
  }

  /** Current contents of every file, for templates ({{memory.NAME}}). */
  snapshot(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const name of this.declared) {
      try {
        out[name] = this.read(name);
      } catch (err) {
        // files: a memory file code replaced by a link, a pipe or a huge file is not read into prompts
        if (!(
          err instanceof UnsafeFileError ||
          err instanceof FileAccessError ||
          err instanceof PathEscapeError ||
          err instanceof MemoryError
        ))
          throw err;
        out[name] = `(memory file "${name}" cannot be read: ${err.message})`;
      }
    }
    return out;
  }
}
