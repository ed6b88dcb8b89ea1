// The check of a template loads only Handlebars' parser and compiler, and runs the Compiler on the
// AST it already read, where it used to call Handlebars.precompile (parse again, compile, generate
// JavaScript). Its verdict must be the one precompile gives: a template that passes the check
// compiles, and one that Handlebars cannot compile is refused, with Handlebars' own message.
import fc from 'fast-check';
import Handlebars from 'handlebars';
import { describe, expect, it } from 'vitest';
import { checkTemplate } from '../src/format/sop/template-check.js';
import { CHECKED_HELPERS } from '../src/format/sop/template-helpers.js';
import { templateHelpers } from '../src/core/prompt/templates.js';

/** Handlebars.precompile's verdict, as the check reports it: '' when it compiles, else its message on one line. */
function precompileVerdict(source: string): string {
  try {
    Handlebars.precompile(source, { noEscape: true, knownHelpers: { log: false } });
    return '';
  } catch (err) {
    return (err as Error).message
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !/^-*\^$/.test(l))
      .join(' ');
  }
}

/** Pieces of templates: paths, blocks (opened and closed in any order), partials, literals, raw blocks. */
const PIECES = [
  '{{a}}', '{{this}}', '{{this/a}}', '{{a/this}}', '{{../a}}', '{{@root.a}}', '{{a.[b c]}}', '{{{a}}}', '{{!c}}', '{{~a~}}',
  '{{#if a}}', '{{else}}', '{{else if b}}', '{{^}}', '{{/if}}', '{{#each a as |x i|}}', '{{x}}', '{{/each}}', '{{#with a}}', '{{/with}}',
  '{{> p}}', '{{> p a}}', '{{> p a b}}', '{{> p x=1}}', '{{#> p}}', '{{/p}}', '{{#*inline "p"}}', '{{/inline}}', '{{> @partial-block}}',
  '{{lookup a "b"}}', '{{"str"}}', '{{1}}', '{{true}}', '{{{{raw}}}}', '{{{{/raw}}}}', '{{a as |b|}}', '{{this.[a]}}', ' ', 'text', '\n',
]; // prettier-ignore

describe('template check: the compiler verdict', () => {
  it('allows exactly the helpers the engine registers for rendering', () => {
    expect(CHECKED_HELPERS).toEqual(templateHelpers());
    expect(checkTemplate('{{#each a}}{{inc @index}}{{/each}}')).toEqual([]);
    expect(checkTemplate('{{log a}}')).not.toEqual([]);
  });

  it('refuses what Handlebars cannot compile, with its message', () => {
    const source = '{{#*inline "p"}}x{{/inline}}{{> p a b}}';
    const verdict = precompileVerdict(source);
    expect(verdict).toMatch(/^Unsupported number of partial arguments: 2/);
    expect(checkTemplate(source)).toEqual([{ message: verdict }]);
    expect(checkTemplate('{{#*inline "p"}}x{{/inline}}{{> p a}}')).toEqual([]);
  });

  it('agrees with Handlebars.precompile on generated templates', () => {
    const counts = { templates: 0, compiled: 0, refusedByCompiler: 0 };
    fc.assert(
      fc.property(fc.boolean(), fc.array(fc.constantFrom(...PIECES), { minLength: 1, maxLength: 8 }), (inline, pieces) => {
        // half of them define the partial p, so calls of it get past the check to the compiler
        const source = (inline ? '{{#*inline "p"}}x{{/inline}}' : '') + pieces.join('');
        const problems = checkTemplate(source);
        const verdict = precompileVerdict(source);
        counts.templates++;
        // passes the check => precompile compiles it; precompile refuses it => the check does too
        if (problems.length === 0) expect(verdict).toBe('');
        if (verdict !== '') expect(problems.length).toBeGreaterThan(0);
        let parses = true;
        try {
          Handlebars.parse(source);
        } catch {
          parses = false;
        }
        // read fine, refused by the compiler: the check says so in Handlebars' words
        if (parses && verdict !== '' && problems.some((p) => p.message === verdict)) counts.refusedByCompiler++;
        if (verdict === '') counts.compiled++;
      }),
      { numRuns: 3000, seed: 42 },
    );
    expect(counts.refusedByCompiler).toBeGreaterThan(0);
    expect(counts.compiled).toBeGreaterThan(0);
  });
});
