// Issue 27 item 4: an input a template reads and that has no default must be given, and a
// misspelt --input name is refused with the name it is closest to: `sop run`, `sop check` and
// `sop sweep` each say so in one line, exit 1, and leave no run folder behind.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSop, runSop } from '../src/index.js';
import { closestName } from '../src/shared/util/suggest.js';
import { spawnCliAsync } from './helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'sop-inputs-'));

/** The debate example with its topic input given no default (its templates read {{inputs.topic}}). */
function sopFile(input: Record<string, unknown>): string {
  const doc = JSON.parse(readFileSync('examples/debate/debate.sop.json', 'utf8')) as Record<string, unknown>;
  delete doc.$schema;
  doc.inputs = { topic: input };
  const file = join(dir, `debate-${Object.keys(input).join('-') || 'bare'}.sop.json`);
  writeFileSync(file, JSON.stringify(doc));
  return file;
}

const sop = (...args: string[]) => spawnCliAsync(args, { encoding: 'utf8', cwd: dir, timeout: 60_000 });
const lines = (s: string) => s.split('\n').filter(Boolean);

describe('an input a template reads, without a default', () => {
  const file = sopFile({ description: 'The motion' });

  it.each([
    ['run', ['run', file, '--llm', 'mock', '--out', 'runs-a']],
    ['check', ['check', file, '--runs', '1']],
  ])('sop %s refuses to start without it, in one line naming it', async (_cmd, args) => {
    const r = await sop(...args);
    expect(r.status).toBe(1);
    expect(lines(r.stderr)).toEqual([
      'error: debate needs the input "topic" (The motion), which its templates read and which has no default: pass --input topic=VALUE',
    ]);
    expect(existsSync(join(dir, 'runs-a'))).toBe(false); // no run folder for a refused run
  });

  it('sop sweep refuses it in one line', async () => {
    const r = await sop('sweep', file, '--llm', 'mock', '--out', 'sweep-a');
    expect(r.status).toBe(1);
    expect(lines(r.stderr)).toEqual([
      'error: input "topic" is required (The motion) and 1 of 1 runs have none: give --input topic=VALUE or a "topic" column in --inputs',
    ]);
  });

  it('runs once it is given', async () => {
    const r = await sop('run', file, '--llm', 'mock', '--input', 'topic=bees', '--out', 'runs-b', '--quiet');
    expect(r.status, r.stderr).toBe(0);
  });

  it('the API refuses it too, and required: false lets it be empty', async () => {
    const outcome = await runSop(loadSop(file), { llm: 'mock' }).result.then(
      (r) => r.error?.message ?? r.status,
      (e: Error) => e.message,
    );
    expect(outcome).toMatch(/debate needs the input "topic".*pass options\.inputs\.topic/);
    const optional = sopFile({ description: 'The motion', required: false });
    const r = await sop('run', optional, '--llm', 'mock', '--out', 'runs-c', '--quiet');
    expect(r.status, r.stderr).toBe(0);
  });
});

describe('a misspelt --input name', () => {
  const file = sopFile({ default: 'Is remote work better?' });
  it.each([
    ['run', ['run', file, '--llm', 'mock', '--input', 'topc=x', '--out', 'runs-d']],
    ['check', ['check', file, '--runs', '1', '--input', 'topc=x']],
    ['sweep', ['sweep', file, '--llm', 'mock', '--input', 'topc=x', '--out', 'sweep-d']],
  ])('sop %s refuses it and suggests the declared name', async (_cmd, args) => {
    const r = await sop(...args);
    expect(r.status).toBe(1);
    expect(lines(r.stderr)).toEqual(['error: debate has no input "topc"; did you mean "topic"? (its inputs: topic)']);
    expect(existsSync(join(dir, 'runs-d'))).toBe(false);
    expect(existsSync(join(dir, 'sweep-d'))).toBe(false);
  });

  it('suggests only a name close enough', () => {
    expect(closestName('topc', ['topic', 'goal'])).toBe('topic');
    expect(closestName('tpoic', ['topic'])).toBe('topic');
    expect(closestName('Goal', ['goal'])).toBe('goal');
    expect(closestName('budget', ['topic', 'goal'])).toBeUndefined();
  });
});
