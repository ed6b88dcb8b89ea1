// The `human` executor: ask the user a question, give an intermediate or final answer and take
// their feedback, or have them review a draft (a plan) that is saved to a memory file, which
// they may also edit directly before accepting. Answers come from the run's HumanInput: the
// terminal, --answers FILE, or --yes (accept everything without asking).
import { userAway } from '../../../core/io/human.js';
import { UserStoppedError } from './subflow-failure.js';
import { ExecutorInputError, isAcceptance, str } from '../../../core/commands/executor.js';
import type { ArgSpecs, ExecContext, ExecResult, Executor } from '../../../core/commands/executor.js';

type Kind = 'ask' | 'intermediate' | 'final' | 'review';

const ARG: Record<Kind, { name: string; description: string }> = {
  ask: { name: 'question', description: 'The question for the user.' },
  intermediate: { name: 'answer', description: 'What has been done so far, for the user to see and comment on.' },
  final: { name: 'answer', description: 'The final answer for the user.' },
  review: { name: 'draft', description: 'The draft for the user to review.' },
};

const YES_REPLY = 'yes';

async function askHuman(ctx: ExecContext, kind: Kind, text: string, file?: string): Promise<{ reply: string; automatic: boolean }> {
  if (ctx.yes) return { reply: YES_REPLY, automatic: true };
  const prompt = ctx.templates.render('human_question', { kind, text, file, command: ctx.command, agent: ctx.agent });
  const reply = await ctx.human.ask({ agent: ctx.agent, role: ctx.role, state: ctx.state, kind: 'question', prompt });
  return { reply, automatic: false };
}

function oneLine(text: string, max = 120): string {
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? `${t.slice(0, max - 3)}...` : t;
}

export const executor: Executor = {
  name: 'human',
  description: 'Ask the user, show them an intermediate or final answer, or have them review a draft; returns their reply.',
  settings: {
    type: 'object',
    additionalProperties: false,
    required: ['kind'],
    properties: {
      kind: { type: 'string', enum: ['ask', 'intermediate', 'final', 'review'] },
      save_to: {
        type: 'string',
        minLength: 1,
        description: 'review: the memory file the draft is written to before the user sees it (they may edit it there).',
      },
      max_rejections: {
        type: 'integer',
        minimum: 1,
        description:
          'review: after this many drafts rejected in a row, ask the user whether to stop the run, go on with the last draft, or revise again; the state never goes on past its max_turns with a rejected draft.',
      },
      finish_on_accept: {
        type: 'boolean',
        description: 'review: when the user accepts, end the state with the (possibly edited) draft as its result (default true).',
      },
    },
  },
  args(settings): ArgSpecs {
    const a = ARG[(settings.kind as Kind) ?? 'ask'] ?? ARG.ask;
    return { [a.name]: { type: 'string', required: true, description: a.description } };
  },
  async run(args, ctx): Promise<ExecResult> {
    const kind = ctx.settings.kind as Kind;
    const text = str(args[ARG[kind].name]) ?? '';
    const render = (view: Record<string, unknown>) => ctx.templates.render('human_result', { kind, ...view });
    // user_away (resources.user_away or the input user_away=true): nobody waits for the user.
    if (userAway(ctx.sop?.resources, ctx.inputs)) {
      if (kind === 'ask') throw new ExecutorInputError('the user is away: nobody can answer; decide on your own');
      if (kind === 'review') {
        const saveTo = str(ctx.settings.save_to);
        if (saveTo) ctx.memory.write(saveTo, text.endsWith('\n') ? text : `${text}\n`);
        const finish = ctx.settings.finish_on_accept !== false;
        return {
          ok: true,
          result: render({ away: true, accepted: true, save_to: saveTo, final: text }),
          summary: `the user is away: the draft was kept without review${saveTo ? ` (saved to ${saveTo})` : ''}`,
          ...(finish ? { finish: { result: text.trim(), summary: 'draft kept (the user is away)' } } : {}),
        };
      }
      return {
        ok: true,
        result: render({ away: true, text }),
        summary: `${kind === 'final' ? 'gave the final answer' : 'gave an intermediate answer'} ("${oneLine(text, 80)}"); the user is away`,
      };
    }
    if (kind !== 'review') {
      const { reply, automatic } = await askHuman(ctx, kind, text);
      const what = kind === 'ask' ? 'asked the user' : kind === 'final' ? 'gave the final answer' : 'gave an intermediate answer';
      return {
        ok: true,
        result: render({ reply, automatic, text }),
        summary: `${what} ("${oneLine(text, 80)}"); the user replied: "${oneLine(reply, 80)}"`,
      };
    }
    const saveTo = str(ctx.settings.save_to);
    let file: string | undefined;
    if (saveTo) {
      ctx.memory.write(saveTo, text.endsWith('\n') ? text : `${text}\n`);
      file = ctx.memory.pathOf(saveTo);
    }
    const { reply, automatic } = await askHuman(ctx, kind, text, file);
    const maxRejections = typeof ctx.settings.max_rejections === 'number' ? ctx.settings.max_rejections : undefined;
    const counted = maxRejections !== undefined ? { rejected: !isAcceptance(reply) } : {};
    let feedback = reply;
    let chosen = false;
    if (!isAcceptance(reply)) {
      const rejections = (ctx.rejections ?? 0) + 1;
      if (maxRejections !== undefined && rejections >= maxRejections) {
        // Rejected too often: the user decides (stop, go on with the last draft, or more feedback).
        const prompt = ctx.templates.render('human_question', {
          kind: 'rejected',
          text: reply,
          rejections,
          command: ctx.command,
          agent: ctx.agent,
        });
        const choice = await ctx.human.ask({ agent: ctx.agent, role: ctx.role, state: ctx.state, kind: 'question', prompt });
        const word = choice
          .trim()
          .toLowerCase()
          .replace(/[.!]+$/, '');
        if (/^(stop|quit|abort|end|exit)( (it|the run|here|now))?$/.test(word))
          throw new UserStoppedError(`the user stopped the run after rejecting ${rejections} drafts of ${ctx.command} in a row`);
        if (/^(continue|go on|proceed)( with (it|the last draft|the draft))?$/.test(word)) chosen = true;
        else if (word !== '') feedback = `${reply}\n${choice.trim()}`;
      }
      if (!chosen)
        return {
          ok: true,
          result: render({ reply: feedback, automatic, accepted: false, save_to: saveTo }),
          summary: `the user asked for changes to the draft: "${oneLine(feedback, 100)}"`,
          ...counted,
        };
    }
    const final = saveTo ? ctx.memory.read(saveTo) : text;
    const edited = saveTo !== undefined && final.trim() !== text.trim();
    const finishOnAccept = ctx.settings.finish_on_accept !== false;
    const how = chosen ? 'the user chose to go on with the last draft, which they had rejected' : 'the user accepted the draft';
    return {
      ok: true,
      result: render({ reply, automatic, accepted: true, chosen, edited, save_to: saveTo, final }),
      summary: `${how}${edited ? ' after editing it' : ''}${saveTo ? ` (saved to ${saveTo})` : ''}`,
      ...(maxRejections !== undefined ? { rejected: false } : {}),
      ...(finishOnAccept
        ? {
            finish: {
              result: final.trim(),
              summary: `draft ${chosen ? 'kept by the user' : 'accepted'}${saveTo ? ` and saved to ${saveTo}` : ''}`,
            },
          }
        : {}),
    };
  },
};
