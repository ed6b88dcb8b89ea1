// Actions in the run loop: for a state that declares commands, the agent's reply is parsed as
// one command (with bounded retries that send the problem back to the agent), its executor
// runs, and the result becomes an 'action' message in the environment and a line in the logs
// memory file. `finish` ends the state; a `sop` command runs a nested Run. The Run calls into
// this class at a few marked places and keeps no action logic of its own.
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { ComponentPart } from '../../core/agent/components.js';
import type { CallMeta, ChatMessage } from '../../core/llm/types.js';
import type { RunEvent } from '../../core/runtime/events.js';
import type { StateRuntime } from '../../core/runtime/controller.js';
import { SopError } from '../../format/sop/diagnostics.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import type { SubflowRequest, SubflowResult } from '../../core/commands/executor.js';
import { LOGS, MEMORY_REPLACED, MemoryFiles, typedMemoryFiles } from '../../core/workspace/memory-files.js';
import { CommandConfigError, checkCommand, compileCommands, grantedTools, type CommandSpec } from '../../core/commands/commands.js';
import { initialMemory, inputMadeMemory } from './memory-initial.js';
import { parseCommandReply } from '../../core/llm/command-reply.js';
import { commandMeta, commandPart, commandTools, commandViews, type CommandView } from './prompt.js';
import { makeRedactor, type Redactor } from '../../shared/util/redact.js';
import { CODE_SESSIONS, CodeSessions } from './executors/session/code-session.js';
import { ContextVars } from '../../shared/util/context-vars.js';
import { followInputs } from '../../core/workspace/memory-dir.js';
import { ActionError, recoverable } from './errors.js';
import { execContext, type CommandWhere } from './exec-context.js';
import { runCommand } from './execute.js';
import type { ActionHost, ActionOptions } from './host.js';
import { runSubflow as runNestedFlow } from './subflow.js';

export const DEFAULT_COMMAND_RETRIES = 2;

export interface ActionSnapshot {
  finished: Record<string, { result: string; summary?: string }>;
  subflows: Record<string, number>;
  /** Drafts rejected in a row, by "state/command" (reviews with max_rejections). */
  rejections?: Record<string, number>;
  /** What executors noted for their next call, by "state/executor". */
  notes?: Record<string, unknown>;
  result?: string;
  summary?: string;
  stopped?: string;
  /** Cells run in the code sessions (a resumed run tells the agent its session started empty). */
  code_cells?: Record<string, number>;
}

function oneLine(text: string, max = 300): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 3)}...` : t;
}

export class ActionRuntime {
  readonly memory: MemoryFiles;
  /** Each command state's commands and their views, compiled at first need (the run's plugins contribute executors). */
  private readonly compiled = {
    specs: new Map<string, Record<string, CommandSpec>>(),
    views: new Map<string, CommandView[]>(),
    done: false,
  };
  /** States ended by finish (or an accepted review), waiting for the transition. */
  private readonly finished = new Map<string, { result: string; summary?: string; next?: string }>();
  private readonly subflowCounts = new Map<string, number>();
  private readonly rejections = new Map<string, number>();
  private readonly notes = new Map<string, unknown>();
  private readonly baseDir: string;
  private readonly root: { emit(event: RunEvent): void; turn(): number };
  private readonly redact: Redactor;
  /** The result of the SOP so far: that of the last state ended by finish. */
  result: string | undefined;
  summary: string | undefined;
  /** Why the SOP has no result (a command state ran out of turns). */
  stopped: string | undefined;
  /** The run's stateful code sessions (shared with sub-flows); closed by the run that made them. */
  readonly sessions: CodeSessions;
  private readonly ownsSessions: boolean;
  /** Where sub-flows' memory folders go (the run folder's memory/, even when the run's own files are in a memory folder). */
  private readonly subflowBase: string | undefined;
  /** The run's typed values: the code sessions are shared there with the code executor. */
  private readonly vars: ContextVars;

  constructor(
    private readonly host: ActionHost,
    private readonly o: ActionOptions = {},
  ) {
    this.baseDir = dirname(resolve(host.file));
    this.redact = host.redact ?? makeRedactor();
    this.root = o.root ?? { emit: (e) => host.emit(e), turn: () => host.turn() };
    this.ownsSessions = o.sessions === undefined;
    this.sessions =
      o.sessions ??
      new CodeSessions({
        cwd: o.workspace ?? process.cwd(),
        sandbox: o.sandbox === true,
        network: o.sandboxNetwork === true,
        env: { SOP_WORKSPACE: o.workspace ?? '', SOP_LAUNCH_DIR: o.launchDir ?? process.cwd() },
      });
    this.vars = host.vars ?? new ContextVars();
    this.vars.set(CODE_SESSIONS, this.sessions);
    const runMemory = o.memoryDir ?? (o.runDir ? join(o.runDir, 'memory') : undefined);
    // --memory-dir: the top-level run's files last across runs; sub-flows keep theirs in the run folder
    const memoryDir = (o.depth ?? 0) === 0 && o.persistentMemoryDir ? o.persistentMemoryDir : runMemory;
    this.subflowBase = runMemory;
    const declared = (host.sop.memory ?? {}) as Record<string, string>;
    const initial = initialMemory(declared, host.inputs);
    const typed = typedMemoryFiles(host.sop); // memory_types add structured memory files (memory/NAME.json)
    this.memory = new MemoryFiles({
      dir: memoryDir,
      // durability: a sub-flow's folder is its own, so files found there are an interrupted attempt's
      fresh: (o.depth ?? 0) > 0,
      initial: { ...initial, ...typed.initial },
      extensions: typed.extensions,
      links: o.memoryLinks,
      onWrite: (w) => {
        host.emit({ type: 'memory_written', name: w.name, op: w.op, bytes: w.bytes, ...(w.path ? { path: w.path } : {}) });
        this.fileWritten(w.name);
      },
    });
    if (memoryDir !== undefined && memoryDir !== runMemory) this.followInputs(memoryDir, declared, initial);
    const commandStates = Object.values(host.sop.states).some(
      (st) => Object.keys(st.commands ?? {}).length > 0 || grantedTools(st).length > 0,
    );
    if (commandStates || host.sop.memory) this.memory.init();
  }

  private get specs(): Map<string, Record<string, CommandSpec>> {
    return this.compile().specs;
  }

  private get views(): Map<string, CommandView[]> {
    return this.compile().views;
  }

  /** The commands of every state, compiled against the executors the run's features contribute (once). */
  compile(): { specs: Map<string, Record<string, CommandSpec>>; views: Map<string, CommandView[]> } {
    const c = this.compiled;
    if (c.done) return c;
    const host = this.host;
    const executors = host.executors();
    const diags = [];
    for (const [name, state] of Object.entries(host.sop.states)) {
      if ((!state.commands || Object.keys(state.commands).length === 0) && grantedTools(state).length === 0) continue;
      try {
        const specs = compileCommands(name, state, { baseDir: this.baseDir, loadSop: (f) => host.loadSop(f).sop, executors });
        c.specs.set(name, specs);
        c.views.set(name, commandViews(specs));
      } catch (err) {
        if (!(err instanceof CommandConfigError) && !(err instanceof SopError)) throw err;
        diags.push(
          err instanceof SopError
            ? { severity: 'error' as const, pointer: `/states/${name}/commands`, file: host.file, message: err.message.split('\n')[0]! }
            : { severity: 'error' as const, pointer: err.pointer, file: host.file, message: err.message },
        );
      }
    }
    if (diags.length) throw new SopError(diags);
    c.done = true;
    return c;
  }

  /** Notices to give once the run has started (a mission a new goal replaced). */
  private notices: string[] = [];

  /** --memory-dir: files made from the inputs (the mission from --goal) follow this run's inputs; the old content goes to the logs. */
  private followInputs(dir: string, declared: Record<string, string>, initial: Record<string, string>): void {
    const files = inputMadeMemory(declared)
      .filter((name) => this.memory.owns(name))
      .map((name) => ({ name, file: this.memory.pathOf(name)!, initial: initial[name] ?? '' }));
    const logs = this.memory.pathOf(LOGS)!;
    const replaced = followInputs(dir, files, logs, { id: this.host.runId, time: new Date().toISOString() });
    this.vars.set(
      MEMORY_REPLACED,
      replaced.map((r) => r.name),
    );
    for (const r of replaced)
      this.notices.push(
        `new inputs: memory file "${r.name}" (${r.file}) now holds this run's ${r.name}; the previous one was appended to ${logs}`,
      );
  }

  /** The notices of the run's start, given once (as warnings). */
  giveNotices(): void {
    for (const message of this.notices.splice(0)) this.host.emit({ type: 'warning', message });
  }

  /** durability: journal a memory file's whole content, so a fork can rebuild it (path relative to the run folder). */
  private fileWritten(name: string): void {
    const path = this.memory.pathOf(name);
    if (path && this.o.runDir && this.inRunFolder(path))
      this.root.emit({
        type: 'file_written',
        path: relative(this.o.runDir, path),
        content: this.memory.read(name),
        turn: this.root.turn(),
      });
  }

  /** Whether a memory file is in the run folder (a --memory-dir file is not journaled, nor put back on resume). */
  private inRunFolder(path: string): boolean {
    const rel = relative(this.o.runDir ?? '', path);
    return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
  }

  /** Checkpointable (src/features/journal/snapshot.ts): what a resumed run needs besides the journal's events. */
  checkpoint(): ActionSnapshot {
    return {
      finished: Object.fromEntries(this.finished),
      subflows: Object.fromEntries(this.subflowCounts),
      ...(this.rejections.size ? { rejections: Object.fromEntries(this.rejections) } : {}),
      ...(this.notes.size ? { notes: Object.fromEntries(this.notes) } : {}),
      ...(this.result !== undefined ? { result: this.result } : {}),
      ...(this.summary !== undefined ? { summary: this.summary } : {}),
      ...(this.stopped !== undefined ? { stopped: this.stopped } : {}),
      ...(this.ownsSessions ? { code_cells: this.sessions.checkpoint() } : {}),
    };
  }

  /** The run is over: its code sessions end (a sub-flow's shared ones end with its caller's run). */
  close(): void {
    if (this.ownsSessions) this.sessions.close();
  }

  /** Back to a checkpoint; memory files get the content the journal's file_written events gave them. */
  restoreCheckpoint(state: unknown, context: { files: Record<string, string> }): void {
    const s = state as Partial<ActionSnapshot>;
    this.finished.clear();
    for (const [k, v] of Object.entries(s.finished ?? {})) this.finished.set(k, v);
    this.subflowCounts.clear();
    for (const [k, v] of Object.entries(s.subflows ?? {})) this.subflowCounts.set(k, v);
    this.rejections.clear();
    for (const [k, v] of Object.entries(s.rejections ?? {})) this.rejections.set(k, v);
    this.notes.clear();
    for (const [k, v] of Object.entries(s.notes ?? {})) this.notes.set(k, v);
    this.result = s.result;
    this.summary = s.summary;
    this.stopped = s.stopped;
    if (this.ownsSessions) this.sessions.restore(s.code_cells);
    for (const name of this.memory.names()) {
      const path = this.memory.owns(name) ? this.memory.pathOf(name) : undefined;
      if (!path || !this.o.runDir || !this.inRunFolder(path)) continue;
      this.memory.restore(name, context.files[relative(this.o.runDir, path)] ?? this.memory.initial(name));
    }
  }

  /** States whose commands the run's features were asked for (at their first turn). */
  private readonly prepared = new Set<string>();

  /** The commands the run's features add to a state, at its first turn (the tools it grants: MCP servers start on first use). */
  async prepareCommands(state: ResolvedState): Promise<void> {
    if (this.prepared.has(state.name)) return;
    const grants = grantedTools(state.def);
    if (grants.length > 0 && !this.host.contributesCommands())
      throw new ActionError(`state "${state.name}" grants MCP tools (${grants.join(', ')}), and this run has no MCP servers`);
    const declared = this.specs.get(state.name) ?? {};
    const specs = await this.host.stateCommands(declared, state);
    if (specs !== declared) {
      this.specs.set(state.name, specs);
      this.views.set(state.name, commandViews(specs));
    }
    this.prepared.add(state.name);
  }

  /** Whether the agents of this state reply with commands. */
  declares(state: ResolvedState): boolean {
    return this.specs.has(state.name);
  }

  /** Template values: {{memory.NAME}} for every memory file. */
  memorySnapshot(): Record<string, string> {
    return this.memory.snapshot();
  }

  /** The commands part of the system prompt, or nothing for a speech state. */
  promptParts(state: ResolvedState, context: object): ComponentPart[] {
    const views = this.views.get(state.name);
    return views ? [commandPart(this.host.templates, views, context)] : [];
  }

  commandList(state: ResolvedState): CommandView[] | undefined {
    return this.views.get(state.name);
  }

  callMeta(state: ResolvedState, llm: { tool_calls?: boolean } = {}): Pick<CallMeta, 'commands' | 'tools'> {
    const views = this.views.get(state.name);
    if (!views) return {};
    // function calling is the default (providers without tools read the JSON command format); tool_calls: false turns it off
    return { commands: commandMeta(views), ...(llm.tool_calls !== false ? { tools: commandTools(views) } : {}) };
  }

  /**
   * Where a command state goes next: on after finish, on after max_turns (a warning: the state
   * stopped without finishing), else it stays. Undefined for states without commands.
   */
  transit(state: ResolvedState, rt: StateRuntime): { target: string; reason: 'finish' | 'max_turns' | 'direct' } | undefined {
    if (!this.declares(state)) return undefined;
    const on = state.nextStates['1'] ?? state.name;
    const done = this.finished.get(state.name);
    if (done) {
      this.finished.delete(state.name);
      this.clearRejections(state.name);
      // scientist: an executor may choose the way on (finish.next, a next_states key)
      const target =
        done.next === undefined
          ? on
          : Object.prototype.hasOwnProperty.call(state.nextStates, done.next)
            ? state.nextStates[done.next]
            : undefined;
      if (target === undefined)
        throw new ActionError(`state "${state.name}" has no next_states["${done.next}"], which a command asked to take`);
      return { target, reason: 'finish' };
    }
    if (state.maxTurns !== undefined && rt.chatNums >= state.maxTurns) {
      // A review with max_rejections never lets its state go on with a draft the user rejected.
      const pending = [...this.rejections].find(([k, n]) => n > 0 && k.startsWith(`${state.name}/`));
      this.clearRejections(state.name);
      if (pending)
        throw new ActionError(
          `state "${state.name}" reached its max_turns (${state.maxTurns}) with the last draft of ${pending[0].slice(state.name.length + 1)} ` +
            `rejected by the user (${pending[1]} times in a row); not going on with a rejected draft`,
        );
      this.stopped = `state "${state.name}" reached its max_turns (${state.maxTurns}) without a finish command`;
      this.result = undefined;
      this.summary = undefined;
      this.host.emit({ type: 'warning', message: this.stopped });
      return { target: on, reason: 'max_turns' };
    }
    return { target: state.name, reason: 'direct' };
  }

  private clearRejections(state: string): void {
    for (const k of [...this.rejections.keys()]) if (k.startsWith(`${state}/`)) this.rejections.delete(k);
  }

  /**
   * One command turn: ask the agent (through `act`, which assembles its prompt and calls the
   * LLM; `extra` holds the rejected replies and the problems found), until the reply is a valid
   * command or the retries run out. Returns the command, as recorded, and the step that runs it
   * once the command message is in the environment.
   */
  async commandTurn(
    state: ResolvedState,
    role: string,
    agent: string,
    turn: number,
    act: (extra: ChatMessage[]) => Promise<string>,
  ): Promise<{ content: string; execute: () => Promise<void> }> {
    const specs = this.specs.get(state.name)!;
    const retries = state.def.command_retries ?? DEFAULT_COMMAND_RETRIES;
    const extra: ChatMessage[] = [];
    for (let attempt = 1; ; attempt++) {
      const reply = await act(extra);
      const checked = checkCommand(parseCommandReply(reply), specs);
      if (checked.ok) {
        const content = JSON.stringify({ command: checked.spec.name, command_args: checked.args });
        return { content, execute: () => this.execute(checked.spec, checked.args, state, role, agent, turn) };
      }
      this.host.emit({ type: 'command_rejected', state: state.name, agent, turn, attempt, error: checked.error, reply });
      if (attempt > retries) {
        throw new ActionError(
          `${agent} (${role}) in state "${state.name}" gave no valid command in ${attempt} ${attempt === 1 ? 'reply' : 'replies'}; ` +
            `the last problem: ${checked.error}`,
        );
      }
      extra.push(
        { role: 'assistant', content: reply },
        {
          role: 'user',
          content: this.host.templates.render('command_retry', {
            error: checked.error,
            commands: this.views.get(state.name),
            attempt,
            retries,
          }),
        },
      );
    }
  }

  /** files: the logs file was refused once (a link or pipe planted by code); warned about once. */
  private logsRefused = false;

  private async execute(
    spec: CommandSpec,
    args: Record<string, unknown>,
    state: ResolvedState,
    role: string,
    agent: string,
    turn: number,
  ): Promise<void> {
    const where: CommandWhere = { state, role, agent, turn };
    const res = await runCommand(spec, args, where, {
      host: this.host,
      options: this.o,
      memory: this.memory,
      sessions: this.sessions,
      redact: this.redact,
      context: () =>
        execContext(spec, where, {
          host: this.host,
          options: this.o,
          memory: this.memory,
          vars: this.vars,
          baseDir: this.baseDir,
          rejections: this.rejections.get(`${state.name}/${spec.name}`) ?? 0,
          note: this.notes.get(`${state.name}/${spec.executor.name}`),
          runSubflow: (req) => this.runSubflow(spec.name, req, spec.settings.session === 'own'),
        }),
      fileWritten: (name) => this.fileWritten(name),
    });
    const executor = spec.executor.name;
    try {
      this.memory.append(LOGS, `- [turn ${turn}] ${spec.name}${res.ok ? '' : ' (failed)'}: ${oneLine(res.summary)}\n`);
    } catch (err) {
      // files: a logs file code replaced by a link or a pipe is refused, and the run goes on
      if (!recoverable(err)) throw err;
      if (!this.logsRefused)
        this.host.emit({
          type: 'warning',
          message: `could not add the line of ${spec.name} to the logs memory file, nor will later lines be: ${(err as Error).message}`,
        });
      this.logsRefused = true;
    }
    if (res.note !== undefined) this.notes.set(`${state.name}/${executor}`, res.note);
    if (res.rejected !== undefined) {
      const key = `${state.name}/${spec.name}`;
      if (res.rejected) this.rejections.set(key, (this.rejections.get(key) ?? 0) + 1);
      else this.rejections.delete(key);
    }
    if (res.finish) {
      this.finished.set(state.name, res.finish);
      this.result = res.finish.result;
      this.summary = res.finish.summary;
      this.stopped = undefined;
    }
  }

  private runSubflow(command: string, req: SubflowRequest, ownSessions = false): Promise<SubflowResult> {
    return runNestedFlow(command, req, ownSessions, {
      host: this.host,
      options: this.o,
      memory: this.memory,
      sessions: this.sessions,
      counts: this.subflowCounts,
      base: this.subflowBase,
      root: this.root,
    });
  }
}
