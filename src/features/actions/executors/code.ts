// The `code` executor: run Python, JavaScript or shell in the workspace, after showing the code
// to the human for approval (unless --auto-run or --yes).
import { CODE_DEFAULTS, LANGUAGES, describeExit, runCode, type CodeOutcome, type Language } from './code-runner.js';
import { askApproval } from '../../../core/io/human.js';
import { RUN_TAG, codeFeedback, reviewCode, scripted, takeTagged } from './code-review.js';
import { CODE_SESSIONS, isSessionLanguage } from './session/code-session.js';
import { networkHint } from './network-hint.js';
import { ExecutorInputError, isAcceptance, str } from '../../../core/commands/executor.js';
import type { ArgSpecs, ExecContext, ExecResult, Executor } from '../../../core/commands/executor.js';

const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

export function languagesOf(settings: Record<string, unknown>): Language[] {
  const fixed = str(settings.language);
  if (fixed) return [fixed as Language];
  const list = Array.isArray(settings.languages) ? (settings.languages as Language[]) : undefined;
  return list && list.length ? list : [...LANGUAGES];
}

/**
 * Ask a person at a terminal to approve running `code`, unless the run is unattended by choice
 * (--auto-run, --yes) or a scripted answer tagged `run:` decides (`run: approve`, `run: refuse
 * REASON`), as for run_code. An untagged answer never approves code: without a terminal the run
 * stops (resumable) with a message naming --auto-run.
 */
export async function approveCode(ctx: ExecContext, language: string, code: string): Promise<{ approved: boolean; reply: string }> {
  if (ctx.autoRun || ctx.yes) return { approved: true, reply: '' };
  const prompt = ctx.templates.render('code_approval', { language, code, command: ctx.command, agent: ctx.agent });
  // a scripted `run: approve` / `run: refuse REASON`, as run_code takes it (code-review.ts)
  const tagged = await takeTagged(ctx, RUN_TAG, prompt);
  if (tagged !== undefined) {
    const d = scripted(tagged, code);
    if (d.run && d.edited) return { approved: false, reply: 'run: edit is not possible here (the tests run as written)' };
    return d.run ? { approved: true, reply: tagged } : { approved: false, reply: d.reply };
  }
  const reply = await askApproval(ctx.human, { agent: ctx.agent, role: ctx.role, state: ctx.state, prompt });
  return { approved: isAcceptance(reply), reply };
}

export function codeEnv(ctx: ExecContext, workspace: string): Record<string, string> {
  return { SOP_WORKSPACE: workspace, SOP_LAUNCH_DIR: ctx.launchDir };
}

export function outcomeContext(o: CodeOutcome, timeoutMs: number, language: string) {
  return {
    language,
    ended: describeExit(o, timeoutMs),
    ok: !o.startError && !o.timedOut && o.exitCode === 0,
    stdout: o.stdout.replace(/\s+$/, ''),
    stderr: o.stderr.replace(/\s+$/, ''),
    dropped_stdout: o.dropped.stdout,
    dropped_stderr: o.dropped.stderr,
    sandboxed: o.sandboxed,
  };
}

function firstLine(text: string): string {
  const line =
    text
      .split('\n')
      .map((l) => l.trim())
      .find((l) => l !== '') ?? '';
  return line.length > 160 ? `${line.slice(0, 157)}...` : line;
}

export const executor: Executor = {
  name: 'code',
  durability: { rerunNeedsApproval: true },
  description: "Run Python, JavaScript (node) or shell code in the run's workspace folder and return the exit code, stdout and stderr.",
  settings: {
    type: 'object',
    additionalProperties: false,
    properties: {
      language: {
        type: 'string',
        enum: [...LANGUAGES],
        description: 'The only language this command runs (the agent then gives only the code).',
      },
      languages: { type: 'array', items: { type: 'string', enum: [...LANGUAGES] }, minItems: 1, uniqueItems: true },
      timeout_ms: {
        type: 'integer',
        minimum: 100,
        maximum: 3_600_000,
        description: `Kill the code (and everything it started) after this long (default ${CODE_DEFAULTS.timeoutMs}).`,
      },
      max_output: {
        type: 'integer',
        minimum: 100,
        maximum: 10_000_000,
        description: `Bytes kept of each of stdout and stderr (default ${CODE_DEFAULTS.maxOutput}).`,
      },
      session: {
        type: 'boolean',
        description:
          'Python and JavaScript run in a stateful session of the run, so what one piece of code defines is there for the next (default true); false: every piece runs in a fresh process.',
      },
      feedback: {
        type: 'boolean',
        description:
          'After the code ran, ask the user for feedback on the result (told to the agent and written to the logs); default false.',
      },
      network: {
        type: 'boolean',
        description:
          'Code of this run gets network inside the sandbox (pip install, downloads), with a warning when the run starts; default false (the sandbox has none). Installs go to the workspace.',
      },
    },
  },
  args(settings): ArgSpecs {
    const langs = languagesOf(settings);
    const out: ArgSpecs = {};
    if (langs.length > 1)
      out.language = { type: 'string', enum: langs, required: true, description: `The language of the code: ${langs.join(', ')}.` };
    out.code = {
      type: 'string',
      required: true,
      description: `The code to run${langs.length === 1 ? ` (${langs[0]})` : ''}; the working directory is the workspace folder.`,
    };
    return out;
  },
  async run(args, ctx): Promise<ExecResult> {
    const langs = languagesOf(ctx.settings);
    const language = (str(args.language) ?? langs[0]) as Language;
    const written = str(args.code) ?? '';
    if (written.trim() === '') throw new ExecutorInputError('the code is empty');
    const ws = ctx.workspace().ensure();
    const review = await reviewCode(ctx, language, written);
    if (!review.run) {
      return {
        ok: false,
        result: ctx.templates.render('code_result', { refused: true, reply: review.reply, language }),
        summary: `${language} code not run: the user did not approve${review.reply.trim() ? ` ("${firstLine(review.reply)}")` : ''}`,
      };
    }
    const code = review.code;
    const timeoutMs = num(ctx.settings.timeout_ms) ?? CODE_DEFAULTS.timeoutMs;
    const maxOutput = num(ctx.settings.max_output) ?? CODE_DEFAULTS.maxOutput;
    const sessions = ctx.settings.session !== false && isSessionLanguage(language) ? ctx.vars?.get(CODE_SESSIONS) : undefined;
    let outcome: CodeOutcome;
    let extra: Record<string, unknown> = {};
    if (sessions && isSessionLanguage(language)) {
      // a stateful session: what earlier code of the run defined is still there
      const lost = sessions.takeLost(language);
      const cell = await sessions.session(language).run(code, { timeoutMs, maxOutput, signal: ctx.signal });
      sessions.counted(language);
      outcome = cell;
      extra = {
        session: true,
        error: cell.error?.replace(/\s+$/, ''),
        files: cell.files,
        session_lost: lost,
        session_ended: cell.sessionEnded,
        cell: cell.cell,
      };
    } else {
      outcome = await runCode({
        language,
        code,
        cwd: ws.root,
        timeoutMs,
        maxOutput,
        sandbox: ctx.sandbox,
        network: ctx.sandboxNetwork,
        env: codeEnv(ctx, ws.root),
        signal: ctx.signal,
      });
    }
    const view = { ...outcomeContext(outcome, timeoutMs, language), ...extra };
    if (extra.error) view.ok = false;
    if (extra.session_ended) view.ok = false;
    const network = networkHint({
      ok: view.ok,
      sandboxed: outcome.sandboxed,
      network: ctx.sandboxNetwork === true,
      text: [outcome.stdout, outcome.stderr, (extra.error as string | undefined) ?? ''].join('\n'),
    });
    const out = firstLine(outcome.stdout) || firstLine((extra.error as string | undefined) ?? '') || firstLine(outcome.stderr);
    let summary = `ran ${language} code${review.edited ? ' (edited by the user)' : ''}: ${view.ended}${out ? `; output: ${out}` : ''}`;
    if (network) summary += `; ${network}`;
    const feedback = await codeFeedback(ctx, summary);
    if (feedback) summary += `; the user's feedback: "${firstLine(feedback)}"`;
    return {
      ok: view.ok,
      result: ctx.templates.render('code_result', {
        ...view,
        edited: review.edited,
        code: review.edited ? code : undefined,
        feedback,
        network_hint: network,
      }),
      summary,
    };
  },
};
