// Resume with executors and sub-flows: the Jarvis example (Jarvis -> Coder -> ExtendLibrary, code
// that really runs, memory files) killed at several points and resumed ends with the same
// transcripts, memory files and workspace files as an uninterrupted run; code whose start is
// journaled without a result is run again only with --auto-run (given at launch or to resume).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readJournal } from '../src/features/journal/reader.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { spawnCli, requireBuiltCli } from './helpers/cli.js';

const ARGS = [
  'run',
  'sops/jarvis.sop.json',
  '--goal',
  'Compute summary statistics (count, mean, min, max) of the numeric columns of examples/jarvis/sales.csv and write them to report.md.',
  '--llm',
  'replay:examples/jarvis/jarvis.cassette.json',
  '--answers',
  'examples/jarvis/answers.txt',
  '--auto-run',
  '--json',
];

function cli(args: string[], killAfter?: number): Promise<{ code: number | null; stderr: string; lines: number }> {
  return new Promise((done, fail) => {
    const child = spawnCli([...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let lines = 0;
    let stderr = '';
    let killed = false;
    child.stdout.on('data', (chunk: Buffer) => {
      for (const b of chunk) if (b === 10) lines++;
      if (killAfter !== undefined && !killed && lines >= killAfter) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stderr, lines }));
  });
}

const only = (out: string) => join(out, readdirSync(out)[0]!);

function filesUnder(dir: string, base = dir): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p, base) : [p.slice(base.length + 1)];
  });
}

/** Everything a run leaves in its folder but the journal, without run ids and times. */
function folderState(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const f of filesUnder(dir)) {
    if (f === 'journal.jsonl' || f.endsWith('.tmp') || f === 'run.lock' || f.includes('__pycache__')) continue;
    if (f === 'provenance.json') {
      // its run id and Merkle root name the run; what a resume must reproduce is the run's outcome
      const p = JSON.parse(readFileSync(join(dir, f), 'utf8')) as { runs: Array<{ outcome: string }> };
      out[f] = JSON.stringify(p.runs.map((r) => r.outcome));
      continue;
    }
    out[f] = readFileSync(join(dir, f), 'utf8')
      .replace(/"timestamp":"[^"]*"/g, '')
      .replace(/^Run `[^`]*` of `[^`]*`, started [^,]*,/m, 'Run');
  }
  return out;
}

describe('resume with executors and sub-flows (Jarvis example)', () => {
  let root: string;
  let reference: Record<string, string>;
  let refDir: string;
  let lines = 0;

  beforeAll(async () => {
    requireBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'sop-subflow-'));
    const ref = await cli([...ARGS, '--out', join(root, 'ref')]);
    expect(ref.code, ref.stderr).toBe(0);
    lines = ref.lines;
    refDir = only(join(root, 'ref'));
    reference = folderState(refDir);
    expect(Object.keys(reference)).toEqual(expect.arrayContaining(['workspace/report.md', 'memory/code_library.md', 'memory/plan.md']));
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('kills at points inside and between sub-flows; every resume ends with the same folder', async () => {
    const points = [0.12, 0.3, 0.5, 0.62, 0.8, 0.95].map((f) => Math.max(1, Math.floor(f * lines)));
    const results = await Promise.all(
      points.map(async (at) => {
        const out = join(root, `kill-${at}`);
        await cli([...ARGS, '--out', out], at);
        const dir = only(out);
        // Killed between the Coder's two run_code steps: the second uses a variable the first set,
        // and the resumed run's Python session starts empty (earlier code is not run again).
        const between = codeResults(dir).length === 1;
        let resumed = await cli(['resume', dir, '--json']);
        let note = '';
        if (
          resumed.code === 3 &&
          /started before the run was interrupted/.test(resumed.stderr + readFileSync(join(dir, 'journal.jsonl'), 'utf8'))
        ) {
          // The kill fell inside a code step: that is the refusal tested below; approve and go on.
          note = ' (interrupted code re-run with --auto-run)';
          resumed = await cli(['resume', dir, '--json', '--auto-run']);
        }
        if (between) note = ' (between the two code steps)';
        return { at, code: resumed.code, stderr: resumed.stderr, state: folderState(dir), note, between, results: codeResults(dir) };
      }),
    );
    for (const r of results) {
      expect(r.code, `kill after ${r.at} lines: ${r.stderr}`).toBe(0);
      if (r.between) {
        // the agent is told plainly, and the variable is gone
        const last = r.results[r.results.length - 1];
        expect(last).toContain('this run was resumed, and the python session started empty');
        expect(last).toContain("NameError: name 'stats' is not defined");
        continue;
      }
      if (r.note) continue;
      expect(r.state, `kill after ${r.at} lines`).toEqual(reference);
    }
  }, 300_000);

  it('saves a library function once when killed after the append and before its result was journaled', async () => {
    const events = readJournal(refDir).events;
    const i = events.findIndex((e) => {
      const inner = unwrap(e);
      return inner.type === 'effect_started' && inner.kind === 'library' && inner.label.startsWith('save_code');
    });
    expect(i).toBeGreaterThan(0);
    const dir = join(root, 'cut', 'save-window');
    mkdirSync(join(dir, 'workspace'), { recursive: true });
    writeFileSync(
      join(dir, 'journal.jsonl'),
      events
        .slice(0, i + 1)
        .map((e) => JSON.stringify(e) + '\n')
        .join(''),
    );
    // The crash window: the module already has the function appended, the journal no result.
    writeFileSync(join(dir, 'workspace/library.py'), reference['workspace/library.py']!);
    const resumed = await cli(['resume', dir]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/save_code@execute.*performing it again/);
    const state = folderState(dir);
    expect(state['workspace/library.py']).toBe(reference['workspace/library.py']);
    expect(state['workspace/library.py']!.match(/^def summarize_csv/gm)).toHaveLength(1);
    expect(state['memory/code_library.md']).toBe(reference['memory/code_library.md']);
    expect(state['transcript.jsonl']).toBe(reference['transcript.jsonl']);
  }, 120_000);

  it('runs interrupted code again only with --auto-run, given at launch or now', async () => {
    // A journal cut right after a code step started: the step may have run, its result is lost.
    const events = readJournal(refDir).events;
    const i = events.findIndex((e) => {
      const inner = e.type === 'subflow' ? unwrap(e) : e;
      return inner.type === 'effect_started' && (inner.kind === 'code' || inner.kind === 'library');
    });
    expect(i).toBeGreaterThan(0);
    const label = (unwrap(events[i]!) as Extract<RunEvent, { type: 'effect_started' }>).label;
    const cut = (name: string, launch: (l: Record<string, unknown>) => Record<string, unknown>) => {
      const dir = join(root, 'cut', name);
      mkdirSync(dir, { recursive: true });
      const lines = events.slice(0, i + 1).map((e) => (e.type === 'run_started' ? { ...e, launch: launch(e.launch ?? {}) } : e));
      writeFileSync(join(dir, 'journal.jsonl'), lines.map((e) => JSON.stringify(e) + '\n').join(''));
      return dir;
    };

    // Launched with --auto-run (as ARGS): the resume honours it.
    const launched = cut('launched-auto-run', (l) => l);
    expect(readJournal(launched).events[0]).toMatchObject({ launch: { auto_run: true } });
    const honoured = await cli(['resume', launched, '--json']);
    expect(honoured.code, honoured.stderr).toBe(0);
    expect(folderState(launched)['transcript.jsonl']).toBe(reference['transcript.jsonl']);

    // Launched without it: not run again unless --auto-run is given now.
    const dir = cut('launched-asking', ({ auto_run: _dropped, ...l }) => l);
    const refused = await cli(['resume', dir]);
    expect(refused.code).toBe(3); // stopped for a person: the code may run again only with approval
    expect(refused.stderr).toContain(`"${label}" started before the run was interrupted`);
    expect(refused.stderr).toMatch(/--auto-run/);
    const approved = await cli(['resume', dir, '--auto-run', '--json']);
    expect(approved.code, approved.stderr).toBe(0);
    const state = folderState(dir);
    expect(state['transcript.jsonl']).toBe(reference['transcript.jsonl']);
    expect(state['workspace/report.md']).toBe(reference['workspace/report.md']);
  }, 120_000);
});

/** Results of the run_code steps in a run folder's journal, in order. */
function codeResults(dir: string): string[] {
  return readJournal(dir)
    .events.map(unwrap)
    .flatMap((e) => (e.type === 'executor_result' && e.command === 'run_code' ? [e.result] : []));
}

function unwrap(e: RunEvent): RunEvent {
  return e.type === 'subflow' ? unwrap(e.event) : e;
}
