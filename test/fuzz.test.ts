// Hostile input: 1,000 SOP files mutated from the shipped ones (deleted keys, wrong types, random
// strings, deep nesting, prototype keys, broken text, huge and cyclic documents) go through the
// loader and `sop validate`: no uncaught exception, every failure a clear error with a JSON
// pointer, no prototype polluted. Valid mutants are also run a few turns with the mock LLM.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCommand } from '../src/apps/cli/validate-command.js';
import { MockProvider } from '../src/core/llm/mock.js';
import { compileTemplate } from '../src/core/prompt/templates.js';
import { Rng } from '../src/core/runtime/rng.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { SopError, formatDiagnostic } from '../src/format/sop/diagnostics.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import type { Sop } from '../src/format/sop/types.js';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';
import { Mutator } from './helpers/sop-mutator.js';

const MUTANTS = 1000;
const SEED = Number(process.env.SOP_FUZZ_SEED ?? 4242);
const CODE_BUGS = /^(TypeError|RangeError|ReferenceError|InternalError)$/;

function shippedSops(): Array<{ file: string; text: string }> {
  const files: string[] = [];
  for (const dir of ['sops', ...readdirSync('examples').map((d) => join('examples', d))]) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)) if (f.endsWith('.sop.json')) files.push(join(dir, f));
  }
  return files.map((file) => ({ file, text: readFileSync(file, 'utf8') }));
}

function parses(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function clearError(d: { pointer: string; message: string }, file: string, line: string): string | undefined {
  if (!(d.pointer === '' || d.pointer.startsWith('/'))) return `pointer "${d.pointer}" is not a JSON pointer`;
  if (!d.message || d.message.length > 2000) return 'empty or enormous message';
  if (/\n\s+at /.test(d.message)) return 'stack trace in message';
  if (!line.startsWith(`${file}:`)) return `line does not start with the file: ${line.slice(0, 80)}`;
  return undefined;
}

describe('fuzzing the SOP loader', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sop-fuzz-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`loads ${MUTANTS} mutated SOPs with clear errors only`, async () => {
    const sources = shippedSops();
    expect(sources.length).toBeGreaterThanOrEqual(3);
    const m = new Mutator(new Rng(SEED));
    const problems: string[] = [];
    const valid: Array<{ sop: Sop; file: string; what: string }> = [];
    let rejected = 0;
    let warned = 0;
    const cliSample: string[] = [];
    const slow: string[] = [];
    for (let i = 0; i < MUTANTS; i++) {
      // let the worker answer vitest between mutants: a minute without a turn of the event loop
      // (a busy machine) ends the test run with an RPC timeout
      if (i % 20 === 0) await new Promise((r) => setImmediate(r));
      const src = sources[i % sources.length]!;
      let { text, what } = m.mutate(src.text);
      if (m.int(4) === 0 && !/nested|copies|size limit/.test(what) && parses(text)) {
        const again = m.mutate(text);
        ({ text, what } = { text: again.text, what: `${what}, then ${again.what}` });
      }
      const file = join(dir, `m${i}.sop.json`);
      writeFileSync(file, text);
      if (i % 25 === 0) cliSample.push(file);
      const t0 = performance.now();
      try {
        const loaded = loadSopFile(file);
        if (loaded.warnings.length) warned++;
        for (const w of loaded.warnings) {
          const bad = clearError(w, file, formatDiagnostic(w));
          if (bad) problems.push(`${src.file} ${what}: warning: ${bad}`);
        }
        valid.push({ sop: loaded.sop, file, what: `${src.file} ${what}` });
      } catch (err) {
        if (!(err instanceof SopError)) {
          problems.push(`${src.file} ${what}: uncaught ${(err as Error).name}: ${(err as Error).message.slice(0, 200)}`);
          continue;
        }
        rejected++;
        if (err.diagnostics.filter((d) => d.severity === 'error').length === 0)
          problems.push(`${src.file} ${what}: SopError without an error`);
        for (const d of err.diagnostics) {
          const bad = clearError(d, file, formatDiagnostic(d));
          if (bad) problems.push(`${src.file} ${what}: ${bad}`);
        }
      }
      const ms = performance.now() - t0;
      if (ms > 500) slow.push(`${Math.round(ms)} ms: ${src.file} ${what}`);
    }
    expect(Object.keys(Object.prototype)).toEqual([]);
    expect(({} as { polluted?: unknown }).polluted).toBeUndefined();

    // Valid mutants run a few turns with the mock LLM: any failure is a clear one.
    let ran = 0;
    for (const v of valid.slice(0, 60)) {
      try {
        const result = await new Run({
          sop: v.sop,
          file: v.file,
          llm: new MockProvider(),
          maxTurns: 4,
          stream: false,
          inputs: { goal: 'fuzz goal' },
        }).run();
        ran++;
        if (result.error && CODE_BUGS.test(result.error.name))
          problems.push(`${v.what}: run failed with ${result.error.name}: ${result.error.message}`);
      } catch (err) {
        if (CODE_BUGS.test((err as Error).name)) problems.push(`${v.what}: Run threw ${(err as Error).name}: ${(err as Error).message}`);
      }
    }
    expect(Object.keys(Object.prototype)).toEqual([]);

    // The same through validateCommand (in process) for all, and the real CLI for a sample.
    const files = readdirSync(dir).map((f) => join(dir, f));
    const out = process.stdout.write.bind(process.stdout);
    const errOut = process.stderr.write.bind(process.stderr);
    let stderr = '';
    process.stdout.write = () => true;
    process.stderr.write = (s: string) => {
      stderr += s;
      return true;
    };
    let code = 0;
    try {
      // 50 files at a time, letting the worker answer vitest in between: the whole set takes
      // seconds of synchronous work (see the loop above)
      for (let i = 0; i < files.length; i += 50) {
        await new Promise((r) => setImmediate(r));
        code = Math.max(code, validateCommand(files.slice(i, i + 50), { quiet: true }));
      }
    } finally {
      process.stdout.write = out;
      process.stderr.write = errOut;
    }
    expect(code).toBe(1);
    for (const line of stderr.split('\n').filter(Boolean)) {
      if (!/^\/.*?m\d+\.sop\.json(:\d+:\d+)?: \/\S*/.test(line)) problems.push(`validate printed: ${line.slice(0, 160)}`);
    }
    {
      requireBuiltCli();
      const cli = await spawnCliAsync(['validate', ...cliSample]);
      expect(cli.status).toBe(1);
      for (const line of cli.stderr.split('\n').filter(Boolean)) {
        if (!/^\/.*?m\d+\.sop\.json(:\d+:\d+)?: \/\S*/.test(line)) problems.push(`sop validate printed: ${line.slice(0, 160)}`);
      }
      expect(cli.stdout).toMatch(new RegExp(`of ${cliSample.length} files valid`));
    }
    process.stdout.write(
      `fuzz: ${MUTANTS} mutated SOPs from ${sources.length} shipped ones: ${rejected} rejected with clear errors, ${valid.length} valid (${warned} with warnings, ${ran} run with the mock LLM); ${problems.length} problems (seed ${SEED})\n`,
    );
    if (slow.length) process.stdout.write(`slow mutants:\n${slow.join('\n')}\n`);
    expect(problems).toEqual([]);
  }, 300_000); // 2,000 loads and 60 runs, CPU-bound: minutes on a busy two-core machine
});

describe('hostile SOP shapes', () => {
  const write = (doc: unknown) => {
    const file = join(mkdtempSync(join(tmpdir(), 'sop-hostile-')), 'x.sop.json');
    writeFileSync(file, JSON.stringify(doc));
    return file;
  };
  const base = (states: Record<string, unknown>, roles: Record<string, string>) => ({
    name: 'x',
    root: 'a',
    agents: { A: { roles } },
    states,
  });

  it('warns about a cycle without exit', () => {
    const file = write(
      base(
        {
          a: { roles: ['r'], next_states: { '1': 'b', '2': 'end' } },
          b: { roles: ['r'], next_states: { '0': 'c' } },
          c: { roles: ['r'], next_states: { '0': 'b' } },
          end: { final: true },
        },
        { a: 'r', b: 'r', c: 'r' },
      ),
    );
    const { warnings } = loadSopFile(file);
    expect(warnings.map((w) => w.pointer).sort()).toEqual(['/states/b/next_states', '/states/c/next_states']);
    expect(warnings[0]!.message).toMatch(/cycle without exit.*--max-turns/);
  });

  it('reports the first 50 problems of a huge broken SOP and counts the rest', () => {
    const states: Record<string, unknown> = { end: { final: true } };
    for (let i = 0; i < 3000; i++) states[`s${i}`] = { roles: ['nobody'], next_states: { '0': 'end' } };
    const err = (() => {
      try {
        loadSopFile(write(base(states, {})));
      } catch (e) {
        return e;
      }
    })() as SopError;
    expect(err).toBeInstanceOf(SopError);
    expect(err.diagnostics).toHaveLength(51);
    expect(err.diagnostics[50]!.message).toMatch(/and 29\d\d more problems \(only the first 50 are shown\)/);
    expect(err.diagnostics[0]!.position).toBeDefined();
  });
});

describe('templates cannot reach into code', () => {
  it('renders no prototype properties or methods', () => {
    const render = compileTemplate(
      '[{{constructor}}][{{__proto__}}][{{constructor.constructor}}][{{#with constructor}}{{name}}{{/with}}][{{lookup this "constructor"}}][{{a.__proto__.polluted}}]',
      'test',
    );
    expect(render({ a: {} })).toBe('[][][][][][]');
  });
  it('does not run code written in a template (the known Handlebars escape)', () => {
    const exploit = `{{#with "s" as |string|}}{{#with "e"}}{{#with split as |conslist|}}{{this.pop}}{{this.push (lookup string.sub "constructor")}}{{this.pop}}{{#with string.split as |codelist|}}{{this.pop}}{{this.push "globalThis.__pwned = 1;"}}{{this.pop}}{{#each conslist}}{{#with (string.sub.apply 0 codelist)}}{{this}}{{/with}}{{/each}}{{/with}}{{/with}}{{/with}}{{/with}}`;
    try {
      compileTemplate(exploit, 'test')({});
    } catch {
      // refusing is fine too
    }
    expect((globalThis as { __pwned?: unknown }).__pwned).toBeUndefined();
    expect(Object.keys(Object.prototype)).toEqual([]);
  });
});
