// The offline Jarvis example, run the way a user runs it: the built CLI, the hand-written
// cassette and the answers file. The code in it really runs: ExtendLibrary saves a function to
// the code library, the Coder imports it and writes report.md, the plan ends all done.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { resumeCommand } from '../src/apps/cli/resume-command.js';
import { AnswersFileInput } from '../src/core/io/human.js';
import { RunFolder } from '../src/features/journal/run-folder.js';
import { ReplayProvider } from '../src/core/llm/cassette.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import { tempDir } from './helpers/executor-context.js';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';

const ROOT = join(import.meta.dirname, '..');
const EXAMPLE = join(ROOT, 'examples', 'jarvis');
const GOAL =
  'Compute summary statistics (count, mean, min, max) of the numeric columns of examples/jarvis/sales.csv and write them to report.md.';

interface Outcome {
  code: number | null;
  stderr: string;
  dir: string;
  events: any[];
}

async function runExample(extra: string[] = []): Promise<Outcome> {
  const out = tempDir('sop-jarvis-');
  const r = await spawnCliAsync(
    [
      'run',
      'sops/jarvis.sop.json',
      '--goal',
      GOAL,
      '--llm',
      'replay:examples/jarvis/jarvis.cassette.json',
      '--answers',
      'examples/jarvis/answers.txt',
      '--auto-run',
      '--out',
      out,
      '--json',
      ...extra,
    ],
    { cwd: ROOT, encoding: 'utf8', env: { ...process.env, SOP_DEBUG: '' }, timeout: 120_000 },
  );
  const runs = readdirSync(out);
  const events = r.stdout
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l));
  return { code: r.status, stderr: r.stderr, dir: join(out, runs[0] ?? 'missing'), events };
}

/** Expected table rows, computed here from the CSV, independently of the example's code. */
function expectedRows(): string[] {
  const [header, ...rows] = readFileSync(join(EXAMPLE, 'sales.csv'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => l.split(','));
  const out: string[] = [];
  header!.forEach((column, i) => {
    const values = rows.map((r) => Number(r[i]));
    if (values.some((v) => Number.isNaN(v))) return;
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    out.push(`| ${column} | ${values.length} | ${mean.toFixed(2)} | ${Math.min(...values)} | ${Math.max(...values)} |`);
  });
  return out;
}

const flatten = (e: any, flow = ''): [string, any] => (e.type === 'subflow' ? flatten(e.event, e.flow) : [flow, e]);

describe('examples/jarvis', () => {
  let run: Outcome;
  beforeAll(async () => {
    requireBuiltCli();
    run = await runExample();
  });

  it('exits 0 and reports a result naming the file', () => {
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const finished = run.events.find((e) => e.type === 'run_finished');
    expect(finished.status).toBe('finished');
    expect(finished.result).toContain('report.md');
  });

  it('writes report.md from code that ran, with the right numbers', () => {
    const report = readFileSync(join(run.dir, 'workspace', 'report.md'), 'utf8');
    const rows = expectedRows();
    expect(rows).toHaveLength(3);
    for (const row of rows) expect(report).toContain(row);
    const ran = run.events.map((e) => flatten(e)).filter(([, e]) => e.type === 'executor_result' && e.command === 'run_code');
    expect(ran.map(([flow, e]) => [flow, e.ok])).toEqual([
      ['Coder-1', true],
      ['Coder-1', true],
    ]);
    expect(ran[1]![1].result).toContain('| revenue | 12 | 43.27 | 28.5 | 80 |');
  });

  it('writes the report from a variable an earlier run_code set (one Python session per run)', () => {
    const calls = run.events.map((e) => flatten(e)).filter(([, e]) => e.type === 'executor_called' && e.command === 'run_code');
    expect(calls).toHaveLength(2);
    expect(calls[0]![1].args.code).toContain('stats = summarize_csv(path)');
    // the second piece of code uses stats without computing it
    expect(calls[1]![1].args.code).toContain('stats.items()');
    expect(calls[1]![1].args.code).not.toContain('summarize_csv');
    const results = run.events.map((e) => flatten(e)).filter(([, e]) => e.type === 'executor_result' && e.command === 'run_code');
    expect(results[1]![1].result).toContain("in the run's python session (cell 2)");
    expect(results[1]![1].result).toContain('files written: report.md');
  });

  it("takes the user's scripted feedback on the Coder's code into its logs", () => {
    const logs = readFileSync(join(run.dir, 'memory', 'Coder-1', 'logs.md'), 'utf8');
    expect(logs).toContain(`run_code: ran python code: exit code 0; output: units {'count': 12`);
    expect(logs).toContain(`the user's feedback: "The numbers look right; put them in a table."`);
  });

  it('leaves the function in the code library, saved by ExtendLibrary after its tests passed', () => {
    expect(readFileSync(join(run.dir, 'workspace', 'library.py'), 'utf8')).toMatch(/^def summarize_csv\(path: str\) -> dict:/);
    expect(readFileSync(join(run.dir, 'memory', 'code_library.md'), 'utf8')).toMatch(
      /^def summarize_csv\(path: str\) -> dict:\n {4}"""Summary statistics/,
    );
    const saved = run.events
      .map((e) => flatten(e))
      .filter(([, e]) => e.type === 'executor_result' && ['test_code', 'save_code'].includes(e.command));
    expect(saved.map(([flow, e]) => [flow, e.command, e.ok])).toEqual([
      ['Coder-1/extend_library-1', 'test_code', true],
      ['Coder-1/extend_library-1', 'save_code', true],
    ]);
    expect(saved[0]![1].result).toContain('all tests passed');
  });

  it('marks every step of every plan done, and keeps logs', () => {
    for (const plan of ['plan.md', 'Coder-1/plan.md', 'Coder-1/extend_library-1/plan.md']) {
      const steps = readFileSync(join(run.dir, 'memory', plan), 'utf8')
        .trim()
        .split('\n')
        .filter((l) => /^\d+\./.test(l));
      expect(steps.length).toBeGreaterThan(0);
      for (const step of steps) expect(step).toMatch(/^\d+\. \[done\] /);
    }
    const logs = readFileSync(join(run.dir, 'memory', 'logs.md'), 'utf8')
      .trim()
      .split('\n');
    expect(logs).toHaveLength(7);
    expect(logs[1]).toBe(
      '- [turn 2] Coder: Coder-1 finished: summary statistics of sales.csv written to report.md using summarize_csv from the code library',
    );
  });

  it('gives a final answer that names the report', () => {
    const answer = run.events.find((e) => e.type === 'executor_called' && e.command === 'final_answer');
    expect(answer.args.answer).toContain('report.md');
    const transcript = readFileSync(join(run.dir, 'transcript.md'), 'utf8');
    expect(transcript).toContain('### Coder-1/extend_library-1: execute');
    expect(transcript).toContain('Result: The summary statistics of examples/jarvis/sales.csv are in report.md');
  });

  it('ships a cassette labelled as hand-written', () => {
    const cassette = JSON.parse(readFileSync(join(EXAMPLE, 'jarvis.cassette.json'), 'utf8'));
    expect(cassette.source).toBe('hand-written');
    expect(cassette.note).toContain('NOT model output');
    expect(readFileSync(join(EXAMPLE, 'README.md'), 'utf8')).toMatch(/hand-written/i);
  });
});

describe('examples/jarvis, interrupted and resumed', () => {
  it('puts back what a journaled executor wrote and ends with the same files as an uninterrupted run', async () => {
    const reference = await runExample();
    expect(reference.code).toBe(0);
    const out = tempDir('sop-jarvis-crash-');
    const cassette = join(EXAMPLE, 'jarvis.cassette.json');
    const answersFile = join(EXAMPLE, 'answers.txt');
    const folder = new RunFolder(out, 'crash', undefined);
    const file = join(ROOT, 'sops', 'jarvis.sop.json');
    // Crash right after the last update_plan ran (its result is journaled), before the turn ends.
    const crash = (e: RunEvent) => {
      if (e.type === 'message' && e.message.kind === 'action' && e.message.sender === 'update_plan' && e.message.turn === 6) {
        throw Object.assign(new Error('simulated crash'), { resumable: true });
      }
    };
    const run = new Run({
      sop: loadSopFile(file).sop,
      file,
      llm: new ReplayProvider(cassette),
      human: new AnswersFileInput(answersFile),
      inputs: { goal: GOAL },
      stream: false,
      listeners: [folder.onEvent, crash],
      launch: { llm: `replay:${cassette}`, answers: answersFile, auto_run: true },
      actions: { runDir: folder.dir, workspace: folder.path('workspace'), autoRun: true, launchDir: ROOT },
    });
    const first = await run.run();
    folder.close();
    expect(first.status).toBe('interrupted');
    // The crash left the plan with every step done, but the checkpoint before it did not.
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      expect(await resumeCommand({ dir: folder.dir, json: false, quiet: true })).toBe(0);
    } finally {
      spy.mockRestore();
    }
    for (const f of ['memory/plan.md', 'memory/logs.md', 'memory/code_library.md', 'workspace/report.md', 'workspace/library.py']) {
      expect(readFileSync(join(folder.dir, f), 'utf8'), f).toBe(readFileSync(join(reference.dir, f), 'utf8'));
    }
  });
});
