// What a person says about code the agent wants to run (the run_code step of the seed's VS Code
// review): before it runs, approve, edit or refuse it; after it ran, feedback on the result, which
// goes to the agent and into the logs. At a terminal the code is also written to a file in the
// workspace (.sop/code/), which the person may edit (or open in $VISUAL/$EDITOR by answering
// "edit") before approving. Scripted answers (--answers, a list) give these with tagged answers:
// `run: approve`, `run: edit NEW CODE`, `run: refuse REASON` and `feedback: TEXT` (the library's
// tests: `tests: CODE` and `test feedback: TEXT`); an untagged
// answer is never taken for them (an "ok" meant for a plan review does not approve code).
import { spawnSync } from 'node:child_process';
import { askApproval } from '../../../core/io/human.js';
import { isAcceptance, type ExecContext } from '../../../core/commands/executor.js';

export type CodeDecision = { run: true; code: string; edited: boolean; reply: string } | { run: false; reply: string };

export const RUN_TAG = /^\s*run\s*:\s*/i;
const FEEDBACK_TAG = /^\s*feedback\s*:\s*/i;
const EXTENSION: Record<string, string> = { python: 'py', javascript: 'js', bash: 'sh' };

/** Take the next scripted answer when it carries `tag`; undefined when there is none. */
export async function takeTagged(ctx: ExecContext, tag: RegExp, prompt: string): Promise<string | undefined> {
  const next = ctx.human.peek?.();
  if (next === undefined || !tag.test(next)) return undefined;
  const answer = await ctx.human.ask({ agent: ctx.agent, role: ctx.role, state: ctx.state, kind: 'question', prompt });
  return answer.replace(tag, '');
}

/** A scripted decision: `approve` (or yes/ok/run), `edit CODE`, anything else refuses with its text as the reason. */
export function scripted(answer: string, code: string): CodeDecision {
  const edit = /^edit\b[ \t]*\r?\n?([\s\S]*)$/i.exec(answer);
  if (edit) {
    const next = edit[1]!;
    return next.trim() === ''
      ? { run: true, code, edited: false, reply: answer }
      : { run: true, code: next, edited: next.trim() !== code.trim(), reply: 'edit' };
  }
  if (/^\s*approve[d]?\s*$/i.test(answer) || (answer.trim() !== '' && isAcceptance(answer)))
    return { run: true, code, edited: false, reply: answer };
  return { run: false, reply: answer.replace(/^\s*refuse[d]?\s*:?\s*/i, '') };
}

function editor(): string | undefined {
  return process.env.VISUAL || process.env.EDITOR || undefined;
}

/**
 * Approve, edit or refuse `code` before it runs: without asking under --auto-run or --yes; from a
 * tagged scripted answer; else from a person at a terminal (ApprovalNeededError without one).
 */
export async function reviewCode(ctx: ExecContext, language: string, code: string): Promise<CodeDecision> {
  if (ctx.autoRun || ctx.yes) return { run: true, code, edited: false, reply: '' };
  const render = (file?: string, shown = code) =>
    ctx.templates.render('code_approval', { language, code: shown, command: ctx.command, agent: ctx.agent, file, editor: editor() });
  const tagged = await takeTagged(ctx, RUN_TAG, render());
  if (tagged !== undefined) return scripted(tagged, code);
  // A person at a terminal: the code is in a file they may edit before approving.
  let file: string | undefined;
  const ws = (() => {
    try {
      return ctx.workspace();
    } catch {
      return undefined;
    }
  })();
  const person = ctx.human.interactive || ctx.human.approver?.interactive;
  if (ws && person)
    file = ws.write(`.sop/code/${ctx.command}-turn${ctx.turn}.${EXTENSION[language] ?? 'txt'}`, code.endsWith('\n') ? code : `${code}\n`);
  let shown = code;
  for (;;) {
    const reply = await askApproval(ctx.human, { agent: ctx.agent, role: ctx.role, state: ctx.state, prompt: render(file, shown) });
    if (/^\s*edit\s*$/i.test(reply) && file && ws) {
      const ed = editor();
      if (ed) spawnSync(ed, [file], { stdio: 'inherit', shell: false });
      shown = ws.read(ws.display(file)); // asked again, showing the code as edited: what runs if approved
      continue;
    }
    if (!isAcceptance(reply)) return { run: false, reply };
    const final = file && ws ? ws.read(ws.display(file)) : code;
    const edited = final.trim() !== code.trim();
    return { run: true, code: edited ? final : code, edited, reply };
  }
}

/**
 * The person's feedback on the result, when the command asks for it (`feedback: true`): a tagged
 * scripted answer, or a question at a terminal (Enter: none). Nothing under --yes or with nobody to ask.
 */
export async function codeFeedback(ctx: ExecContext, summary: string, tag: RegExp = FEEDBACK_TAG): Promise<string | undefined> {
  if (ctx.settings.feedback !== true || ctx.yes) return undefined;
  const prompt = `${ctx.agent}'s ${ctx.command} ${summary}.\nYour feedback on the result, for ${ctx.agent} and the logs (Enter: none):`;
  const tagged = await takeTagged(ctx, tag, prompt);
  if (tagged !== undefined) return tagged.trim() || undefined;
  if (!ctx.human.interactive) return undefined;
  const reply = await ctx.human.ask({ agent: ctx.agent, role: ctx.role, state: ctx.state, kind: 'question', prompt });
  return reply.trim() || undefined;
}
