// What an executor is given when one of its commands runs (ExecContext of src/core/commands/executor.ts):
// the command's settings and where it was issued, the run's memory files, workspace, people,
// flags, typed values (the code sessions), code library and templates, and a way to run a sub-flow.
import type { Message } from '../../core/environment/message.js';
import { renderText } from '../../core/prompt/templates.js';
import type { ResolvedState } from '../../format/sop/resolved.js';
import type { ExecContext, SubflowRequest, SubflowResult } from '../../core/commands/executor.js';
import { codeLibrary } from './executors/library.js';
import { libraryToMemoryDir } from '../../core/workspace/memory-dir.js';
import type { MemoryFiles } from '../../core/workspace/memory-files.js';
import type { ContextVars } from '../../shared/util/context-vars.js';
import { Workspace } from '../../core/workspace/workspace.js';
import type { CommandSpec } from '../../core/commands/commands.js';
import { ActionError } from './errors.js';
import type { ActionHost, ActionOptions } from './host.js';

/** Where a command was issued: its state, the role and agent that issued it, and the turn. */
export interface CommandWhere {
  state: ResolvedState;
  role: string;
  agent: string;
  turn: number;
}

/** What the context is made from: the run's parts, and the executor's state in this command state. */
export interface ExecContextParts {
  host: ActionHost;
  options: ActionOptions;
  memory: MemoryFiles;
  /** The run's typed values (the code sessions among them). */
  vars: ContextVars;
  baseDir: string;
  /** Drafts of this command rejected in a row (reviews with max_rejections). */
  rejections: number;
  /** What the executor noted at its last call in this state. */
  note: unknown;
  runSubflow(req: SubflowRequest): Promise<SubflowResult>;
}

export function execContext(spec: CommandSpec, where: CommandWhere, p: ExecContextParts): ExecContext {
  const { host, options: o } = p;
  const ctx: ExecContext = {
    command: spec.name,
    settings: spec.settings,
    state: where.state.name,
    agent: where.agent,
    role: where.role,
    turn: where.turn,
    memory: p.memory,
    workspace: () => {
      if (!o.workspace)
        throw new ActionError(
          `command "${spec.name}" needs a workspace folder, and this run has none (sop run gives every run one; in-process runs set actions.workspace)`,
        );
      return new Workspace(o.workspace);
    },
    human: host.human,
    autoRun: o.autoRun === true,
    yes: o.yes === true,
    sandbox: o.sandbox === true,
    sandboxNetwork: o.sandboxNetwork === true,
    codeRuns: () => codeRunsOf(host.env.messages),
    vars: p.vars,
    library: {
      inspect: (code, lang) => codeLibrary(ctx).inspect(code, lang),
      save: (code, functions, lang, module) => {
        const saved = codeLibrary(ctx).save(code, functions, lang, module);
        // --memory-dir: code another executor saves (the task board's code framework) goes back to
        // the memory folder too, as the library executor's save does (src/features/actions/execute.ts)
        if (o.persistentMemoryDir && o.workspace) libraryToMemoryDir(o.workspace, o.persistentMemoryDir, module);
        return saved;
      },
    },
    templates: host.templates,
    signal: host.signal,
    baseDir: p.baseDir,
    launchDir: o.launchDir ?? process.cwd(),
    renderText: (text, where) => renderText(text, host.baseContext(), where),
    runSubflow: (req) => p.runSubflow(req),
    rejections: p.rejections,
    note: p.note,
    sop: host.sop,
    inputs: host.inputs,
    ...(host.embedder ? { embedder: host.embedder } : {}),
  };
  return ctx;
}

/**
 * The code that really ran: results of the code executor whose text says it ran (a refused or
 * never-started piece of code says otherwise; prompts/code_result.hbs), with their turn.
 */
function codeRunsOf(messages: readonly Message[]): Array<{ turn: number; command: string }> {
  return messages
    .filter((m) => m.kind === 'action' && m.role === 'code' && /^The \w+ code ran\b/m.test(m.content))
    .map((m) => ({ turn: m.turn, command: m.sender }));
}
