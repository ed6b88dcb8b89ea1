// sop sweep in one process: the acceptance case (12 debates, 4 at once), the grid (seeds, input
// rows from .jsonl and .csv, models, repeats) with stable keys, and re-running a sweep: finished
// runs are skipped, a run killed half-way continues from its journal, nothing is counted twice;
// --budget-tokens for each run (kept by a continued run) and --answers for a human role.
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expandGrid, parseCsv, parseSeeds, pointKey } from '../src/apps/sweep/grid.js';
import type { ResultLine } from '../src/apps/sweep/results.js';
import { spawnCliAsync } from './helpers/cli.js';

const DEBATE = join(process.cwd(), 'examples/debate/debate.sop.json');
const ASSISTANT = join(process.cwd(), 'examples/assistant/assistant.sop.json');

async function sop(args: string[]) {
  const r = await spawnCliAsync([...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const lines = (out: string): ResultLine[] =>
  readFileSync(join(out, 'results.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ResultLine);

describe('sop sweep (in process)', () => {
  it('acceptance: 12 seeds of the debate, 4 at once, give 12 finished lines with the verdict output', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
    const r = await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-12', '--concurrency', '4', '--out', out]);
    expect(r.stderr).toContain('12 of 12 runs done, 0 failed');
    expect(r.code).toBe(0);
    const rs = lines(out);
    expect(rs).toHaveLength(12);
    expect(rs.map((x) => x.seed)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    for (const x of rs) {
      expect(x.status).toBe('finished');
      expect(x.final_state).toBe('end');
      expect(x.turns).toBeGreaterThan(5);
      expect(x.outputs.verdict).toMatch(/Judge Ruth \(Judge\) speaks in verdict/);
      expect(x.usage.calls).toBeGreaterThan(0);
      expect(existsSync(join(x.run_dir!, 'journal.jsonl'))).toBe(true);
      expect(x.worker).toMatch(/:\d+(\/\d+)?$/); // host:pid, /thread in a worker thread
      expect(x.duration_ms).toBeGreaterThanOrEqual(0);
    }
    // 12 runs, 4 at once: more than two waves, so one worker thread per core shares them
    if (availableParallelism() > 1) expect(new Set(rs.map((x) => x.worker)).size).toBe(Math.min(availableParallelism(), 12));
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toMatch(/\| finished \| 12 \| 100\.0% \|/);
    expect(summary).toContain('## Output `verdict`');
    expect(summary).toMatch(/LLM calls: \d+/);

    // the same sweep again: everything is skipped, nothing is counted twice
    const again = await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-12', '--concurrency', '4', '--out', out]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('12 already done, skipped');
    expect(lines(out)).toHaveLength(12);
  });

  it('re-running continues a run killed half-way from its journal and starts again one killed before its first line', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
    expect((await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--out', out])).code).toBe(0);
    const first = lines(out);
    const [a, b, c] = first;
    // b: cut its journal after the 4th checkpoint (as a kill would) and lose its result line
    const journal = join(b!.run_dir!, 'journal.jsonl');
    const events = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
    let checkpoints = 0;
    const cut = events.findIndex((l) => JSON.parse(l).type === 'checkpoint' && ++checkpoints === 4);
    writeFileSync(journal, events.slice(0, cut + 1).join('\n') + '\n');
    // c: killed before the journal's first line
    writeFileSync(join(c!.run_dir!, 'journal.jsonl'), '');
    writeFileSync(join(out, 'results.jsonl'), JSON.stringify(a) + '\n');

    const r = await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--out', out]);
    expect(r.stderr).toContain('1 already done, skipped');
    expect(r.code).toBe(0);
    const rs = lines(out);
    expect(rs.map((x) => x.key)).toEqual([a!.key, b!.key, c!.key]);
    expect(rs[0]).toEqual(a); // untouched
    expect(rs[1]!.resumed).toBe(true);
    expect(rs[1]!.status).toBe('finished');
    expect(rs[1]!.turns).toBe(b!.turns);
    expect(rs[1]!.outputs).toEqual(b!.outputs);
    // the resumed journal holds the first 4 turns once, and one run_finished
    const resumed = readFileSync(journal, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string });
    expect(resumed.filter((e) => e.type === 'run_finished')).toHaveLength(1);
    expect(resumed.filter((e) => e.type === 'resumed')).toHaveLength(1);
    expect(rs[2]!.status).toBe('finished');
    expect(rs[2]!.resumed).toBeUndefined();
    expect(readdirSync(join(out, 'runs')).some((n) => n.startsWith(`${c!.key}.unreadable-`))).toBe(true);
  });

  it('crosses input rows (.jsonl and .csv), models and repeats, with keys that do not change', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-sweep-'));
    writeFileSync(join(dir, 'topics.jsonl'), '{"topic":"Ban cars?"}\n\n{"topic":"Tax sugar?"}\n');
    writeFileSync(join(dir, 'topics.csv'), 'topic\n"Ban cars?"\n"Tax ""sugar""?"\n');
    const out = join(dir, 'OUT');
    const r = await sop([
      'sweep',
      DEBATE,
      '--llm',
      'mock',
      '--inputs',
      join(dir, 'topics.jsonl'),
      '--model',
      'a,b',
      '--repeat',
      '2',
      '--out',
      out,
    ]);
    expect(r.code).toBe(0);
    const rs = lines(out);
    expect(rs).toHaveLength(8);
    expect(new Set(rs.map((x) => x.key)).size).toBe(8);
    expect(rs.filter((x) => x.inputs.topic === 'Tax sugar?' && x.model === 'b')).toHaveLength(2);
    // the topic reached the run: its transcript says it
    const one = rs.find((x) => x.inputs.topic === 'Tax sugar?')!;
    expect(readFileSync(join(one.run_dir!, 'journal.jsonl'), 'utf8')).toContain('Tax sugar?');
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toContain('## By model');
    // outcomes broken down by input row: each row's inputs, runs, finished, and its commonest verdict
    expect(summary).toContain('## By input row\n\n| row | inputs | runs | finished | `verdict` |\n|---|---|---|---|---|\n');
    expect(summary).toMatch(
      /\n\| 1 \| topic=Ban cars\? \| 4 \| 4 \| .+ \(4 of 4\) \|\n\| 2 \| topic=Tax sugar\? \| 4 \| 4 \| .+ \(4 of 4\) \|\n/,
    );

    // csv: quotes and "" inside them
    const csv = await sop(['sweep', DEBATE, '--llm', 'mock', '--inputs', join(dir, 'topics.csv'), '--out', join(dir, 'CSV')]);
    expect(csv.code).toBe(0);
    expect(lines(join(dir, 'CSV')).map((x) => x.inputs.topic)).toEqual(['Ban cars?', 'Tax "sugar"?']);
  });

  it('--budget-tokens stops each run at its budget (status budget), is recorded in sweep.json and kept by a continued run', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
    const bad = await sop(['sweep', DEBATE, '--llm', 'mock', '--budget-usd', '-1', '--out', out]);
    expect(bad.code).toBe(1);
    expect(bad.stderr.trim()).toBe('error: --budget-usd must be a number above 0, the budget of each run (got -1)');
    expect(existsSync(out)).toBe(false); // nothing written

    const r = await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--budget-tokens', '1500', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('3 of 3 runs done (3 stopped by a budget), 0 failed');
    const rs = lines(out);
    expect(rs).toHaveLength(3);
    for (const x of rs) {
      expect(x.status).toBe('budget');
      expect(x.budget).toMatch(/^--budget-tokens 1500: \d+ of 1500 tokens used/);
      expect(x.usage.prompt_tokens + x.usage.completion_tokens).toBeLessThanOrEqual(1500);
      expect(x.final_state).toBeUndefined(); // the debate never reached its end
    }
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toMatch(/\| budget \| 3 \| 100\.0% \|/);
    expect(summary).toContain('## Stopped by a budget');
    expect(summary).toMatch(/\| --budget-tokens 1500 \| 3 \| s1-/);
    expect(JSON.parse(readFileSync(join(out, 'sweep.json'), 'utf8'))['--budget-tokens']).toBe(1500);

    // run 2 killed half-way (its journal cut after 2 turns, its line lost); the sweep again without a budget
    const b = rs[1]!;
    const journal = join(b.run_dir!, 'journal.jsonl');
    const events = readFileSync(journal, 'utf8').split('\n').filter(Boolean);
    let checkpoints = 0;
    const cut = events.findIndex((l) => JSON.parse(l).type === 'checkpoint' && ++checkpoints === 2);
    writeFileSync(journal, events.slice(0, cut + 1).join('\n') + '\n');
    writeFileSync(join(out, 'results.jsonl'), [rs[0], rs[2]].map((x) => JSON.stringify(x)).join('\n') + '\n');
    const again = await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--out', out]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('were made with --budget-tokens 1500 (now (default))');
    expect(again.stderr).toContain('(but keep their own --budget-tokens)');
    const continued = lines(out).find((x) => x.key === b.key)!;
    expect(continued.resumed).toBe(true);
    expect(continued.status).toBe('budget'); // the budget it was started with still holds
    expect(continued.budget).toMatch(/^--budget-tokens 1500:/);
    expect(continued.turns).toBe(b.turns);

    // another budget: the runs done are kept, the change is told
    const other = await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--budget-tokens', '3000', '--out', out]);
    expect(other.stderr).toContain('--budget-tokens 1500 (now 3000)');
    expect(other.stderr).toContain('3 already done, skipped');
  });

  it('--answers gives the human role its turns in every run; without it, one line says so', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-sweep-'));
    const none = await sop(['sweep', ASSISTANT, '--llm', 'mock', '--out', join(dir, 'NONE')]);
    expect(none.code).toBe(1);
    expect(none.stderr.trim().split('\n')).toHaveLength(1);
    expect(none.stderr).toContain('You is played by a person; a sweep runs unattended: give their turns with --answers FILE');
    expect(existsSync(join(dir, 'NONE'))).toBe(false);
    const missing = await sop(['sweep', ASSISTANT, '--llm', 'mock', '--answers', join(dir, 'nope.txt'), '--out', join(dir, 'NONE')]);
    expect(missing.stderr.trim()).toBe(`error: answers file ${join(dir, 'nope.txt')}: cannot read (ENOENT)`);
    expect(existsSync(join(dir, 'NONE'))).toBe(false);

    writeFileSync(join(dir, 'answers.txt'), 'Food and long walks by the river, please.\n');
    const out = join(dir, 'OUT');
    // over two worker threads: each thread's runs read the file too
    const r = await sop([
      'sweep',
      ASSISTANT,
      '--llm',
      'mock',
      '--seeds',
      '1-3',
      '--answers',
      join(dir, 'answers.txt'),
      '--concurrency',
      '1',
      '--threads',
      '2',
      '--out',
      out,
    ]);
    expect(r.stderr).toContain('3 of 3 runs done, 0 failed');
    expect(r.code).toBe(0);
    expect(new Set(lines(out).map((x) => x.worker.split('/')[1])).size).toBe(2);
    for (const x of lines(out)) {
      expect(x.status).toBe('finished');
      expect(x.outputs.plan).toBeTruthy();
      // each run read the file from its start: the traveller's answer is in every journal
      expect(readFileSync(join(x.run_dir!, 'journal.jsonl'), 'utf8')).toContain('Food and long walks by the river');
    }

    // too few answers: the runs stop, and the message says how a sweep continues them
    writeFileSync(join(dir, 'empty.json'), '[]');
    const short = await sop([
      'sweep',
      ASSISTANT,
      '--llm',
      'mock',
      '--seeds',
      '1-2',
      '--answers',
      join(dir, 'empty.json'),
      '--out',
      join(dir, 'SHORT'),
    ]);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain('no answer left for You (Traveller)');
    expect(short.stderr).toContain('run the sweep again with --answers FILE');
    const more = await sop([
      'sweep',
      ASSISTANT,
      '--llm',
      'mock',
      '--seeds',
      '1-2',
      '--answers',
      join(dir, 'answers.txt'),
      '--out',
      join(dir, 'SHORT'),
    ]);
    expect(more.code).toBe(0);
    expect(lines(join(dir, 'SHORT')).map((x) => [x.status, x.resumed])).toEqual([
      ['finished', true],
      ['finished', true],
    ]);
  });

  it('grid building blocks: seeds, csv, keys', () => {
    expect(parseSeeds('1-3,7,9-10')).toEqual([1, 2, 3, 7, 9, 10]);
    expect(() => parseSeeds('5-1')).toThrow(/goes down; write it from low to high \(1-5\)/);
    expect(() => parseSeeds('x')).toThrow(/--seeds/);
    expect(parseCsv('a,b\r\n"x, y","he said ""hi"""\n', 'f.csv')).toEqual([
      ['a', 'b'],
      ['x, y', 'he said "hi"'],
    ]);
    const p = { seed: 3, inputs: { topic: 't', x: '1' }, model: 'gpt-4o', repeat: 1, row: 2 };
    expect(pointKey(p)).toBe(pointKey({ ...p, inputs: { x: '1', topic: 't' } })); // input order does not matter
    expect(pointKey(p)).not.toBe(pointKey({ ...p, inputs: { topic: 'u', x: '1' } }));
    expect(pointKey(p)).toMatch(/^s3-mgpt_4o-i2-[0-9a-f]{8}$/);
    const g = expandGrid({ seeds: [1, 2], rows: undefined, models: [undefined], repeat: 3, fixed: {} });
    expect(g.map((x) => `${x.seed}/${x.repeat}`)).toEqual(['1/1', '1/2', '1/3', '2/1', '2/2', '2/3']);
  });
});
