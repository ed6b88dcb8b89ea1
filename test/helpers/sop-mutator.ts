// Mutations of SOP documents for the fuzz test: deleted keys, wrong types, random strings, deep
// nesting, prototype keys, unknown keys, broken text, cycles without exit, huge documents.
import type { Rng } from '../../src/core/runtime/rng.js';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = Array<string | number>;
interface SopState {
  final?: boolean;
  components?: Record<string, Json>;
  commands?: Record<string, Json>;
  next_states?: Record<string, string>;
  controller?: { judge?: Record<string, Json> };
}
interface SopDoc {
  states?: Record<string, SopState>;
  inputs?: Record<string, Json>;
  memory?: Record<string, Json>;
  templates?: Record<string, Json>;
}

/** Every path to a value in the document (the root excluded). */
function paths(doc: Json, at: Path = [], out: Path[] = []): Path[] {
  if (doc !== null && typeof doc === 'object') {
    for (const [k, v] of Object.entries(doc)) {
      const p = [...at, Array.isArray(doc) ? Number(k) : k];
      out.push(p);
      paths(v, p, out);
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

export class Mutator {
  constructor(private readonly rng: Rng) {}
  int(n: number): number {
    return Math.floor(this.rng.next() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  randomString(): string {
    const pool = [
      '',
      ' ',
      'x',
      '{{',
      '}}',
      '{{#each}}',
      '{{constructor.constructor}}',
      '\u0000',
      '\ud800',
      'é',
      '🥐',
      '../..',
      '/',
      '~1',
      '"',
      '\\',
      'null',
      '0',
      '-1',
      'states',
      'root',
    ];
    let s = '';
    const n = this.int(6);
    for (let i = 0; i < n; i++) s += this.rng.next() < 0.5 ? this.pick(pool) : String.fromCharCode(32 + this.int(95));
    return s;
  }
  wrongValue(old: Json): Json {
    const options: Json[] = [null, true, 0, -1, 1.5, 1e308, '', this.randomString(), [], [1, 'a'], {}, { a: 1 }];
    let v: Json;
    do v = this.pick(options);
    while (typeof v === typeof old && Array.isArray(v) === Array.isArray(old) && v !== null && old !== null);
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
      return {
        text: text.slice(0, at) + this.pick(['{', '}', ',', '"', ':', '\u0000', '[', 'garbage']) + text.slice(at),
        what: `junk at ${at}`,
      };
    }
    const doc = JSON.parse(text) as Json;
    const all = paths(doc);
    const objects = [[], ...all].filter((p) => {
      const v = p.length === 0 ? doc : parentOf(doc, [...p, 'x']);
      return v !== null && typeof v === 'object' && !Array.isArray(v);
    });
    const p = this.pick(all);
    const parent = parentOf(doc, p) as Record<string, Json> & Json[];
    const key = p[p.length - 1]!;
    switch (kind) {
      case 2:
      case 3:
        if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete parent[key as string];
        return { text: JSON.stringify(doc), what: `deleted /${p.join('/')}` };
      case 4:
      case 5:
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
        const obj = (target.length === 0 ? doc : parentOf(doc, [...target, 'x'])) as Record<string, Json>;
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
        const obj = (target.length === 0 ? doc : parentOf(doc, [...target, 'x'])) as Record<string, Json>;
        define(obj, this.randomString() || 'unknown_key', this.wrongValue(null));
        return { text: JSON.stringify(doc), what: `unknown key at /${target.join('/')}` };
      }
      case 10: {
        // Cycles without exit: every state's transitions point at another non-final state.
        const d = doc as { states?: Record<string, { final?: boolean; next_states?: Record<string, string> }> };
        // (an earlier mutation may have left a state that is not an object: leave it as it is)
        const isState = (v: unknown): v is { final?: boolean } => typeof v === 'object' && v !== null && !Array.isArray(v);
        const names = Object.keys(d.states ?? {}).filter((n) => isState(d.states![n]) && !d.states![n].final);
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
        if (first)
          for (let i = 0; i < copies; i++)
            states[`copy_${i}`] = this.rng.next() < 0.5 ? states[first]! : { roles: ['r'], next_states: { '0': `copy_${i + 1}` } };
        return { text: JSON.stringify(doc), what: `${copies} copies of a state` };
      }
    }
  }

  /**
   * One mutation aimed at what `sop run` checks when it starts rather than what the schema
   * checks: templates (syntax, helpers, partials, undeclared inputs and memory files), sub-flow
   * files, memory file names, command arguments. Some mutations are valid on purpose (a
   * declared input, a well-formed partial), so that validate accepts a share of the mutants.
   */
  mutateStatic(text: string): { text: string; what: string } {
    const doc = JSON.parse(text) as SopDoc;
    const states = Object.entries(doc.states ?? {}).filter(([, s]) => !s.final);
    const inputs = Object.keys(doc.inputs ?? {});
    const texts: Array<{ obj: Record<string, Json>; key: string; at: string }> = [];
    for (const [name, s] of states) {
      texts.push({ obj: s as Record<string, Json>, key: 'environment_prompt', at: `/states/${name}/environment_prompt` });
      for (const [role, c] of Object.entries(s.components ?? {})) {
        for (const key of ['task', 'rule', 'last'])
          texts.push({ obj: c as Record<string, Json>, key, at: `/states/${name}/components/${role}/${key}` });
      }
    }
    const commands: Array<{ def: Record<string, Json>; at: string }> = [];
    for (const [name, s] of states)
      for (const [c, def] of Object.entries(s.commands ?? {}))
        commands.push({ def: def as Record<string, Json>, at: `/states/${name}/commands/${c}` });
    const addText = (snippet: string, what: string) => {
      const t = this.pick(texts);
      if (!t) return { text: JSON.stringify(doc), what: 'no text to change' };
      const old = t.obj[t.key];
      t.obj[t.key] = `${typeof old === 'string' ? old : ''} ${snippet}`;
      return { text: JSON.stringify(doc), what: `${what} at ${t.at}` };
    };
    const bomb = (levels: number, fan: number) => {
      let src = '{{#*inline "p0"}}xxxxxxxxxx{{/inline}}';
      for (let i = 1; i <= levels; i++) src += `{{#*inline "p${i}"}}${`{{> p${i - 1}}}`.repeat(fan)}{{/inline}}`;
      return `${src}{{> p${levels}}}`;
    };
    switch (this.int(16)) {
      case 0:
        return addText('{{#if inputs.x}}never closed', 'unclosed {{#if}}');
      case 1:
        return addText(`{{inputs.${inputs[0] ?? 'topic'}_typo}}`, 'undeclared input');
      case 2:
        return addText('{{goal}}', inputs.includes('goal') ? 'declared {{goal}}' : 'undeclared {{goal}}');
      case 3:
        return addText('{{log "hello"}}', 'log helper');
      case 4:
        return addText(bomb(this.pick([6, 12, 20]), this.pick([2, 10])), 'exponential partials');
      case 5:
        return addText('{{#*inline "r"}}{{> r}}{{/inline}}{{> r}}', 'recursive partial');
      case 6:
        return addText('{{shout inputs.x}}', 'unknown helper');
      case 7:
        return addText(`{{memory.${this.pick(['plan', 'nope', 'logs'])}}}`, 'memory file');
      case 8:
        return addText(inputs.length ? `{{inputs.${this.pick(inputs)}}}` : '{{sop.name}}', 'declared variable');
      case 9:
        return addText('{{#*inline "a"}}[{{this}}]{{/inline}}{{#each (lookup sop "name")}}{{> a}}{{/each}}{{> nope}}', 'undefined partial');
      case 10: {
        (doc.memory ??= {})[this.pick(['m'.repeat(300), 'n'.repeat(201), 'ok_name', 'x'.repeat(200)])] = '';
        return { text: JSON.stringify(doc), what: 'memory file name' };
      }
      case 11: {
        const c = this.pick(commands);
        if (!c) return addText('{{#each}}{{/each}}', 'each without a list');
        c.def.args = { ...((c.def.args ?? {}) as Record<string, Json>), [this.pick(['nope', 'code', 'goal'])]: 'described' };
        return { text: JSON.stringify(doc), what: `args key at ${c.at}` };
      }
      case 12: {
        const [name, s] = this.pick(states) ?? [];
        if (!name || !s) return { text, what: 'unchanged' };
        const file = this.pick(['missing.sop.json', 'notes.txt', 'coder.sop.json', '../nowhere/x.sop.json', 'plan_writer.sop.json']);
        (s.commands ??= {}).sub_flow = { executor: 'sop', settings: { file } };
        s.next_states = {
          ...(s.next_states ?? {}),
          '1': (s.next_states ?? {})['1'] ?? Object.keys(doc.states ?? {}).find((n) => doc.states![n]!.final) ?? name,
        };
        return { text: JSON.stringify(doc), what: `sub-flow ${file} at /states/${name}/commands/sub_flow` };
      }
      case 13: {
        (doc.templates ??= {})[this.pick(['agent_last', 'judge_user', 'code_result', 'commands'])] = this.pick([
          '{{agent.name}} {{#each last_parts}}{{this}}{{/each}}',
          '{{inputs.x}}',
          '{{#each commands}}{{name}}{{/each}}',
          '{{stdout}}',
          '{{#if}}{{/if}}',
        ]);
        return { text: JSON.stringify(doc), what: 'inline template' };
      }
      case 14: {
        const [name, s] = this.pick(states) ?? [];
        if (!name || !s) return { text, what: 'unchanged' };
        ((s.controller ??= {}).judge ??= {}).system_prompt = this.pick([
          'Judge {{sop.name}}.',
          'Judge {{inputs.nope}}.',
          'Judge {{#unless x}}.',
        ]);
        return { text: JSON.stringify(doc), what: `judge prompt at /states/${name}/controller/judge` };
      }
      default:
        return { text, what: 'unchanged' };
    }
  }
}
