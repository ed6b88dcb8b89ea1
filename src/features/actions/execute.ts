// Running one recorded command: its executor runs (an error the agent can fix becomes a failed
// result), the result is redacted, and a resumed run reuses the journaled result instead, with
// the memory files it wrote and the answers it consumed. The result is told (executor_called,
// executor_result) and joins the environment as an 'action' message.
import type { Message } from '../../core/environment/message.js';
import type { ExecContext, ExecResult } from '../../core/commands/executor.js';
import type { CodeSessions } from './executors/session/code-session.js';
import { languagesOf } from './executors/code.js';
import type { MemoryFiles } from '../../core/workspace/memory-files.js';
import { libraryToMemoryDir } from '../../core/workspace/memory-dir.js';
import type { Redactor } from '../../shared/util/redact.js';
import type { CommandSpec } from '../../core/commands/commands.js';
import { recoverable } from './errors.js';
import type { CommandWhere } from './exec-context.js';
import type { ActionHost, ActionOptions } from './host.js';

/** The parts of the run a command runs with. */
export interface CommandRunParts {
  host: ActionHost;
  options: ActionOptions;
  memory: MemoryFiles;
  sessions: CodeSessions;
  redact: Redactor;
  /** The executor's context (src/features/actions/exec-context.ts). */
  context(): ExecContext;
  /** durability: a memory file a reused result wrote is journaled again. */
  fileWritten(name: string): void;
}

/** Runs the command and adds its result to the environment; returns the result for the runtime's own records. */
export async function runCommand(
  spec: CommandSpec,
  args: Record<string, unknown>,
  where: CommandWhere,
  p: CommandRunParts,
): Promise<ExecResult> {
  const { host, options: o } = p;
  const { state, agent, role, turn } = where;
  const executor = spec.executor.name;
  host.emit({ type: 'executor_called', state: state.name, agent, role, turn, command: spec.name, executor, args });
  const started = performance.now();
  const human = host.human;
  type Performed = ExecResult & { human_answers: number; memory_writes: Record<string, string> };
  const perform = async (): Promise<Performed> => {
    const before = human.consumed;
    // The memory files the executor changes are part of its result, so that a resumed run
    // reusing the result from the journal can put them back.
    const writes: Record<string, string> = {};
    const untap = p.memory.tap((name, content) => {
      writes[name] = content;
    });
    let r: ExecResult;
    try {
      r = await spec.executor.run(args, p.context());
    } catch (err) {
      if (!recoverable(err)) throw err;
      const message = (err as Error).message;
      r = {
        ok: false,
        result: host.templates.render('command_failed', { command: spec.name, error: message }),
        summary: `failed: ${message}`,
      };
    } finally {
      untap();
    }
    // secrets: code output and files read may hold a secret (printed, encoded, reversed...);
    // it reaches no prompt, message, journal line or logs memory file.
    const red = p.redact;
    r = {
      ...r,
      result: red(r.result),
      summary: red(r.summary),
      ...(r.finish
        ? {
            finish: {
              ...r.finish,
              result: red(r.finish.result),
              ...(r.finish.summary !== undefined ? { summary: red(r.finish.summary) } : {}),
            },
          }
        : {}),
    };
    return { ...r, human_answers: human.consumed - before, memory_writes: writes };
  };
  let res: Performed;
  if (host.perform) {
    // durability: a resumed run reuses a journaled result instead of running the executor again
    const done = await host.perform(
      {
        kind: executor,
        label: `${spec.name}@${state.name}`,
        marksStart: true,
        rerunNeedsApproval: spec.executor.durability?.rerunNeedsApproval === true,
        composite: spec.executor.durability?.composite === true, // e.g. a sub-flow is replayed, its own steps reused
      },
      perform,
    );
    res = done.value;
    if (done.reused) {
      // a cell whose journaled result is reused did not run in this process's session
      if (executor === 'code') p.sessions.counted(String(args.language ?? languagesOf(spec.settings)[0]), true);
      if (res.human_answers > 0) human.skip?.(res.human_answers);
      for (const [name, content] of Object.entries(res.memory_writes ?? {})) {
        p.memory.restore(name, content);
        p.fileWritten(name);
      }
    }
  } else {
    res = await perform();
  }
  // --memory-dir: a saved code library goes back to the memory folder
  if (executor === 'library' && spec.settings.op === 'save' && res.ok && o.persistentMemoryDir && o.workspace)
    libraryToMemoryDir(
      o.workspace,
      o.persistentMemoryDir,
      String(spec.settings.module ?? (spec.settings.language === 'javascript' ? 'library.js' : 'library.py')),
    );
  host.emit({
    type: 'executor_result',
    state: state.name,
    agent,
    turn,
    command: spec.name,
    executor,
    ok: res.ok,
    result: res.result,
    summary: res.summary,
    ms: Math.round(performance.now() - started),
    finish: res.finish !== undefined,
  });
  // audiences: a command's result goes to whom the command itself went
  const cause = host.env.messages[host.env.messages.length - 1];
  const message: Message = {
    id: host.env.messages.length,
    turn,
    state: state.name,
    sender: spec.name,
    role: executor,
    content: res.result,
    kind: 'action',
    timestamp: new Date().toISOString(),
    ...(cause?.audience ? { audience: cause.audience, ...(cause.to !== undefined ? { to: cause.to } : {}) } : {}),
  };
  await host.env.add(message);
  host.emit({ type: 'message', message });
  return res;
}
