// The `sop` executor: run another SOP file as a sub-flow, with its own environment and memory
// folder, and return its result and summary to the caller. Memory files listed in `memory` are
// shared with the caller (e.g. code_library); everything else starts fresh at every call, so a
// finished sub-flow is reset.
import { isAbsolute, resolve } from 'node:path';
import { stopsTheRun } from './subflow-failure.js';
import {
  ExecutorInputError,
  str,
  type ArgSpecs,
  type ArgsEnv,
  type ExecContext,
  type ExecResult,
  type Executor,
} from '../../../core/commands/executor.js';
import { AnswerInterruptedError, NoMoreAnswersError } from '../../../core/io/human.js';
import { EngineError } from '../../../shared/errors.js';
import { count } from '../../../shared/util/plural.js';

export function subflowFile(settings: Record<string, unknown>, baseDir: string): string {
  const file = str(settings.file) ?? '';
  return isAbsolute(file) ? file : resolve(baseDir, file);
}

function fixedInputs(settings: Record<string, unknown>): Record<string, string> {
  const v = settings.inputs;
  return v && typeof v === 'object' ? (v as Record<string, string>) : {};
}

export const executor: Executor = {
  name: 'sop',
  durability: { composite: true },
  description: 'Run another SOP as a sub-flow and return its result and summary.',
  settings: {
    type: 'object',
    additionalProperties: false,
    required: ['file'],
    properties: {
      file: { type: 'string', minLength: 1, description: 'The SOP file of the sub-flow, relative to this SOP file.' },
      memory: {
        type: 'object',
        description: 'Memory files shared with the sub-flow: its name -> this SOP\'s name (e.g. {"code_library": "code_library"}).',
        additionalProperties: { type: 'string', minLength: 1 },
      },
      inputs: {
        type: 'object',
        description: 'Inputs of the sub-flow fixed by this command (templates, e.g. "{{goal}}"); the agent gives the others.',
        additionalProperties: { type: 'string' },
      },
      session: {
        type: 'string',
        enum: ['shared', 'own'],
        description:
          "shared (default): the sub-flow's code runs in the caller's Python and JavaScript sessions, seeing what the caller's code defined; own: it gets empty sessions of its own, ended when it ends.",
      },
    },
  },
  args(settings, env: ArgsEnv): ArgSpecs | undefined {
    if (env.baseDir === undefined || env.loadSop === undefined) return undefined;
    const sop = env.loadSop(subflowFile(settings, env.baseDir));
    const fixed = fixedInputs(settings);
    const out: ArgSpecs = {};
    for (const [name, def] of Object.entries(sop.inputs ?? {})) {
      if (name in fixed) continue;
      out[name] = {
        type: 'string',
        required: def.required === true && def.default === undefined,
        description: def.description ?? `The ${name} input of ${sop.name}.`,
      };
    }
    return out;
  },
  async run(args, ctx): Promise<ExecResult> {
    const file = subflowFile(ctx.settings, ctx.baseDir);
    const inputs: Record<string, string> = {};
    for (const [name, text] of Object.entries(fixedInputs(ctx.settings)))
      inputs[name] = ctx.renderText(text, `commands/${ctx.command}/settings/inputs/${name}`);
    for (const [name, value] of Object.entries(args)) if (typeof value === 'string') inputs[name] = value;
    const memory = (ctx.settings.memory ?? {}) as Record<string, string>;
    for (const mine of Object.values(memory)) {
      if (!ctx.memory.has(mine))
        throw new ExecutorInputError(`cannot share memory file "${mine}" with ${file}: this SOP does not declare it`);
    }
    const r = await ctx.runSubflow({ file, inputs, memory });
    if (r.status === 'interrupted' && interruptedForCaller(r.error) && !ctx.signal?.aborted) {
      // Ctrl-C at one of its questions: back to this flow's controller, told that the user interrupted
      const error = `the user interrupted it (Ctrl-C at a question of ${r.flow}); a second Ctrl-C stops the run`;
      const feedback = await feedbackForCaller(ctx, r.flow);
      return {
        ok: false,
        result: ctx.templates.render('subflow_result', { command: ctx.command, failed: true, error, turns: r.turns, feedback }),
        summary: `${r.flow} interrupted by the user after ${count(r.turns, 'turn')}${feedback ? `; the user's feedback: "${feedback}"` : ''}`,
      };
    }
    if (r.status === 'interrupted' || (r.status === 'failed' && stopsTheRun(r.error, ctx.signal))) {
      throw r.error ?? new EngineError(`sub-flow ${r.flow} ${r.status}`, 'SUBFLOW');
    }
    if (r.status === 'failed') {
      // The sub-flow went wrong on its own: its caller is told, and can re-plan or ask the user.
      const error = (r.error?.message ?? 'it failed').split('\n')[0]!;
      return {
        ok: false,
        result: ctx.templates.render('subflow_result', { command: ctx.command, failed: true, error, turns: r.turns }),
        summary: `${r.flow} failed after ${count(r.turns, 'turn')}: ${error}`,
      };
    }
    if (r.status === 'max_turns' || r.result === undefined) {
      return {
        ok: false,
        result: ctx.templates.render('subflow_result', { command: ctx.command, stopped: true, turns: r.turns, result: r.result }),
        summary: `${r.flow} stopped after ${count(r.turns, 'turn')} without finishing`,
      };
    }
    const result = r.result ?? '';
    return {
      ok: true,
      result: ctx.templates.render('subflow_result', { command: ctx.command, result, summary: r.summary, turns: r.turns }),
      summary: `${r.flow} finished: ${r.summary ?? result}`.replace(/\s+/g, ' '),
    };
  },
};

/**
 * After Ctrl-C at a sub-flow's question: one line of feedback for the caller (Enter: none), asked
 * only of a person at a terminal. Ctrl-C at this question stops the run, as the first one said.
 */
async function feedbackForCaller(ctx: ExecContext, flow: string): Promise<string | undefined> {
  if (!ctx.human.interactive || ctx.yes) return undefined;
  const prompt = `Back to ${ctx.agent} (${flow} was interrupted). One line of feedback for ${ctx.agent} (Enter: none; Ctrl-C again: stop the run):`;
  try {
    const reply = await ctx.human.ask({ agent: ctx.agent, role: ctx.role, state: ctx.state, kind: 'question', prompt });
    return (
      reply
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean)
        .join(' ') || undefined
    );
  } catch (err) {
    if (err instanceof AnswerInterruptedError) throw new AnswerInterruptedError(`${err.message}; the user stopped the run`, false);
    if (err instanceof NoMoreAnswersError) return undefined; // Ctrl-D: no feedback
    throw err;
  }
}

/** A sub-flow stopped by the user's first Ctrl-C at one of its questions (src/core/io/human.ts). */
function interruptedForCaller(err: Error | undefined): boolean {
  return err?.name === 'AnswerInterruptedError' && (err as { toCaller?: unknown }).toCaller === true;
}
