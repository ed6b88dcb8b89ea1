// Hostile input: 1,000 SOP files mutated from the shipped ones (deleted keys, wrong types, random
// strings, deep nesting, prototype keys, broken text, huge and cyclic documents) go through the
// loader and `sop validate`: no uncaught exception, every failure a clear error with a JSON
// pointer, no prototype polluted. Valid mutants are also run a few turns with the mock LLM.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateCommand } from '../src/cli/validate-command.js';
import { MockProvider } from '../src/llm/mock.js';
import { compileTemplate } from '../src/prompt/templates.js';
import { Rng } from '../src/runtime/rng.js';
import { Run } from '../src/runtime/run.js';
import { SopError, formatDiagnostic } from '../src/sop/diagnostics.js';
import { loadSopFile } from '../src/sop/load.js';
import type { Sop } from '../src/sop/types.js';

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

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = Array<string | number>;

/** Every path to a value in the document (the root excluded). */
function paths(doc: Json, at: Path = [], out: Path[] = []): Path[] {
  if (doc !== null && typeof doc === 'object') {
    for (const [k, v] of Object.entries(doc)) {
      const p = [...at, Array.isArray(doc) ? Number(k) : k];
      out.push(p);
      paths(v as Json, p, out);
    }
  }
  return out;
}

function parentOf(doc: Json, path: Path): Json {
  let v: Json = doc;
  for (const k of path.slice(0, -1)) v = (v as Record<string, Json>)[k as string]!;
  return v;
}

/** Set an own property even for "__proto__" (plain assignment would set the prototype). */
function define(obj: object, key: string | number, value: Json): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

const RESERVED = ['__proto__', 'constructor', 'prototype'];

class Mutator {
  constructor(private readonly rng: Rng) {}
  int(n: number): number { return Math.floor(this.rng.next() * n); }
  pick<T>(xs: readonly T[]): T { return xs[this.int(xs.length)]!; }
  randomString(): string {
    const pool = ['', ' ', 'x', '{{', '}}', '{{#each}}', '{{constructor.constructor}}', '\u0000', '\ud800', 'é', '🥐', '../..', '/', '~1', '"', '\\', 'null', '0', '-1', 'states', 'root'];
    let s = '';
    const n = this.int(6);
    for (let i = 0; i < n; i++) s += this.rng.next() < 0.5 ? this.pick(pool) : String.fromCharCode(32 + this.int(95));
    return s;
  }
  wrongValue(old: Json): Json {
    const options: Json[] = [null, true, 0, -1, 1.5, 1e308, '', this.randomString(), [], [1, 'a'], {}, { a: 1 }];
    let v: Json;
    do v = this.pick(options); while (typeof v === typeof old && Array.isArray(v) === Array.isArray(old) && v !== null && old !== null);
    return v;
  }
  deep(depth: number): Json {
    let v: Json = 'bottom';
    for (let i = 0; i < depth; i++) v = this.rng.next() < 0.5 ? [v] : { k: v };
    return v;
  }

  /** One mutation of the document text; returns the text and what was done. */
  mutate(text: string): { text: string; what: string } {
    const kind = this.int(12);
    if (kind === 0) {
      const cut = this.int(text.length);
      return { text: text.slice(0, cut), what: `truncated at ${cut}` };
    }
    if (kind === 1) {
      const at = this.int(text.length);
      return { text: text.slice(0, at) + this.pick(['{', '}', ',', '"', ':', '\u0000', '[', 'garbage']) + text.slice(at), what: `junk at ${at}` };
    }
    const doc = JSON.parse(text) as Json;
    const all = paths(doc);
    const objects = [[], ...all].filter((p) => { const v = p.length === 0 ? doc : (parentOf(doc, [...p, 'x']) as Json); return v !== null && typeof v === 'object' && !Array.isArray(v); });
    const p = this.pick(all);
    const parent = parentOf(doc, p) as Record<string, Json> & Json[];
    const key = p[p.length - 1]!;
    switch (kind) {
      case 2: case 3:
        if (Array.isArray(parent)) parent.splice(key as number, 1); else delete parent[key as string];
        return { text: JSON.stringify(doc), what: `deleted /${p.join('/')}` };
      case 4: case 5:
        define(parent, key, this.wrongValue(parent[key as never] as Json));
        return { text: JSON.stringify(doc), what: `wrong type at /${p.join('/')}` };
      case 6:
        define(parent, key, this.randomString());
        return { text: JSON.stringify(doc), what: `random string at /${p.join('/')}` };
      case 7: {
        // Built as text: a structure this deep is past what recursive code (JSON.stringify) handles.
        const depth = this.pick([20, 70, 500, 5000, 100_000]);
        define(parent, key, '@@DEEP@@');
        const deep = this.rng.next() < 0.5 ? `${'['.repeat(depth)}1${']'.repeat(depth)}` : `${'{"k":'.repeat(depth)}1${'}'.repeat(depth)}`;
        return { text: JSON.stringify(doc).replace('"@@DEEP@@"', deep), what: `nested ${depth} deep at /${p.join('/')}` };
      }
      case 8: {
        // A prototype key added to an object, or a map key (state, agent, input) renamed to one.
        const target = this.pick(objects);
        const obj = (target.length === 0 ? doc : (parentOf(doc, [...target, 'x']) as Json)) as Record<string, Json>;
        const name = this.pick(RESERVED);
        const keys = Object.keys(obj);
        if (keys.length > 0 && this.rng.next() < 0.5) {
          const old = this.pick(keys);
          const v = obj[old]!;
          delete obj[old];
          define(obj, name, v);
          return { text: JSON.stringify(doc), what: `renamed /${[...target, old].join('/')} to ${name}` };
        }
        define(obj, name, this.pick<Json>([{ polluted: true }, 'x', { roles: { a: 'b' } }, null]));
        return { text: JSON.stringify(doc), what: `added ${name} at /${target.join('/')}` };
      }
      case 9: {
        const target = this.pick(objects);
        const obj = (target.length === 0 ? doc : (parentOf(doc, [...target, 'x']) as Json)) as Record<string, Json>;
        define(obj, this.randomString() || 'unknown_key', this.wrongValue(null));
        return { text: JSON.stringify(doc), what: `unknown key at /${target.join('/')}` };
      }
      case 10: {
        // Cycles without exit: every state's transitions point at another non-final state.
        const d = doc as { states?: Record<string, { final?: boolean; next_states?: Record<string, string> }> };
        const names = Object.keys(d.states ?? {}).filter((n) => !d.states![n]!.final);
        for (const [i, n] of names.entries()) {
          const s = d.states![n]!;
          s.next_states = { '0': n, '1': names[(i + 1) % names.length]! };
        }
        return { text: JSON.stringify(doc), what: 'cycle without exit' };
      }
      default: {
        // Huge: many copies of a state, or a document over the size limit.
        const d = doc as { states?: Record<string, Json>; description?: Json };
        const states = d.states ?? {};
        const first = Object.keys(states)[0];
        const copies = this.pick([200, 1000, 3000, 0]);
        if (copies === 0) {
          d.description = 'x'.repeat(6 * 1024 * 1024);
          return { text: JSON.stringify(doc), what: 'over the size limit' };
        }
        if (first) for (let i = 0; i < copies; i++) states[`copy_${i}`] = this.rng.next() < 0.5 ? states[first]! : { roles: ['r'], next_states: { '0': `copy_${i + 1}` } };
        return { text: JSON.stringify(doc), what: `${copies} copies of a state` };
      }
    }
  }
}

function parses(text: string): boolean {
  try { JSON.parse(text); return true; } catch { return false; }
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
  beforeAll(() => { dir = mkdtempSync(join(tmpdir(), 'sop-fuzz-')); });
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
        if (err.diagnostics.filter((d) => d.severity === 'error').length === 0) problems.push(`${src.file} ${what}: SopError without an error`);
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
        const result = await new Run({ sop: v.sop, file: v.file, llm: new MockProvider(), maxTurns: 4, stream: false }).run();
        ran++;
        if (result.error && CODE_BUGS.test(result.error.name)) problems.push(`${v.what}: run failed with ${result.error.name}: ${result.error.message}`);
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
    process.stdout.write = (() => true) as typeof process.stdout.write;
    process.stderr.write = ((s: string) => { stderr += s; return true; }) as typeof process.stderr.write;
    let code: number;
    try {
      code = validateCommand(files, { quiet: true });
    } finally {
      process.stdout.write = out;
      process.stderr.write = errOut;
    }
    expect(code).toBe(1);
    for (const line of stderr.split('\n').filter(Boolean)) {
      if (!/^\/.*?m\d+\.sop\.json(:\d+:\d+)?: \/\S*/.test(line)) problems.push(`validate printed: ${line.slice(0, 160)}`);
    }
    if (existsSync('dist/src/cli/main.js')) {
      const cli = spawnSync(process.execPath, ['dist/src/cli/main.js', 'validate', ...cliSample], { encoding: 'utf8' });
      expect(cli.status).toBe(1);
      for (const line of cli.stderr.split('\n').filter(Boolean)) {
        if (!/^\/.*?m\d+\.sop\.json(:\d+:\d+)?: \/\S*/.test(line)) problems.push(`sop validate printed: ${line.slice(0, 160)}`);
      }
      expect(cli.stdout).toMatch(new RegExp(`of ${cliSample.length} files valid`));
    }
    process.stdout.write(`fuzz: ${MUTANTS} mutated SOPs from ${sources.length} shipped ones: ${rejected} rejected with clear errors, ${valid.length} valid (${warned} with warnings, ${ran} run with the mock LLM); ${problems.length} problems (seed ${SEED})\n`);
    if (slow.length) process.stdout.write(`slow mutants:\n${slow.join('\n')}\n`);
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('templates cannot reach into code', () => {
  it('renders no prototype properties or methods', () => {
    const render = compileTemplate('[{{constructor}}][{{__proto__}}][{{constructor.constructor}}][{{#with constructor}}{{name}}{{/with}}][{{lookup this "constructor"}}][{{a.__proto__.polluted}}]', 'test');
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
