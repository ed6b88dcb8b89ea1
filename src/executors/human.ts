// The `human` executor: ask the user a question, give an intermediate or final answer and take
// their feedback, or have them review a draft (a plan) that is saved to a memory file, which
// they may also edit directly before accepting. Answers come from the run's HumanInput: the
// terminal, --answers FILE, or --yes (accept everything without asking).
import { isAcceptance, str, type ArgSpecs, type ExecContext, type ExecResult, type Executor } from './types.js';

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
    const accepted = isAcceptance(reply);
    if (!accepted) {
      return {
        ok: true,
        result: render({ reply, automatic, accepted, save_to: saveTo }),
        summary: `the user asked for changes to the draft: "${oneLine(reply, 100)}"`,
      };
    }
    const final = saveTo ? ctx.memory.read(saveTo) : text;
    const edited = saveTo !== undefined && final.trim() !== text.trim();
    const finishOnAccept = ctx.settings.finish_on_accept !== false;
    return {
      ok: true,
      result: render({ reply, automatic, accepted, edited, save_to: saveTo, final }),
      summary: `the user accepted the draft${edited ? ' after editing it' : ''}${saveTo ? ` (saved to ${saveTo})` : ''}`,
      ...(finishOnAccept ? { finish: { result: final.trim(), summary: `draft accepted${saveTo ? ` and saved to ${saveTo}` : ''}` } } : {}),
    };
  },
};
