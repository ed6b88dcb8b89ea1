// Errors: every error class of src is an EngineError (a `code` from ErrorCode) or a RunSignal
// (control flow), no bare `throw new Error(` is left in src, core messages name API options,
// and the CLI shows its flags for them.
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { EngineError, type ErrorCode } from '../src/index.js';
import { RunSignal, isRunSignal } from '../src/extend.js';
import { createProvider } from '../src/core/llm/factory.js';
import { cliMessage, reportError } from '../src/apps/cli/errors.js';
import { opt, renderMessage, say } from '../src/shared/errors.js';
import { loadSop } from '../src/index.js';
import { checkGivenInputs } from '../src/api/engine/run-with-features.js';
import { NoHumanInput } from '../src/core/io/human.js';

const catching = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
};
import { runCli } from './helpers/cli.js';

/** Files the run-loop refactor owns and changes (their error becomes a RunSignal there). */
const LOOP_OWNED = new Set<string>();

function sourceFiles(dir = 'src'): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [relative('.', path)] : [];
  });
}

const files = sourceFiles().map((file) => ({ file, text: readFileSync(file, 'utf8') }));

describe('error classes', () => {
  it('only EngineError and RunSignal extend Error directly', () => {
    const direct = files
      .filter((f) => !LOOP_OWNED.has(f.file))
      .flatMap((f) => [...f.text.matchAll(/class (\w+) extends Error\b/g)].map((m) => `${f.file}: ${m[1]}`));
    expect(direct).toEqual(['src/shared/errors.ts: EngineError', 'src/shared/errors.ts: RunSignal']);
  });

  it('every exported class that is an Error is an EngineError or a RunSignal', async () => {
    const withClasses = files.filter((f) => /export class \w+ extends \w+/.test(f.text) && !f.file.startsWith('src/apps/cli/main'));
    const errorClasses: string[] = [];
    for (const f of withClasses) {
      const mod = (await import(pathToFileURL(join(process.cwd(), f.file)).href)) as Record<string, unknown>;
      for (const [name, value] of Object.entries(mod)) {
        if (typeof value !== 'function' || !(value.prototype instanceof Error)) continue;
        errorClasses.push(name);
        if (LOOP_OWNED.has(f.file)) continue;
        const ok =
          value === EngineError || value === RunSignal || value.prototype instanceof EngineError || value.prototype instanceof RunSignal;
        expect(ok, `${f.file}: ${name}`).toBe(true);
      }
    }
    // the scan found the error classes (not an empty loop that passes by itself)
    expect(errorClasses).toEqual(expect.arrayContaining(['SopError', 'LlmError', 'InputFileError', 'McpServerError', 'SweepInputError']));
    expect(errorClasses.length).toBeGreaterThan(30);
  });

  it('no bare throw new Error( is left in src', () => {
    const bare = files
      .filter((f) => !LOOP_OWNED.has(f.file))
      .flatMap((f) => f.text.split('\n').flatMap((line, i) => (/throw new Error\(/.test(line) ? [`${f.file}:${i + 1}`] : [])));
    expect(bare).toEqual([]);
  });

  it('an EngineError carries its code; a RunSignal is control flow, not an EngineError', () => {
    const code: ErrorCode = 'LLM';
    const err = new EngineError('the model is gone', code);
    expect([err.code, err instanceof Error, isRunSignal(err)]).toEqual(['LLM', true, false]);

    const divert = new RunSignal('divert', 'budget spent', { source: 'budget', target: 'wrap_up' });
    const stop = new RunSignal('stop', 'budget spent', { source: 'budget', status: 'budget' });
    const approval = new RunSignal('approval', 'run_code needs approval', { action: 'run_code', effect: 3 });
    for (const s of [divert, stop, approval])
      expect([isRunSignal(s), s instanceof EngineError, s.name]).toEqual([true, false, 'RunSignal']);
    expect([divert.detail.target, stop.detail.status, approval.detail.effect]).toEqual(['wrap_up', 'budget', 3]);
    expect(isRunSignal(new Error('x'))).toBe(false);
  });
});

describe('core messages name API options; the CLI names its flags', () => {
  it('the API caller is told the option, the CLI user the flag', async () => {
    const err = (await createProvider({ spec: 'bogus' }).catch((e: unknown) => e)) as EngineError;
    expect(err).toBeInstanceOf(EngineError);
    expect(err.message).toBe('unknown options.llm "bogus"; use openai, mock, replay:FILE or local:MODEL.gguf');

    const stderr = new PassThrough();
    let printed = '';
    stderr.on('data', (c: Buffer) => (printed += c.toString()));
    expect(reportError(err, stderr)).toBe(1);
    expect(printed).toBe('error: unknown --llm "bogus"; use openai, mock, replay:FILE or local:MODEL.gguf\n');
  });

  it('carries the option as data: inputs, approvals, answers and milliseconds become the flags', async () => {
    const mention = (err: unknown) => err as EngineError & { option?: string };
    // an input a SOP needs (src/core/runtime/inputs.ts)
    const sop = loadSop('examples/debate/debate.sop.json');
    const needs = { ...sop, inputs: { goal: { required: true } } } as typeof sop;
    const missing = mention(catching(() => checkGivenInputs(needs, {})));
    expect(missing.option).toBe('inputs');
    expect(missing.message).toContain('pass options.inputs.goal');
    expect(cliMessage(missing)).toContain('pass --input goal=VALUE');
    // approvals with nobody to ask (src/core/io/human.ts)
    const approval = mention(
      await new NoHumanInput().ask({ kind: 'approval', agent: 'A', role: 'r', state: 's', prompt: 'p' } as never).catch((e: unknown) => e),
    );
    expect(approval.option).toBe('autoRun');
    expect(approval.message).toContain('Run code without asking with options.autoRun, or accept everything with options.yes');
    expect(cliMessage(approval)).toContain('Run code without asking with --auto-run, or accept everything with --yes');
    expect(
      cliMessage(
        say`let code run with ${opt('autoRun')} (or ${opt('yes')}); a stopped run continues with ${opt('autoRun', { form: 'resume' })}.`,
      ),
    ).toBe('let code run with --auto-run (or --yes); a stopped run continues with sop resume RUN_DIR --auto-run.');
    expect(cliMessage(say`Give the answers with ${opt('answers', { arg: true })}.`)).toBe('Give the answers with --answers FILE.');
    // how a stopped run goes on, said as a phrase a sweep can say its own way (src/apps/sweep/run-point.ts)
    const goOn = say`no answer left; ${opt('answers', { arg: true, form: 'continue' })} holding the answers to come`;
    expect(renderMessage(goOn)).toBe('no answer left; resume with options.answers holding the answers to come');
    expect(cliMessage(goOn)).toBe('no answer left; resume with --answers FILE holding the answers to come');
    expect(cliMessage(say`${opt('sandbox', { set: false })}: unsandboxed (${opt('sandbox', { set: true })} requires one)`)).toBe(
      '--no-sandbox: unsandboxed (--sandbox requires one)',
    );
    // milliseconds in the API, seconds on the flag (src/core/llm/factory.ts)
    const timeout = mention(await createProvider({ spec: 'mock', timeoutMs: 0 }).catch((e: unknown) => e));
    expect(timeout.option).toBe('timeoutMs');
    expect(timeout.message).toBe('options.timeoutMs must be a number of milliseconds above 0 (got 0)');
    const half = mention(await createProvider({ spec: 'mock', timeoutMs: -500 }).catch((e: unknown) => e));
    expect(cliMessage(half)).toBe('--timeout must be a number of seconds above 0 (got -0.5)');
    // a message that names no option is its text
    expect(cliMessage('inputs.goal and options.timeoutMs are words here')).toBe('inputs.goal and options.timeoutMs are words here');
  });

  it('the built CLI prints the flag for an option the engine names', async () => {
    const r = await runCli(['run', 'examples/debate/debate.sop.json', '--llm', 'mock', '--max-reply-bytes', '-3', '--max-turns', '1']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('error: --max-reply-bytes must be a whole number of bytes, at least 1 (got -3)\n');
  });
});
