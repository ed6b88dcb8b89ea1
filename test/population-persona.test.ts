// Persona templates (rendering, the columns they name, archetype keys) and the population spec's
// checks: a template naming a missing column, a missing data file, a missing id column, each one
// line at its JSON pointer; loading a population from a file or a generator.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatDiagnostic } from '../src/format/sop/diagnostics.js';
import { compilePersona, personaNames } from '../src/features/population/persona.js';
import { loadPopulation, validatePopulationSpec } from '../src/features/population/population.js';
import type { PopulationSpec } from '../src/features/population/types.js';

const FIX = join(process.cwd(), 'test/fixtures/population');
const POINTER = '/states/feed/population';
const dir = mkdtempSync(join(tmpdir(), 'pop-persona-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const lines = (spec: unknown) => validatePopulationSpec(spec, FIX, POINTER).map((d) => formatDiagnostic({ ...d, file: 'feed.sop.json' }));

describe('persona templates', () => {
  it('names the columns it reads, through blocks and @root, not helpers or loop locals', () => {
    const t = '{{#if member}}{{name}} is a member{{/if}} {{#each tags as |t|}}{{t}}{{../age}}{{/each}} {{@root.party}} {{join tags ", "}}';
    expect(personaNames(t)).toEqual({ names: ['age', 'member', 'name', 'party', 'tags'], problems: [] });
    expect(personaNames('{{#if x}}open').problems[0]).toMatch(/^\{\{#if\}\} is not closed/);
  });

  it('renders per row, plain text, and groups rows by archetype', () => {
    const p = compilePersona('You are {{name}}, {{age}}, <{{party}}>.', 'persona');
    expect(p.render({ id: 'a', name: 'Ana & Co', age: 34, party: 'left' })).toBe('You are Ana & Co, 34, <left>.');
    expect(p.names).toEqual(['age', 'name', 'party']);
    const a = { id: '1', name: 'Ana', age: 34, party: 'left', followers: 3 };
    const b = { id: '2', name: 'Ana', age: 34, party: 'left', followers: 900 };
    expect(p.archetypeKey(a)).toBe(p.archetypeKey(b));
    expect(p.archetypeKey(a)).toBe('[34,"Ana","left"]');
    expect(p.archetypeKey({ ...a, age: '34' })).not.toBe(p.archetypeKey(a));
    expect(() => compilePersona('{{agee}}', '/p/persona', ['id', 'age'])).toThrow(
      '/p/persona: names column "agee", which the source does not have (columns: id, age)',
    );
  });
});

describe('population spec checks', () => {
  it('accepts a good spec, from a file and from a generator', () => {
    expect(lines({ source: { file: 'people.csv' }, persona: '{{name}}, {{age}}', sample: { n: 2, seed: 1 } })).toEqual([]);
    expect(
      lines({
        source: { generate: { n: 10, seed: 1, columns: { age: { uniform: { min: 1, max: 9, round: true } } } } },
        persona: '{{id}} {{age}}',
        sample: { stratify: { by: ['age'], shares: { '1': 0.5, '2': 0.5 }, n: 4, seed: 2 } },
      }),
    ).toEqual([]);
  });

  it('refuses a persona template naming a missing column, with one line at its pointer', () => {
    expect(lines({ source: { file: 'people.csv' }, persona: 'You are {{name}}, {{agee}}.' })).toEqual([
      'feed.sop.json: /states/feed/population/persona: names column "agee", which the source does not have (columns: id, name, age, party, zip, member)',
    ]);
    expect(lines({ source: { file: 'people.jsonl' }, persona: '{{#each}}' })[0]).toMatch(
      /^feed\.sop\.json: \/states\/feed\/population\/persona: /,
    );
  });

  it('refuses a missing data file and a missing id column', () => {
    expect(lines({ source: { file: 'missing.csv' } })).toEqual([
      'feed.sop.json: /states/feed/population/source/file: missing.csv: file not found',
    ]);
    expect(lines({ source: { file: 'people.csv' }, id: 'pid' })).toEqual([
      'feed.sop.json: /states/feed/population/id: people.csv has no id column "pid" (columns: id, name, age, party, zip, member)',
    ]);
  });

  it('refuses bad shapes, marginals and strata', () => {
    expect(lines({ source: { file: 'people.csv' }, sample: { n: 0, seed: 1 } })).toEqual([
      'feed.sop.json: /states/feed/population/sample: must be {"n", "seed"} or {"stratify": {"by", "shares", "n", "seed"}}',
    ]);
    expect(
      lines({ source: { generate: { n: 5, seed: 1, columns: { p: { categorical: { a: 0.5, b: 0.4 } } } } }, sample: { n: 6, seed: 1 } }),
    ).toEqual([
      'feed.sop.json: /states/feed/population/source/generate/columns/p: the shares add up to 0.9, not 1',
      'feed.sop.json: /states/feed/population/sample/n: asks for 6 agents of the 5 rows generated',
    ]);
    expect(
      lines({ source: { file: 'people.csv' }, sample: { stratify: { by: ['party', 'sex'], shares: { left: 1 }, n: 2, seed: 1 } } }),
    ).toEqual([
      'feed.sop.json: /states/feed/population/sample/stratify/shares/left: a stratum key has one value per "by" column, joined by "|" (party|sex); "left" has 1',
      'feed.sop.json: /states/feed/population/sample/stratify/by/1: names column "sex", which the source does not have (columns: id, name, age, party, zip, member)',
    ]);
  });
});

describe('loadPopulation', () => {
  it('keeps the rows by column, ids in source order, with personas and archetypes', async () => {
    const pop = await loadPopulation({ source: { file: 'people.csv' }, persona: '{{age}} {{party}}' }, { baseDir: FIX });
    expect(pop.ids).toEqual(['p1', 'p2', 'p3', 'p4']);
    expect(pop.columns).toEqual(['id', 'name', 'age', 'party', 'zip', 'member']);
    expect(pop.row(1)).toEqual({ id: 'p2', name: 'Ben, Jr', age: 51, party: 'right', zip: 99999, member: false });
    expect(pop.value(3, 'zip')).toBe('00010');
    expect(pop.indexOf('p3')).toBe(2);
    expect(pop.personaText(0)).toBe('34 left');
    expect(pop.archetypes()).toEqual([
      { key: '[34,"left"]', members: [0, 3] },
      { key: '[51,"right"]', members: [1] },
      { key: '[27,"left"]', members: [2] },
    ]);
  });

  it('gives the same population from the JSONL and the CSV of the same data', async () => {
    const spec = (file: string): PopulationSpec => ({
      source: { file },
      persona: '{{name}}',
      sample: { stratify: { by: ['party'], shares: { left: 0.5, right: 0.5 }, n: 2, seed: 9 } },
    });
    const a = await loadPopulation(spec('people.csv'), { baseDir: FIX });
    const b = await loadPopulation(spec('people.jsonl'), { baseDir: FIX });
    expect(b.ids).toEqual(a.ids);
    expect(b.ids.map((_, i) => b.row(i))).toEqual(a.ids.map((_, i) => a.row(i)));
    expect(a.ids).toContain('p2');
  });

  it('refuses with one line: a too-small stratum, a missing column, a duplicate id', async () => {
    const base = { baseDir: FIX, pointer: POINTER };
    await expect(
      loadPopulation(
        { source: { file: 'people.csv' }, sample: { stratify: { by: ['party'], shares: { left: 0.5, right: 0.5 }, n: 4, seed: 1 } } },
        base,
      ),
    ).rejects.toThrow('/states/feed/population/sample: stratum "right" has 1 row, fewer than the 2 its share 0.5 of 4 asks for');
    await expect(loadPopulation({ source: { file: 'people.csv' }, persona: '{{agee}}' }, base)).rejects.toThrow(
      '/states/feed/population/persona: names column "agee", which the source does not have',
    );
    writeFileSync(join(dir, 'dup.jsonl'), '{"id":"x"}\n{"id":"y"}\n{"id":"x"}\n');
    await expect(loadPopulation({ source: { file: 'dup.jsonl' } }, { baseDir: dir })).rejects.toThrow(
      'dup.jsonl:3: duplicate id "x" (first on line 1)',
    );
  });

  it('loads a generated population the same way every time', async () => {
    const spec: PopulationSpec = {
      source: {
        generate: {
          n: 1000,
          seed: 4,
          columns: { party: { categorical: { left: 0.5, right: 0.5 } }, age: { normal: { mean: 40, sd: 10, round: true } } },
        },
      },
      id: 'agent',
      persona: '{{party}}',
      sample: { n: 100, seed: 2 },
    };
    const a = await loadPopulation(spec, { baseDir: dir });
    const b = await loadPopulation(spec, { baseDir: dir });
    expect(a.columns).toEqual(['agent', 'party', 'age']);
    expect(a.ids).toEqual(b.ids);
    expect(a.ids[0]).toMatch(/^a\d+$/);
    expect(
      a
        .archetypes()
        .map((g) => g.key)
        .sort(),
    ).toEqual(['["left"]', '["right"]']);
    expect(a.archetypes().reduce((n, g) => n + g.members.length, 0)).toBe(100);
  });
});
