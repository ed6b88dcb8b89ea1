// How a calibration's `path` parameter reaches a run (src/format/sop/set-pointer.ts): a value set
// at a JSON pointer on a copy of the SOP, checked again; never an object, a list or /plugins;
// `sop validate` names a path that cannot be set; a sweep point's `set` changes its key and its
// run (the threshold cascade with its activation probability set), and the queue's job schema
// carries it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadSopFile, validateSopDocument } from '../src/api/loader/checked-load.js';
import { pointerParts, setProblem, withValuesSet } from '../src/format/sop/set-pointer.js';
import { pointKey } from '../src/apps/sweep/grid.js';
import { runPoint } from '../src/apps/sweep/run-point.js';
import validateJob from '../src/apps/sweep/job-validator.generated.js';
import { loadRunRecord } from '../src/features/journal/record.js';
import { metricSeries } from '../src/features/population/results.js';
import { SopError } from '../src/format/sop/diagnostics.js';

const FILE = resolve('examples/models/threshold-cascade/threshold-cascade.sop.json');
const dir = mkdtempSync(join(tmpdir(), 'sop-calibrate-set-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('values set at JSON pointers', () => {
  it('sets a value on a copy, and refuses objects, lists, /plugins and missing parents', () => {
    const doc = { a: { b: 1, list: [1, 2] }, 'x/y': { '~z': true }, plugins: ['./m.mjs'] };
    const copy = withValuesSet(doc, { '/a/b': 2, '/a/c': 'new', '/a/list/1': 5, '/x~1y/~0z': false });
    expect(copy).toEqual({ a: { b: 2, c: 'new', list: [1, 5] }, 'x/y': { '~z': false }, plugins: ['./m.mjs'] });
    expect(doc.a.b).toBe(1); // the original is untouched
    expect(pointerParts('/x~1y/~0z')).toEqual(['x/y', '~z']);
    expect(setProblem(doc, '/a')).toMatch(/holds an object/);
    expect(setProblem(doc, '/a/list')).toMatch(/holds a list/);
    expect(setProblem(doc, '/plugins/0')).toMatch(/under \/plugins/);
    expect(setProblem(doc, '/nope/x')).toMatch(/\/nope is not in the SOP/);
    expect(setProblem(doc, '/a/list/7')).toMatch(/no item 7/);
    expect(setProblem(doc, '/a/__proto__')).toMatch(/cannot be a part/);
    expect(setProblem(doc, 'a/b')).toMatch(/not a JSON pointer/);
    expect(() => withValuesSet(doc, { '/a/b': { x: 1 } as unknown as number })).toThrow(/only a number, a string or true\/false/);
  });

  it('is checked by sop validate, and the SOP so changed is checked again', () => {
    const { sop } = loadSopFile(FILE);
    const bad = {
      ...sop,
      targets: { t: { source: 's', metric: 'adopters', value: 10, tolerance: 1 } },
      calibrate: { parameters: { q: { path: '/states/cascade/activation', prior: { uniform: [0, 1] } } }, targets: ['t'] },
    };
    let err: unknown;
    try {
      validateSopDocument(bad, FILE);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(SopError);
    expect((err as SopError).message).toMatch(
      /calibrate\/parameters\/q\/path.*cannot set a value at \/states\/cascade\/activation: .*holds an object/,
    );
    // a value the schema refuses (a probability above 1) is refused when the copy is checked
    expect(() => validateSopDocument(withValuesSet(sop, { '/states/cascade/activation/probability': 3 }), FILE)).toThrow(
      /\/states\/cascade\/activation/,
    );
  });

  it("gives a sweep point with a set its own key, and its run the value (the cascade's activation probability)", async () => {
    const base = { seed: 4, inputs: { theta: '0.3' }, repeat: 1 };
    expect(pointKey(base)).toBe(pointKey({ ...base })); // points without a set keep their keys
    const set = { '/states/cascade/activation/probability': 0.25 };
    expect(pointKey({ ...base, set })).not.toBe(pointKey(base));
    const { sop } = loadSopFile(FILE);
    const adopters = async (key: string, p?: typeof set) => {
      const line = await runPoint(
        { key, ...base, ...(p ? { set: p } : {}) },
        { sop, file: FILE, runsDir: dir, llm: 'mock', resultsDb: false },
      );
      expect(line.status).toBe('finished');
      const s = metricSeries(loadRunRecord(line.run_dir!).effective).find((m) => m.name === 'adopters')!;
      return { line, values: [...s.visits.values()][0]!.map((x) => x.value) };
    };
    const full = await adopters('full');
    const slow = await adopters('slow', set);
    expect(slow.line.set).toEqual(set);
    // everyone acts each step in the SOP as written; a quarter of them with the value set: a slower cascade
    expect(slow.values[0]!).toBeLessThan(full.values[0]!);
    expect(loadRunRecord(slow.line.run_dir!).started.document).toMatchObject({
      states: { cascade: { activation: { probability: 0.25 } } },
    });
  });

  it('travels in a queued job as point.set (values only, pointers only)', () => {
    const job = (set: unknown) => ({
      v: 1,
      sweep: '0123456789ab',
      file: '/x/a.sop.json',
      runsDir: '/x/runs',
      point: { key: 'r1-p2-abcd', seed: 1, inputs: {}, repeat: 1, set },
      sig: 'a'.repeat(64),
    });
    expect(validateJob(job({ '/states/s/activation/probability': 0.2, '/x': 'v', '/y': true }))).toBe(true);
    expect(validateJob(job({ '/x': { nested: 1 } }))).toBe(false);
    expect(validateJob(job({ x: 1 }))).toBe(false);
  });
});
