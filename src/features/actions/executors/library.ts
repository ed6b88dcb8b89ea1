// The `library` executor: the code library of ExtendLibrary. `test` checks a function's syntax
// and runs the agent's tests against it; `save` does the same, then appends the function to a
// Python or JavaScript module in the workspace (so later `code` runs can import it) and adds
// its signature and docstring to the code_library memory file.
import { spawnSync } from 'node:child_process';
import { Script } from 'node:vm';
import { approveCode, codeEnv, outcomeContext } from './code.js';
import { codeFeedback, takeTagged } from './code-review.js';
import { CODE_DEFAULTS, runCode } from './code-runner.js';
import { mergeIntoModule, mergeLibraryEntries } from './library-merge.js';
import {
  ExecutorInputError,
  str,
  type ArgSpecs,
  type CodeLibrary,
  type ExecContext,
  type ExecResult,
  type Executor,
  type FunctionInfo,
  type LibraryLanguage,
} from '../../../core/commands/executor.js';
import { HumanInputError, NoMoreAnswersError } from '../../../core/io/human.js';
import { isResumableError } from '../../../core/runtime/checkpoint.js';
import { FileAccessError } from '../../../shared/workspace/safe-file.js';
import { codeHash, readUserTests, userTestScript, userTestsDir } from './user-tests.js';
import { EngineError } from '../../../shared/errors.js';

export type Lang = LibraryLanguage;

// Not a prompt: a small Python program listing the top-level functions of the code on stdin.
const PY_INSPECT = [
  'import ast, json, sys',
  'src = sys.stdin.read()',
  'try:',
  '    tree = ast.parse(src)',
  'except SyntaxError as e:',
  '    print(json.dumps({"ok": False, "error": "SyntaxError: %s (line %s)" % (e.msg, e.lineno)}))',
  '    sys.exit(0)',
  'fns = []',
  'for node in tree.body:',
  '    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):',
  '        ret = (" -> " + ast.unparse(node.returns)) if node.returns else ""',
  '        fns.append({"name": node.name, "signature": "%s(%s)%s" % (node.name, ast.unparse(node.args), ret), "doc": ast.get_docstring(node) or ""})',
  'print(json.dumps({"ok": True, "functions": fns}))',
].join('\n');

/** Syntax check and the top-level functions of `code`, or the syntax error. */
export function inspectCode(code: string, lang: Lang): { ok: true; functions: FunctionInfo[] } | { ok: false; error: string } {
  if (lang === 'python') {
    const r = spawnSync('python3', ['-c', PY_INSPECT], { input: code, encoding: 'utf8', timeout: 20_000 });
    if (r.error)
      throw new EngineError(
        `cannot check Python syntax: ${(r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'python3 is not installed' : r.error.message}`,
        'EXECUTOR',
      );
    try {
      return JSON.parse(r.stdout) as { ok: true; functions: FunctionInfo[] } | { ok: false; error: string };
    } catch {
      throw new EngineError(`cannot check Python syntax: ${r.stderr.trim() || 'no output'}`, 'EXECUTOR');
    }
  }
  try {
    new Script(code, { filename: 'library-code.js' });
  } catch (err) {
    return { ok: false, error: `${(err as Error).name}: ${(err as Error).message}` };
  }
  const functions: FunctionInfo[] = [];
  const re = /(\/\*\*([\s\S]*?)\*\/\s*)?^(?:export\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\(([^)]*)\)/gm;
  for (const m of code.matchAll(re)) {
    const doc = (m[2] ?? '')
      .split('\n')
      .map((l) => l.replace(/^\s*\*\s?/, '').trim())
      .filter(Boolean)
      .join('\n');
    functions.push({ name: m[3]!, signature: `${m[3]}(${m[4]!.trim()})`, doc });
  }
  return { ok: true, functions };
}

function moduleOf(settings: Record<string, unknown>, lang: Lang): string {
  return str(settings.module) ?? (lang === 'python' ? 'library.py' : 'library.js');
}

function importHint(module: string, lang: Lang, names: string[]): string {
  if (lang === 'python') return `from ${module.replace(/\.py$/, '').split(/[\\/]/).join('.')} import ${names.join(', ')}`;
  return `const { ${names.join(', ')} } = require('./${module}');`;
}

function libraryEntry(f: FunctionInfo, lang: Lang): string {
  if (lang === 'python') {
    const doc = f.doc
      ? `\n    """${f.doc
          .split('\n')
          .map((l) => (l.trim() ? l : ''))
          .join('\n    ')
          .replace(/\n {4}\n/g, '\n\n')}"""`
      : '';
    return `def ${f.signature}:${doc}\n`;
  }
  return `function ${f.signature}${f.doc ? `\n  /** ${f.doc.split('\n').join('\n   * ')} */` : ''}\n`;
}

/** Whether `text` ends with `block` (ignoring trailing white space). */
function endsWithBlock(text: string, block: string): boolean {
  const b = block.trimEnd();
  return b !== '' && text.trimEnd().endsWith(b);
}

/** What the library executor remembers in a state: the last tests of a draft, and which failed. */
interface LibraryNote {
  hash: string;
  failed?: string;
}

/** The user's tests folder: the tests_dir setting (a template), else none. */
function userTestsFolder(ctx: ExecContext): string | undefined {
  const setting = str(ctx.settings.tests_dir);
  if (setting === undefined) return undefined;
  const dir = ctx.renderText(setting, `commands/${ctx.command}/settings/tests_dir`).trim();
  return dir === '' ? undefined : userTestsDir(dir, ctx.launchDir);
}

/** Ask the user whether to save code whose tests failed. */
async function askOverride(ctx: ExecContext, names: string[], what: string): Promise<string | undefined> {
  const prompt = ctx.templates.render('human_question', {
    kind: 'override',
    text: what,
    command: ctx.command,
    agent: ctx.agent,
    functions: names.join(', '),
  });
  try {
    return await ctx.human.ask({ agent: ctx.agent, role: ctx.role, state: ctx.state, kind: 'question', prompt });
  } catch (err) {
    // Nobody to ask (no terminal, the answers used up): the save stays refused.
    if (err instanceof NoMoreAnswersError || (err instanceof HumanInputError && !isResumableError(err))) return undefined;
    throw err;
  }
}

export const executor: Executor = {
  name: 'library',
  durability: { rerunNeedsApproval: true },
  description: 'Check, test and save a function to the code library (a module in the workspace that later code imports).',
  settings: {
    type: 'object',
    additionalProperties: false,
    required: ['op'],
    properties: {
      op: {
        type: 'string',
        enum: ['test', 'save'],
        description: 'test: check syntax and run the tests; save: the same, then append the function to the library.',
      },
      language: { type: 'string', enum: ['python', 'javascript'], description: 'Language of the library (default python).' },
      module: {
        type: 'string',
        minLength: 1,
        description: 'Path of the library module in the workspace (default library.py or library.js).',
      },
      memory: {
        type: 'string',
        minLength: 1,
        description: "Memory file that lists the library's signatures and docstrings (default code_library, when declared).",
      },
      draft: {
        type: 'string',
        minLength: 1,
        description: 'Memory file holding the code written by an earlier write_code command; used when the agent gives no code.',
      },
      timeout_ms: { type: 'integer', minimum: 100, maximum: 3_600_000 },
      ask_tests: {
        type: 'boolean',
        description:
          'op test: before the tests run, ask the user for tests of their own to run with the function (a scripted answer "tests: CODE", or a question at a terminal; Enter: none); default false.',
      },
      feedback: {
        type: 'boolean',
        description:
          'op test: after the tests ran, ask the user for feedback on their results (told to the agent and written to the logs); default false.',
      },
      tests_dir: {
        type: 'string',
        description:
          'A folder of the user\'s test files (test_*.py, *_test.py; test_*.js, *.test.js), run with the function at every test and save; a template (e.g. "{{inputs.tests}}"), relative to the folder sop was started from; empty: none.',
      },
    },
  },
  args(settings): ArgSpecs {
    const draft = str(settings.draft);
    return {
      code: {
        type: 'string',
        required: !draft,
        description: `The function(s) to ${settings.op === 'save' ? 'save' : 'test'}, with docstrings${draft ? ` (default: the draft in ${draft})` : ''}.`,
      },
      tests: {
        type: 'string',
        description:
          'Optional test code run after the function is defined (e.g. assert statements); without it only the syntax is checked.',
      },
    };
  },
  async run(args, ctx): Promise<ExecResult> {
    const s = ctx.settings;
    const lang: Lang = s.language === 'javascript' ? 'javascript' : 'python';
    const draft = str(s.draft);
    const code = (str(args.code) ?? (draft ? ctx.memory.read(draft) : '')).trim();
    if (code === '')
      throw new ExecutorInputError(draft ? `no code given and the draft "${draft}" is empty; write the code first` : 'the code is empty');
    const op = s.op === 'save' ? 'save' : 'test';
    const module = moduleOf(s, lang);
    const render = (view: Record<string, unknown>) => ctx.templates.render('library_result', { op, module, language: lang, ...view });

    const inspected = inspectCode(code, lang);
    if (!inspected.ok) {
      return { ok: false, result: render({ syntax_error: inspected.error }), summary: `${op} failed: ${inspected.error}` };
    }
    const functions = inspected.functions;
    if (functions.length === 0) {
      return { ok: false, result: render({ no_function: true }), summary: `${op} failed: the code defines no top-level function` };
    }
    const names = functions.map((f) => f.name);

    // The agent's tests, then each of the user's test files, every one with the code defined first.
    const hash = codeHash(code);
    const scripts: Array<{ name?: string; script: string }> = [];
    const tests = str(args.tests)?.trim();
    if (tests) scripts.push({ script: `${code}\n\n${tests}\n` });
    const userDir = userTestsFolder(ctx);
    if (userDir) for (const f of readUserTests(userDir, lang)) scripts.push({ name: f.name, script: userTestScript(code, f, lang) });
    // the user's own tests, given now (ask_tests): run like a test file of theirs
    const given = op === 'test' ? await askTests(ctx, names, lang) : undefined;
    if (given) scripts.push({ name: GIVEN_TESTS, script: `${code}\n\n${given}\n` });
    let testView: ReturnType<typeof outcomeContext> | undefined;
    const userViews: Array<ReturnType<typeof outcomeContext> & { name: string }> = [];
    if (scripts.length > 0) {
      const ws = ctx.workspace().ensure();
      const approval = await approveCode(ctx, lang, scripts.map((t) => t.script).join('\n\n'));
      if (!approval.approved) {
        return {
          ok: false,
          result: render({ tests_refused: true, reply: approval.reply }),
          summary: `${op} of ${names.join(', ')}: the user did not approve running the tests`,
        };
      }
      const timeoutMs = typeof s.timeout_ms === 'number' ? s.timeout_ms : CODE_DEFAULTS.timeoutMs;
      for (const t of scripts) {
        const outcome = await runCode({
          language: lang,
          code: t.script,
          cwd: ws.root,
          timeoutMs,
          sandbox: ctx.sandbox,
          network: ctx.sandboxNetwork,
          env: { ...codeEnv(ctx, ws.root), ...(userDir ? { SOP_TESTS_DIR: userDir } : {}) },
          signal: ctx.signal,
        });
        const view = outcomeContext(outcome, timeoutMs, lang);
        if (t.name === undefined) testView = view;
        else userViews.push({ ...view, name: t.name });
      }
    }
    const failedNow = [
      ...(testView && !testView.ok ? ['your tests'] : []),
      ...userViews.filter((v) => !v.ok).map((v) => `the user's ${v.name}`),
    ];
    // save_code after a failing test of this very code: the failure stands until a test passes.
    const prior = ctx.note as LibraryNote | undefined;
    const priorFailed = scripts.length === 0 && prior?.hash === hash && prior.failed ? prior.failed : undefined;
    const note: LibraryNote | undefined =
      scripts.length > 0 ? { hash, ...(failedNow.length ? { failed: failedNow.join(', ') } : {}) } : prior;
    const testParts = { test: testView, user_tests: userViews.length ? userViews : undefined, prior_failed: priorFailed };
    let overridden = false;
    if (failedNow.length > 0 || priorFailed) {
      const what = priorFailed ?? failedNow.join(', ');
      if (op === 'test') {
        const summary = `tests of ${names.join(', ')} failed (${what})`;
        const feedback = await codeFeedback(ctx, summary, TEST_FEEDBACK_TAG); // feedback: the user on the results
        return {
          ok: false,
          result: render({ functions, tests_failed: true, ...testParts, feedback }),
          summary: feedback ? `${summary}; the user's feedback: "${firstLine(feedback)}"` : summary,
          note,
        };
      }
      // Saving code whose tests failed takes the user's word for it (never --yes, never by default).
      const reply = ctx.yes ? undefined : await askOverride(ctx, names, what);
      overridden = reply !== undefined && /^\s*(y|yes|save( it)?( anyway)?|override)\s*[.!]*\s*$/i.test(reply);
      if (!overridden) {
        return {
          ok: false,
          result: render({ functions, tests_failed: true, ...testParts, declined: reply !== undefined, reply: reply ?? '' }),
          summary: `save of ${names.join(', ')} refused: its tests failed (${what})`,
          note,
        };
      }
    }

    if (op === 'test') {
      const passed = [
        ...(testView ? ['tests passed'] : []),
        ...(userViews.length ? [`the user's tests passed (${userViews.length})`] : []),
      ];
      const summary = `checked ${names.join(', ')}${passed.length ? `; ${passed.join('; ')}` : ' (syntax only)'}`;
      const feedback = scripts.length > 0 ? await codeFeedback(ctx, summary, TEST_FEEDBACK_TAG) : undefined; // feedback: the user on the results
      return {
        ok: true,
        result: render({ functions, ...testParts, feedback }),
        summary: feedback ? `${summary}; the user's feedback: "${firstLine(feedback)}"` : summary,
        note,
      };
    }

    const { listed } = saveToLibrary(ctx, code, functions, lang, module, str(s.memory));
    return {
      ok: true,
      result: render({
        functions,
        ...testParts,
        overridden,
        saved: true,
        import_hint: importHint(module, lang, names),
        listed,
      }),
      summary:
        `saved ${functions.map((f) => f.signature).join(', ')} to ${module}` +
        (overridden ? ' although its tests failed (the user chose to save it)' : testView || userViews.length ? ' (tests passed)' : ''),
      note,
    };
  },
};

/**
 * Append (or replace) `functions` of `code` in the library module of the workspace, and list them
 * in the code library memory file (`memory`, default code_library when declared). Idempotent: a
 * save interrupted after the append and run again on resume finds its block already at the end
 * of the module; a function saved again (a later run with --memory-dir) replaces its earlier copy
 * (library-merge.ts). The scientist's code frameworks are saved this way too (task_board framework).
 */
export function saveToLibrary(
  ctx: ExecContext,
  code: string,
  functions: readonly FunctionInfo[],
  lang: Lang,
  module: string,
  memory?: string,
): { listed?: string; importHint: string } {
  const names = functions.map((f) => f.name);
  const ws = ctx.workspace();
  let existing = '';
  try {
    existing = ws.read(module);
  } catch (err) {
    if ((err instanceof FileAccessError ? err.errno : (err as NodeJS.ErrnoException).code) !== 'ENOENT') throw err;
  }
  let block = `${code}\n`;
  if (lang === 'javascript') block += names.map((n) => `module.exports.${n} = ${n};\n`).join('');
  if (!endsWithBlock(existing, block)) ws.write(module, mergeIntoModule(existing, block, names, lang));
  const memoryName = memory ?? 'code_library';
  const listed = ctx.memory.has(memoryName);
  const entry = functions.map((f) => libraryEntry(f, lang)).join('\n') + '\n';
  if (listed && !endsWithBlock(ctx.memory.read(memoryName), entry))
    ctx.memory.write(memoryName, mergeLibraryEntries(ctx.memory.read(memoryName), entry, names));
  else if (!listed && memory) throw new ExecutorInputError(`memory file "${memoryName}" is not declared by this SOP`);
  return { ...(listed ? { listed: memoryName } : {}), importHint: importHint(module, lang, names) };
}

/** The code library of a command's workspace, as other executors reach it (ExecContext.library). */
export function codeLibrary(ctx: ExecContext): CodeLibrary {
  return { inspect: inspectCode, save: (code, functions, lang, module) => saveToLibrary(ctx, code, functions, lang, module) };
}

/** The name the user's tests given at test time have in results ("The user's test file ..."). */
const GIVEN_TESTS = '(the tests you gave now)';
const TESTS_TAG = /^\s*tests\s*:\s*/i;
/** A scripted answer giving feedback on test results (a run_code's is `feedback:`). */
const TEST_FEEDBACK_TAG = /^\s*test feedback\s*:\s*/i;

/**
 * ask_tests: the user's own tests for the functions, given now: a scripted answer `tests: CODE`,
 * or a question at a terminal (an answer of several lines starts with <<<); none under --yes,
 * with nobody to ask, or for an empty answer.
 */
async function askTests(ctx: ExecContext, names: string[], lang: Lang): Promise<string | undefined> {
  if (ctx.settings.ask_tests !== true || ctx.yes) return undefined;
  const prompt =
    `${ctx.agent} is about to test ${names.join(', ')}. Tests of your own to run with it ` +
    `(${lang} code run after the function is defined, e.g. assert statements; several lines: start with <<<, end with a line EOF; Enter: none):`;
  const tagged = await takeTagged(ctx, TESTS_TAG, prompt);
  if (tagged !== undefined) return tagged.trim() || undefined;
  if (!ctx.human.interactive) return undefined;
  const reply = await ctx.human.ask({ agent: ctx.agent, role: ctx.role, state: ctx.state, kind: 'question', prompt });
  return reply.trim() || undefined;
}

const firstLine = (s: string) => s.trim().split('\n')[0]!.slice(0, 200);
