// Hostile templates and SOPs that `sop validate` used to pass and `sop run` then refused: an
// unclosed {{#if}} in a component (the run died at turn 3), a typo in {{inputs.NAME}} (empty
// text, no word), exponentially nested inline partials (minutes and gigabytes), the log helper,
// missing sub-flow files, over-long memory names, `args` naming no argument. Each is reproduced
// through the built CLI or the same in-process code path, and a fuzz run asserts that every SOP
// validate accepts gets past run's start-up to its first LLM call.
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { runCommand } from '../src/apps/cli/run-command.js';
import { validateCommand } from '../src/apps/cli/validate-command.js';
import { checkTemplate } from '../src/format/sop/template-check.js';
import { TEMPLATE_VARIABLES } from '../src/format/sop/template-context.js';
import { compileTemplate, TEMPLATE_NAMES } from '../src/core/prompt/templates.js';
import { RENDER_LIMITS } from '../src/format/sop/render-limits.js';
import { Rng } from '../src/core/runtime/rng.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { validateSopDocument } from '../src/format/sop/sop-file.js';
import { Mutator } from './helpers/sop-mutator.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { spawnCliAsync, requireBuiltCli } from './helpers/cli.js';
import { scaled } from './helpers/time.js';

const ROOT = join(import.meta.dirname, '..');
const MUTANTS = 180;
const SEED = Number(process.env.SOP_FUZZ_SEED ?? 1111);

let dir: string;
const counts = { cases: 0, bombs: 0, accepted: 0, rejected: 0, agreed: 0, failedLater: 0 };

beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-hostile-templates-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
  console.log(
    `hostile templates: ${counts.cases} failure cases reproduced and refused by validate (${counts.bombs} template bombs stopped within the limits); ` +
      `fuzz: ${MUTANTS} mutated SOPs, ${counts.accepted} accepted by validate and ${counts.rejected} rejected; ` +
      `${counts.agreed} of ${counts.accepted} accepted ones got past run's start-up to an LLM call or a clean end (${counts.failedLater} failed later, none for a static reason)`,
  );
});

async function cli(args: string[]) {
  const r = await spawnCliAsync([...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, SOP_DEBUG: '' },
    timeout: 60_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, lines: r.stderr.split('\n').filter(Boolean) };
}

function write(name: string, content: string | object): string {
  const file = join(dir, name);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content, null, 2) + '\n');
  return file;
}

/** Ann plays R in s (leading to end), with one input, "topic". */
function base(extra: Record<string, unknown> = {}, s: Record<string, unknown> = {}) {
  return {
    name: 'hostile',
    inputs: { topic: { default: 'tea' } },
    agents: { Ann: { roles: { s: 'R' } } },
    root: 's',
    states: {
      s: { roles: ['R'], components: { R: { task: 'Talk about {{inputs.topic}}.' } }, next_states: { '0': 'end' }, ...s },
      end: { final: true },
    },
    ...extra,
  };
}

/** validate exits 1 with one line per problem, each naming the file and the pointer, no stack trace. */
async function refused(file: string, pointer: string, message: RegExp) {
  const r = await cli(['validate', file]);
  expect(r.code).toBe(1);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  const line = r.lines.find((l) => l.includes(`: ${pointer}: `));
  expect(line, r.stderr).toBeDefined();
  expect(line).toMatch(message);
  expect(line!.startsWith(`${file}:`)).toBe(true);
  counts.cases++;
  return r;
}

describe('sop validate compiles every template', () => {
  it('an unclosed {{#if}} in a component: exit 1 naming its pointer; run refuses it before any LLM call', async () => {
    const file = write(
      'unclosed.sop.json',
      base({}, { components: { R: { task: 'Talk.', rule: 'Be brief. {{#if inputs.topic}}On {{inputs.topic}}.' } } }),
    );
    await refused(file, '/states/s/components/R/rule', /\{\{#if\}\} is not closed: add \{\{\/if\}\}/);
    const run = await cli(['run', file, '--llm', 'mock', '--max-turns', '3', '--json']);
    expect(run.code).toBe(1);
    expect(run.stdout).not.toContain('"llm_call"');
    expect(run.stderr).toMatch(/\/states\/s\/components\/R\/rule: \{\{#if\}\} is not closed/);
  });

  it('{{inputs.gaol}} and the {{goal}} shorthand without a declared input are errors', async () => {
    const file = write(
      'typo.sop.json',
      base(
        { inputs: { goal: { default: 'g' } } },
        {
          environment_prompt: 'Aim: {{inputs.gaol}}',
          components: { R: { task: 'Reach {{goal}}.' } },
        },
      ),
    );
    await refused(
      file,
      '/states/s/environment_prompt',
      /\{\{inputs\.gaol\}\}: input "gaol" is not declared in "inputs" \(declared: goal\)/,
    );
    const noGoal = write('no-goal.sop.json', base({}, { begin_role: 'R', begin_query: 'Our goal: {{goal}}' }));
    await refused(noGoal, '/states/s/begin_query', /reads the input "goal", which this SOP does not declare/);
  });

  it('variables the engine does not give a template are errors; those it gives pass', async () => {
    const file = write(
      'vars.sop.json',
      base(
        {
          templates: {
            code_result: 'Ran: {{stdout}} for {{inputs.topic}}', // executor results see only their own values
            judge_user:
              '{{#each history}}{{name}}: {{content}} ({{../state.name}}){{/each}} {{#each keys as |k|}}{{k.key}}{{/each}} {{@root.inputs.topic}}',
          },
        },
        { components: { R: { task: '{{memory.plan}} {{task_board.text}}' } } },
      ),
    );
    const r = await refused(
      file,
      '/templates/code_result',
      /"inputs" is not a variable of this template \(it has: refused, reply, language/,
    );
    expect(r.stderr).not.toContain('/templates/judge_user');
    expect(r.stderr).toMatch(/\/states\/s\/components\/R\/task: \{\{memory\.plan\}\}: memory file "plan" is not declared/);
    expect(r.stderr).toMatch(/\{\{task_board\.text\}\}: "task_board" is given only to SOPs with a task_board/);
  });

  it('controller prompts are templates: checked by validate and rendered in the run', async () => {
    const bad = write(
      'judge.sop.json',
      base({}, { controller: { judge: { system_prompt: 'Judge the talk on {{inputs.topc}}.' } }, next_states: { '0': 's', '1': 'end' } }),
    );
    await refused(bad, '/states/s/controller/judge/system_prompt', /input "topc" is not declared/);
    const doc = base(
      {},
      { controller: { judge: { system_prompt: 'Judge the talk on {{inputs.topic}}.' } }, next_states: { '0': 's', '1': 'end' } },
    );
    const llm = new ScriptedLlm({ judge: ['<end>1</end>'] });
    const result = await new Run({ sop: validateSopDocument(doc, 'j.sop.json').sop, file: 'j.sop.json', llm, maxTurns: 3 }).run();
    expect(result.status).toBe('finished');
    expect(llm.of('judge')[0]!.messages[0]!.content).toContain('Judge the talk on tea.');
  });

  it('every prompts/*.hbs passes the check against the variables the engine gives it', () => {
    for (const name of TEMPLATE_NAMES) {
      const source = readFileSync(join(ROOT, 'prompts', `${name}.hbs`), 'utf8');
      expect([name, checkTemplate(source, { roots: new Set(TEMPLATE_VARIABLES[name]), inputs: new Set(), memory: new Set() })]).toEqual([
        name,
        [],
      ]);
    }
  });

  it('unknown helpers, partials and decorators, and misused block helpers, are errors', () => {
    const cases: Array<[string, RegExp]> = [
      ['{{shout inputs.topic}}', /unknown helper "shout"/],
      ['{{> header}}', /partial "header" is not defined/],
      ['{{#each}}x{{/each}}', /#each takes 1 argument, got 0/],
      ['{{if inputs.topic}}', /"if" works only as a block/],
      ['{{*deco}}', /decorators are not supported/],
      ['{{#each inputs as |a|}}{{../../x}}{{/each}}', /goes above the top of the template/],
      ['{{#if inputs.topic}}x{{/unless}}', /if doesn't match unless/],
    ];
    for (const [source, message] of cases) {
      const problems = checkTemplate(source, { roots: new Set(['inputs']), inputs: new Set(['topic']) });
      expect(problems.map((p) => p.message).join('\n'), source).toMatch(message);
    }
    // What the engine's own templates do is fine: block params, @index, ../, (eq ...), lookup.
    expect(
      checkTemplate(
        '{{#each items as |it i|}}{{inc @index}}{{it.x}}{{#if (eq ../kind "a")}}{{lookup it "y"}}{{/if}}{{/each}}{{join items ", "}}',
        { roots: new Set(['items', 'kind']) },
      ),
    ).toEqual([]);
  });
});

describe('the log helper is disabled', () => {
  it('validate refuses a SOP using it; a render never reaches the console', async () => {
    const file = write('log.sop.json', base({}, { components: { R: { task: 'Talk. {{log "secret" inputs.topic}}' } } }));
    await refused(file, '/states/s/components/R/task', /the log helper is disabled in SOP templates/);
    const spy = vi.spyOn(console, 'log').mockImplementation(() => undefined);
    const spyErr = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      expect(() => compileTemplate('{{#if x}}{{log "secret"}}{{/if}}', 'test')({ x: 1 })).toThrow(/Missing helper: "log"/);
      expect(spy).not.toHaveBeenCalled();
      expect(spyErr).not.toHaveBeenCalled();
    } finally {
      spy.mockRestore();
      spyErr.mockRestore();
    }
  });
});

describe('template bombs', () => {
  const bomb = (levels: number, fan: number) => {
    let src = '{{#*inline "p0"}}xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx{{/inline}}';
    for (let i = 1; i <= levels; i++) src += `{{#*inline "p${i}"}}${`{{> p${i - 1}}}`.repeat(fan)}{{/inline}}`;
    return `${src}{{#if inputs.topic}}{{> p${levels}}}{{/if}}`;
  };

  it('exponentially nested inline partials: validate refuses them statically, at once', async () => {
    const file = write('bomb.sop.json', base({}, { components: { R: { task: bomb(10, 10) } } }));
    const t0 = performance.now();
    await refused(file, '/states/s/components/R/task', /the partials expand into 11,111,111,111 partial calls \(at most 1,000\)/);
    expect(performance.now() - t0).toBeLessThan(scaled(10_000)); // milliseconds of work: without the static check, days
    const deep = write('deep.sop.json', base({}, { components: { R: { task: bomb(20, 1) } } }));
    await refused(deep, '/states/s/components/R/task', /partials nested 21 deep \(at most 16\)/);
    const rec = write(
      'recursive.sop.json',
      base({}, { components: { R: { task: '{{#*inline "a"}}{{> b}}{{/inline}}{{#*inline "b"}}{{> a}}{{/inline}}{{> a}}' } } }),
    );
    await refused(rec, '/states/s/components/R/task', /partial "a" calls itself \(a -> b -> a\)/);
  });

  it('at run time, a render past the limits stops at once with a clear error', () => {
    const cases: Array<[string, object, RegExp]> = [
      [bomb(10, 10), { inputs: { topic: 'x' } }, /more than 200,000 loop iterations and partial calls in one render/],
      [bomb(30, 2), { inputs: { topic: 'x' } }, /partials nested more than 16 deep/],
      ['{{#*inline "a"}}{{> a}}{{/inline}}{{#if go}}{{> a}}{{/if}}', { go: true }, /partials nested more than 16 deep/],
      // Loops in loops over data: 40^4 iterations.
      [
        '{{#each l}}{{#each ../l}}{{#each ../../l}}{{#each ../../../l}}.{{/each}}{{/each}}{{/each}}{{/each}}',
        { l: Array.from({ length: 40 }, (_, i) => ({ i })) },
        /more than 200,000 loop iterations/,
      ],
      // Few steps, big text: a partial of 1 MB called 100 times.
      [
        `{{#*inline "big"}}${'y'.repeat(1_000_000)}{{/inline}}{{#*inline "x"}}${'{{> big}}'.repeat(100)}{{/inline}}{{#if go}}{{> x}}{{/if}}`,
        { go: true },
        /grows past 16,000,000 characters/,
      ],
    ];
    for (const [source, context, message] of cases) {
      const t0 = performance.now();
      expect(() => compileTemplate(source, '/states/s/components/R/task')(context)).toThrow(message);
      expect(performance.now() - t0).toBeLessThan(scaled(5_000)); // the limits stop a render early (without them: minutes, or never)
      counts.bombs++;
    }
    // The limits leave room for real prompts: a 2 MB memory file renders.
    expect(compileTemplate('{{#each parts}}{{this}}{{/each}}', 'ok')({ parts: ['a'.repeat(2_000_000), 'b'] })).toHaveLength(2_000_001);
    expect(RENDER_LIMITS.maxPartialDepth).toBe(16);
  });

  it('a run whose template blows up at turn 1 fails with one line, not minutes of work', () => {
    const doc = base({}, { components: { R: { task: '{{#each inputs}}{{#each ../inputs}}{{/each}}{{/each}}' } } });
    const sop = validateSopDocument(doc, 'b.sop.json').sop;
    // Data-driven loops pass validate; the render limit holds at run time.
    sop.inputs = Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`k${i}`, { default: 'v' }]));
    return new Run({ sop, file: 'b.sop.json', llm: new ScriptedLlm(), maxTurns: 2 }).run().then((r) => {
      expect(r.status).toBe('failed');
      expect(r.error!.message).toMatch(/^\/states\/s\/components\/R\/task: more than 200,000 loop iterations/);
    });
  });
});

describe('validate catches what run refuses at start-up', () => {
  it('a sub-flow file that is missing or not a SOP', async () => {
    const sub = (file: string) =>
      base(
        {},
        {
          commands: { helper: { executor: 'sop', settings: { file } }, done: { executor: 'finish' } },
          next_states: { '1': 'end' },
        },
      );
    writeFileSync(join(dir, 'notes.txt'), 'not a SOP\n');
    await refused(
      write('sub-missing.sop.json', sub('missing.sop.json')),
      '/states/s/commands/helper/settings',
      /missing\.sop\.json: \/: file not found/,
    );
    await refused(write('sub-notes.sop.json', sub('notes.txt')), '/states/s/commands/helper/settings', /notes\.txt/);
    // A sub-flow that loads but whose own sub-flow is missing: reported at the caller's command.
    write('middle.sop.json', sub('missing.sop.json'));
    await refused(
      write('sub-deep.sop.json', sub('middle.sop.json')),
      '/states/s/commands/helper/settings/file',
      /sub-flow middle\.sop\.json: \/states\/s\/commands\/helper\/settings: .*file not found/,
    );
  });

  it('args naming an argument the command does not have (known only from the sub-flow file)', async () => {
    write('child.sop.json', base({ inputs: { goal: { required: true } } }, { components: { R: { task: 'Do {{inputs.goal}}.' } } }));
    const file = write(
      'args.sop.json',
      base(
        {},
        {
          commands: {
            child: { executor: 'sop', settings: { file: 'child.sop.json' }, args: { gaol: 'The goal.' } },
            done: { executor: 'finish' },
          },
          next_states: { '1': 'end' },
        },
      ),
    );
    await refused(file, '/states/s/commands/child/args/gaol', /"gaol" is not an argument of this command \(arguments: goal\)/);
  });

  it('over-long memory file names', async () => {
    const name = 'm'.repeat(300);
    const file = write('long-memory.sop.json', base({ memory: { [name]: '' } }));
    await refused(file, `/memory/${name}`, /memory file name is 300 characters; at most 200/);
  });

  it('agents-v1: a knowledge base file that is missing', async () => {
    const file = write(
      'knowledge.sop.json',
      base({ agents_v1: {} }, { components: { R: { task: 'Help.', knowledge: { path: 'kb/missing.json' } } } }),
    );
    await refused(file, '/states/s/components/R/knowledge/path', /knowledge file kb\/missing\.json not found/);
  });

  it('an embedder spec run cannot load', async () => {
    const file = write('embedder.sop.json', base({ environment: { top_k: 2, embedder: 'transformers' } }));
    await refused(file, '/environment/embedder', /embedder "transformers" needs a model/);
  });
});

// --- fuzz: validate and run agree ---

interface Outcome {
  accepted: boolean;
  startup?: string;
  llmCalls: number;
  status?: string;
  error?: string;
}

async function quietly<T>(fn: () => Promise<T>): Promise<{ value?: T; thrown?: unknown; stdout: string; stderr: string }> {
  const out = process.stdout.write.bind(process.stdout);
  const err = process.stderr.write.bind(process.stderr);
  let stdout = '';
  let stderr = '';
  process.stdout.write = (s: string) => {
    stdout += s;
    return true;
  };
  process.stderr.write = (s: string) => {
    stderr += s;
    return true;
  };
  try {
    return { value: await fn(), stdout, stderr };
  } catch (thrown) {
    return { thrown, stdout, stderr };
  } finally {
    process.stdout.write = out;
    process.stderr.write = err;
  }
}

describe('fuzz: every SOP validate accepts gets past run start-up', () => {
  it(`${MUTANTS} mutated SOPs: validate and run --llm mock --max-turns 3 agree`, async () => {
    const fuzzDir = mkdtempSync(join(dir, 'fuzz-'));
    const sources: string[] = [];
    for (const f of readdirSync(join(ROOT, 'sops'))) {
      copyFileSync(join(ROOT, 'sops', f), join(fuzzDir, f)); // sub-flows resolve next to the mutants
      if (f.endsWith('.sop.json')) sources.push(join(ROOT, 'sops', f));
    }
    for (const d of readdirSync(join(ROOT, 'examples'))) {
      // mcp: a copy of examples/mcp cannot start its MCP server (a file next to it, importing the SDK from the repo);
      // servers starting is checked by validate --check-tools, not here
      if (d === 'mcp') continue;
      for (const f of readdirSync(join(ROOT, 'examples', d))) if (f.endsWith('.sop.json')) sources.push(join(ROOT, 'examples', d, f));
    }
    writeFileSync(join(fuzzDir, 'notes.txt'), 'not a SOP\n');
    const answers = join(fuzzDir, 'answers.txt');
    writeFileSync(answers, 'ok\n'.repeat(50));
    const m = new Mutator(new Rng(SEED));
    const disagreements: string[] = [];
    const laterStatic: string[] = [];
    for (let i = 0; i < MUTANTS; i++) {
      // let the worker answer vitest between mutants: validate and a run's start-up are synchronous
      // work, and a minute without a turn of the event loop ends the test run with an RPC timeout
      await new Promise((r) => setImmediate(r));
      const src = sources[i % sources.length]!;
      let { text, what } = m.mutateStatic(readFileSync(src, 'utf8'));
      if (m.int(5) === 0) {
        const again = m.mutate(text);
        if (!/nested|copies|size limit/.test(again.what)) ({ text, what } = { text: again.text, what: `${what}, then ${again.what}` });
      }
      const file = join(fuzzDir, `m${i}.sop.json`);
      writeFileSync(file, text);
      const v = await quietly(async () => validateCommand([file], { quiet: true }));
      const outcome: Outcome = { accepted: v.value === 0, llmCalls: 0 };
      if (v.thrown) disagreements.push(`${what}: validate threw ${(v.thrown as Error).message}`);
      if (!outcome.accepted) {
        counts.rejected++;
        continue;
      }
      counts.accepted++;
      let doc: { inputs?: Record<string, unknown>; agents?: Record<string, { human?: boolean }> } = {};
      try {
        doc = JSON.parse(text);
      } catch {
        /* validate accepted it, so it parses */
      }
      const humans = Object.values(doc.agents ?? {}).some((a) => a.human);
      const r = await quietly(() =>
        runCommand({
          file,
          llm: 'mock',
          maxTurns: 3,
          out: join(fuzzDir, 'runs'),
          json: true,
          quiet: true,
          inputs: Object.keys(doc.inputs ?? {}).map((n) => `${n}=fuzz value`),
          ...(humans ? { answers } : {}),
        }),
      );
      const events = r.stdout
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { type: string; status?: string; error?: string });
      outcome.llmCalls = events.filter((e) => e.type === 'llm_call').length;
      const finished = events.find((e) => e.type === 'run_finished');
      outcome.status = finished?.status;
      outcome.error = finished?.error ?? (r.thrown ? (r.thrown as Error).message : undefined);
      if (r.thrown || (finished?.status === 'failed' && outcome.llmCalls === 0)) {
        disagreements.push(
          `m${i} (${src.replace(ROOT, '')}: ${what}): validate accepted it, run refused it at start-up: ${String(outcome.error).slice(0, 300)}`,
        );
        continue;
      }
      counts.agreed++;
      if (finished?.status === 'failed') {
        counts.failedLater++;
        if (/Parse error|Missing helper|partial|is not closed|not declared/.test(outcome.error ?? ''))
          laterStatic.push(`m${i} (${what}): ${outcome.error}`);
      }
    }
    expect(counts.accepted).toBeGreaterThan(30);
    expect(counts.rejected).toBeGreaterThan(30);
    expect(disagreements).toEqual([]);
    expect(laterStatic).toEqual([]);
  }, 300_000);
});
