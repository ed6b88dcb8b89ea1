// Hostile input to sop sweep: bad grids and data files get one clear error line (no stack
// trace); a results.jsonl torn by a kill or holding garbage loses no finished run and counts none twice.
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ResultLine } from '../src/sweep/results.js';

const CLI = join(process.cwd(), 'dist/src/cli/main.js');
const DEBATE = join(process.cwd(), 'examples/debate/debate.sop.json');
let refused = 0;
let damaged = 0;
let twice = 0;

function sop(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const lines = (out: string): ResultLine[] =>
  readFileSync(join(out, 'results.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ResultLine);

afterAll(() => {
  console.log(
    `hostile sweep: ${refused} bad inputs refused with one line, ${damaged} damaged results files recovered, ${twice} runs counted twice`,
  );
});

describe('hostile sweep input', () => {
  it('bad input: one clear error line, no stack trace, nothing written', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-sweep-'));
    writeFileSync(join(dir, 'bad.jsonl'), '{"topic":"ok"}\n[1,2]\n');
    writeFileSync(join(dir, 'bad.csv'), 'topic,other\n"unclosed\n');
    for (const [args, message] of [
      [['--seeds', '9-2'], /--seeds "9-2"/],
      [['--inputs', join(dir, 'bad.jsonl')], /bad\.jsonl:2: each line must be a JSON object/],
      [['--inputs', join(dir, 'bad.csv')], /bad\.csv:2: a quoted field is not closed/],
      [['--inputs', join(dir, 'missing.jsonl')], /--inputs .*missing\.jsonl/],
      [['--concurrency', '0'], /--concurrency must be/],
      [['--detach'], /--detach needs --queue/],
      [['--queue', 'http://x'], /--queue "http:\/\/x": use redis:\/\/HOST:PORT/],
    ] as const) {
      const out = join(dir, 'OUT');
      const r = sop(['sweep', DEBATE, '--llm', 'mock', ...args, '--out', out]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      refused++;
    }
  });

  it('a results.jsonl with a torn last line and garbage: the finished runs stay, the lost one is read back, one line each', () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
    expect(sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--out', out]).code).toBe(0);
    const [a, b, c] = lines(out);
    // a kill tore the line of c; garbage and a duplicate of a around it
    writeFileSync(join(out, 'results.jsonl'), `${JSON.stringify(a)}\nnot json\n${JSON.stringify(b)}\n${JSON.stringify(a)}\n`);
    appendFileSync(join(out, 'results.jsonl'), JSON.stringify(c).slice(0, 40));
    const r = sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('2 already done, skipped');
    const rs = lines(out);
    twice += rs.length - new Set(rs.map((x) => x.key)).size;
    expect(rs.map((x) => x.key)).toEqual([a!.key, b!.key, c!.key]);
    // c had finished: read back from its journal, not run again
    expect(rs[2]!.resumed).toBe(true);
    expect(rs[2]!.turns).toBe(c!.turns);
    const journal = readFileSync(join(c!.run_dir!, 'journal.jsonl'), 'utf8');
    expect(journal.match(/"type":"run_started"/g)).toHaveLength(1);
    damaged++;
  });
});
