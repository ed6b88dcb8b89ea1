// The option table (src/api/option-table.ts) is the one place an option is declared: the docs'
// table is made from it, the flags of run, resume and fork give the API's options in the API's
// units, and every option a resume keeps comes back from the launch settings it records.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import yargs from 'yargs';
import { describe, expect, it } from 'vitest';
import { OPTIONS } from '../src/api/option-table.js';
import { optionEntries } from '../src/api/option-types.js';
import { apiOf, keptOnResume, launchOf, namedOf } from '../src/api/launch.js';
import { tableArgs, tableFlags } from '../src/apps/cli/option-flags.js';
import { optionTableMarkdown, withOptionTable } from '../src/apps/cli/option-docs.js';
import { REDACTED } from '../src/shared/util/redact.js';

describe('the option table', () => {
  it("docs/api.md's table of options is the one made from the table (npm run docs:options)", () => {
    const doc = readFileSync('docs/api.md', 'utf8');
    expect(withOptionTable(doc)).toBe(doc);
    for (const [, spec] of optionEntries())
      if (spec.api !== false)
        expect(optionTableMarkdown()).toContain(`| \`${typeof spec.api === 'string' ? spec.api : spec.api.join('.')}\` |`);
  });

  it('the flags of sop run give the options in the API units: seconds on --timeout and --batch-poll, milliseconds in the API', async () => {
    const a = await yargs([])
      .options(tableFlags('run'))
      .parse([
        '--timeout',
        '2.5',
        '--batch-poll',
        '3',
        '--budget-tokens',
        '900',
        '--bind',
        's=srv/t',
        '--no-sandbox',
        '--llm-mode',
        'batch',
      ]);
    const o = tableArgs('run', a);
    expect(o).toMatchObject({ timeoutMs: 2500, batchPollMs: 3000, budgetTokens: 900, bind: ['s=srv/t'], sandbox: false, llmMode: 'batch' });
    expect(apiOf(o)).toMatchObject({ timeoutMs: 2500, batchPollMs: 3000, budget: { tokens: 900 }, bind: { s: 'srv/t' }, sandbox: false });
  });

  it('resume and fork take the flags the table gives them, and only those', () => {
    for (const command of ['resume', 'fork'] as const) {
      const flags = Object.keys(tableFlags(command));
      const expected = optionEntries()
        .filter(([, s]) => s.on?.[command] !== undefined)
        .map(([, s]) => s.flag);
      expect(flags).toEqual(expected);
    }
    // launched with --yes: kept; given again, it also approves the plugin modules the run's SOP names (the journal's word approves no code)
    expect(Object.keys(tableFlags('resume'))).toContain('yes');
    expect(Object.keys(tableFlags('fork'))).toContain('out');
  });

  it('every option a resume keeps comes back from the launch settings it records', () => {
    const given: Record<string, unknown> = {};
    for (const [name, spec] of optionEntries()) {
      if (!spec.resume) continue;
      given[name] = spec.choices
        ? spec.choices.at(-1)
        : spec.type === 'number'
          ? 7
          : spec.type === 'boolean'
            ? true
            : spec.type === 'array'
              ? [name === 'bind' ? 'slot=srv/tool' : `${name}-a`, `${name}-b`]
              : `${name}-value`;
    }
    const launch = launchOf(given);
    const kept = keptOnResume({}, launch);
    for (const [name, spec] of optionEntries()) {
      if (!spec.resume) continue;
      const want = spec.resume.absolute === 'path' ? resolve(given[name] as string) : given[name];
      expect([name, kept[name]]).toEqual([name, want]);
    }
    // a value given now wins, lists add up, and a value the journal redacted is left out
    const now = keptOnResume({ timeoutMs: 1, allowMcp: ['new'] }, { ...launch, allow_base_url: `https://a.example ${REDACTED}` });
    expect(now.timeoutMs).toBe(1);
    expect(now.allowMcp).toEqual(['allowMcp-a', 'allowMcp-b', 'new']);
    expect(now.allowBaseUrl).toEqual(['https://a.example']);
  });

  it("the API's options and the table's names are one another's (budget.tokens is budgetTokens)", () => {
    const api = { timeoutMs: 5, budget: { tokens: 3, usd: 1.5 }, bind: { s: 'srv/t' }, autoRun: true };
    expect(namedOf(api)).toEqual({ timeoutMs: 5, budgetTokens: 3, budgetUsd: 1.5, bind: ['s=srv/t'], autoRun: true });
    expect(apiOf(namedOf(api))).toEqual(api);
    expect(Object.keys(OPTIONS)).toContain('timeoutMs');
  });
});
