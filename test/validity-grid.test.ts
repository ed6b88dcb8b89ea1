// Experiment arms in a sweep's grid (docs/validity.md#experiments): every seed in each arm, the
// arm's inputs over the rest, keys that carry the arm, the same seed in each arm on common random
// numbers and a seed hashed with the arm's name on independent ones; values set at JSON pointers;
// data file paths that name inputs, rendered with a run's inputs.
import { describe, expect, it } from 'vitest';
import { expandGrid, pointKey } from '../src/apps/sweep/grid.js';
import { independentSeed, setAtPointer } from '../src/apps/sweep/arms.js';
import { namedFiles } from '../src/format/sop/named-files.js';
import { renderPathTemplate } from '../src/format/sop/file-template.js';

describe('arms in the grid', () => {
  const arms = [
    { name: 'control', inputs: { p: '0.05' } },
    { name: 'treated', inputs: { p: '0.055' } },
  ];
  it('runs each seed in every arm, on the same seed, with keys that carry the arm', () => {
    const points = expandGrid({ seeds: [1, 2], rows: undefined, models: [undefined], repeat: 1, fixed: { p: '0.5', q: 'x' }, arms });
    expect(points.map((p) => [p.seed, p.arm, p.inputs.p, p.inputs.q, p.runSeed])).toEqual([
      [1, 'control', '0.05', 'x', undefined],
      [1, 'treated', '0.055', 'x', undefined],
      [2, 'control', '0.05', 'x', undefined],
      [2, 'treated', '0.055', 'x', undefined],
    ]);
    expect(points[1]!.key).toMatch(/^s1-atreated-[0-9a-f]{8}$/);
    // a grid without arms keeps its keys
    const [plain] = expandGrid({ seeds: [1], rows: undefined, models: [undefined], repeat: 1, fixed: {} });
    expect(plain!.key).toBe(pointKey({ seed: 1, inputs: {}, repeat: 1 }));
    expect(plain!.key).not.toContain('-a');
  });
  it('on independent seeds, hashes the seed with the arm and changes the key', () => {
    const crn = expandGrid({ seeds: [3], rows: undefined, models: [undefined], repeat: 1, fixed: {}, arms });
    const ind = expandGrid({ seeds: [3], rows: undefined, models: [undefined], repeat: 1, fixed: {}, arms, armSeed: independentSeed });
    expect(ind.map((p) => p.runSeed)).toEqual([independentSeed(3, 'control'), independentSeed(3, 'treated')]);
    expect(independentSeed(3, 'control')).not.toBe(independentSeed(3, 'treated'));
    expect(ind[0]!.key).not.toBe(crn[0]!.key);
  });
  it('sets a value at a JSON pointer in a copy, making objects on the way', () => {
    const doc = { states: { s: { world: { params: { punishment: false } } } } };
    const set = setAtPointer(doc, '/states/s/world/params/punishment', true) as typeof doc;
    expect(set.states.s.world.params.punishment).toBe(true);
    expect(doc.states.s.world.params.punishment).toBe(false);
    expect(
      (setAtPointer(doc, '/states/s/activation/probability', 0.3) as { states: { s: { activation: unknown } } }).states.s.activation,
    ).toEqual({
      probability: 0.3,
    });
    expect(() => setAtPointer(doc, '/states/__proto__/x', 1)).toThrow(/reserved/);
  });
});

describe('data files that name inputs', () => {
  it('renders {{inputs.X}} with the run inputs, else the defaults, and refuses other templates', () => {
    expect(renderPathTemplate('data/{{ inputs.file }}.csv', { file: 'a' })).toEqual({ path: 'data/a.csv' });
    expect(renderPathTemplate('{{inputs.file}}', {})).toEqual({
      problem: expect.stringContaining('names input "file", which has no value here'),
    });
    expect(renderPathTemplate('{{goal}}.csv', {})).toEqual({ problem: expect.stringContaining('only {{inputs.NAME}}') });
    const doc = {
      inputs: { file: { default: 'd.csv' } },
      states: { s: { population: { source: { file: '{{inputs.file}}' } }, world: { graph: { file: 'g-{{inputs.file}}' } } } },
    };
    expect(namedFiles(doc, '/base').map((f) => [f.resolved, f.templated])).toEqual([
      ['/base/d.csv', true],
      ['/base/g-d.csv', true],
    ]);
    expect(namedFiles(doc, '/base', { file: 'x.csv' })[0]!.resolved).toBe('/base/x.csv');
  });
});
