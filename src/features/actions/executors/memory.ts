// The `memory` executor: read, write or append to a memory file of the run (plan, logs,
// code_library, ...) or to a file in the workspace. update_plan and re_plan are writes to plan.
// Names are checked against the SOP's declared memory files; workspace paths cannot leave it.
import { ExecutorInputError, str, type ArgSpecs, type ExecResult, type Executor } from '../../../core/commands/executor.js';

type Op = 'read' | 'write' | 'append';

function target(settings: Record<string, unknown>): 'memory' | 'workspace' {
  return settings.target === 'workspace' ? 'workspace' : 'memory';
}

function describeTarget(name: string, where: 'memory' | 'workspace'): string {
  return where === 'memory' ? `memory file "${name}"` : `workspace file "${name}"`;
}

export const executor: Executor = {
  name: 'memory',
  description: 'Read, write or append to a memory file of the run (plan, logs, code_library, ...) or a file in the workspace.',
  settings: {
    type: 'object',
    additionalProperties: false,
    required: ['op'],
    properties: {
      op: { type: 'string', enum: ['read', 'write', 'append'] },
      target: {
        type: 'string',
        enum: ['memory', 'workspace'],
        description: 'memory (default): a declared memory file; workspace: a path inside the workspace.',
      },
      file: {
        type: 'string',
        minLength: 1,
        description: 'The memory file (or workspace path) this command always uses; without it the agent names one.',
      },
    },
  },
  args(settings): ArgSpecs {
    const op = settings.op as Op;
    const out: ArgSpecs = {};
    if (!str(settings.file)) {
      out.file =
        target(settings) === 'workspace'
          ? { type: 'string', required: true, description: 'Path of the file, relative to the workspace folder.' }
          : { type: 'string', required: true, description: 'Name of the memory file.' };
    }
    if (op !== 'read') {
      out.content = {
        type: 'string',
        required: true,
        description: op === 'write' ? 'The new content of the whole file.' : 'The text to add at the end of the file.',
      };
    }
    return out;
  },
  async run(args, ctx): Promise<ExecResult> {
    const op = ctx.settings.op as Op;
    const where = target(ctx.settings);
    const name = str(ctx.settings.file) ?? str(args.file) ?? '';
    if (name === '') throw new ExecutorInputError('no file named');
    const label = describeTarget(name, where);
    if (op === 'read') {
      const text = where === 'memory' ? ctx.memory.read(name) : ctx.workspace().read(name);
      return { ok: true, result: text === '' ? `(${label} is empty)` : text, summary: `read ${label} (${text.length} characters)` };
    }
    const content = str(args.content) ?? '';
    if (where === 'memory') {
      if (op === 'write') ctx.memory.write(name, content);
      else ctx.memory.append(name, content.endsWith('\n') ? content : `${content}\n`);
    } else {
      ctx.workspace().write(name, content, op === 'append');
    }
    const verb = op === 'write' ? 'wrote' : 'appended to';
    return {
      ok: true,
      result: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${label} (${content.length} characters).`,
      summary: `${verb} ${label}`,
    };
  },
};
