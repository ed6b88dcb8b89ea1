// The shipped persona file is synthetic and reproducible: scripts/make-personas.mjs (over the
// built generator) writes the same bytes as the committed examples/social-spread/ files, and the
// file loads as a population.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadPopulation, validatePopulationSpec } from '../src/features/population/population.js';
import { execAsync } from './helpers/exec.js';

const EXAMPLE = join(process.cwd(), 'examples/social-spread');
const dir = mkdtempSync(join(tmpdir(), 'pop-personas-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('examples/social-spread/personas.csv', () => {
  it('is what scripts/make-personas.mjs writes, byte for byte, and says it is synthetic', async () => {
    const made = await execAsync(process.execPath, ['scripts/make-personas.mjs', '--out', dir]);
    expect(made.status, made.stderr).toBe(0);
    expect(readFileSync(join(dir, 'personas.csv'), 'utf8')).toBe(readFileSync(join(EXAMPLE, 'personas.csv'), 'utf8'));
    expect(readFileSync(join(dir, 'PERSONAS.md'), 'utf8')).toBe(readFileSync(join(EXAMPLE, 'PERSONAS.md'), 'utf8'));
    expect(readFileSync(join(EXAMPLE, 'PERSONAS.md'), 'utf8')).toMatch(/\*\*synthetic\*\* personas\. No row describes a real person/);
  });

  it('loads as a population of 1,000 with personas, and stratifies by party', async () => {
    const spec = {
      source: { file: 'personas.csv' },
      persona: 'You are {{name}}, {{age}}, {{party}}, into {{interest}}.',
      sample: { stratify: { by: ['party'], shares: { left: 0.4, center: 0.2, right: 0.4 }, n: 100, seed: 1 } },
    };
    expect(validatePopulationSpec(spec, EXAMPLE, '/states/feed/population')).toEqual([]);
    const all = await loadPopulation({ source: { file: 'personas.csv' } }, { baseDir: EXAMPLE });
    expect(all.size).toBe(1000);
    expect(all.columns).toEqual(['id', 'name', 'age', 'party', 'interest', 'followers']);
    const pop = await loadPopulation(spec, { baseDir: EXAMPLE });
    const parties = pop.ids.map((_, i) => pop.value(i, 'party'));
    expect(parties.filter((p) => p === 'center')).toHaveLength(20);
    expect(parties.filter((p) => p === 'left')).toHaveLength(40);
    expect(pop.personaText(0)).toMatch(/^You are \w+, \d+, (left|center|right), into \w+\.$/);
  });
});
