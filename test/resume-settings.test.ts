// Settings given to `sop resume` last: the `resumed` event journals the settings and launch that
// apply from then on, and a later `sop resume` without flags starts from the last ones recorded,
// even when the resume that recorded them was killed before its first checkpoint. Flags given
// now still win; a fork takes the settings that applied at its turn. Journals written before the
// `resumed` event carried settings resume as they did (with the launch's settings). The runs are
// real `sop` processes (dist) on the debate example with the mock LLM.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resumeRun } from '../src/api/run-sop.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { tempDir } from './helpers/executor-context.js';
import { spawnCli } from './helpers/cli.js';

const DEBATE = resolve('examples/debate/debate.sop.json');

interface Result {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run the CLI to its end. */
function cli(args: string[], cwd: string, o: { env?: NodeJS.ProcessEnv } = {}): Promise<Result> {
  return new Promise((done, fail) => {
    const child = spawnCli([...args], { cwd, env: { ...process.env, ...o.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

/** The closing line of a run stopped by its budget (which budget, at which turn, how much spent). */
const closing = (s: string) => /Stopped by the budget[^\n]*tokens\./.exec(s)?.[0];

function journal(runDir: string): RunEvent[] {
  return readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RunEvent);
}

const resumedEvents = (runDir: string) => journal(runDir).filter((e): e is Extract<RunEvent, { type: 'resumed' }> => e.type === 'resumed');

/** The uninterrupted run with --budget-tokens 3000 (stops by its budget), and one with 1500 stopped by it earlier. */
async function budgetRuns(dir: string): Promise<{ straight: Result; small: Result; smallDir: string }> {
  const [straight, small] = await Promise.all([
    cli(['run', DEBATE, '--llm', 'mock', '--budget-tokens', '3000', '--quiet', '--out', 'straight'], dir),
    cli(['run', DEBATE, '--llm', 'mock', '--budget-tokens', '1500', '--quiet', '--out', 'small'], dir),
  ]);
  expect(closing(straight.stderr)).toMatch(/after 9 turns \(--budget-tokens 3000:/);
  expect(closing(small.stderr)).toMatch(/after 5 turns \(--budget-tokens 1500:/);
  return { straight, small, smallDir: join(dir, 'small', readdirSync(join(dir, 'small'))[0]!) };
}

describe('settings given to sop resume', () => {
  it('a resume killed before its first checkpoint hands its --budget-tokens on to the next plain resume', async () => {
    const dir = tempDir('sop-resume-settings-kill-');
    const { straight, smallDir } = await budgetRuns(dir);
    // killed as soon as it said it resumed, before it took a turn or wrote a checkpoint. A SIGKILL sent
    // on reading that line lands wherever the fast mock run has got to by then; what such a kill leaves
    // is the journal up to that line (it is append-only), so the resume runs, and its journal is cut there.
    const resumed = await cli(['resume', smallDir, '--budget-tokens', '3000', '--quiet'], dir);
    expect(resumed.code, resumed.stderr).toBe(0);
    const file = join(smallDir, 'journal.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
    writeFileSync(file, lines.slice(0, lines.findIndex((l) => l.startsWith('{"type":"resumed"')) + 1).join('\n') + '\n');
    expect(
      journal(smallDir)
        .filter((e) => e.type === 'checkpoint')
        .at(-1),
    ).toMatchObject({ turn: 5 });
    const [marker] = resumedEvents(smallDir);
    expect(marker).toMatchObject({ from_turn: 5, launch: { llm: 'mock', budget_tokens: 3000 }, settings: { max_turns: 200 } });
    const runs = await cli(['runs', '--out', 'small'], dir);
    expect(runs.stdout).toMatch(/\skilled\s+5\s/);
    // no flags: the 3000 given to the killed resume, not the launch's 1500 (which would stop it at once)
    const plain = await cli(['resume', smallDir, '--quiet'], dir);
    expect(plain.code).toBe(0);
    expect(closing(plain.stderr)).toBe(closing(straight.stderr)); // as if it had had 3000 from the start
    const finished = journal(smallDir).at(-1);
    expect(finished).toMatchObject({ type: 'run_finished', status: 'budget', turns: 9 });
    expect(resumedEvents(smallDir).map((e) => e.launch?.budget_tokens)).toEqual([3000, 3000]);
  }, 60_000);

  it('--max-turns and --budget-tokens given to a resume both last; flags given later win', async () => {
    const dir = tempDir('sop-resume-settings-turns-');
    const { straight, smallDir } = await budgetRuns(dir);
    const first = await cli(['resume', smallDir, '--budget-tokens', '3000', '--max-turns', '7', '--quiet'], dir);
    expect(first.stderr).toContain('Stopped after --max-turns 7 turns');
    // the turn limit given to that resume holds: a plain resume has nothing to do
    const plain = await cli(['resume', smallDir, '--quiet'], dir);
    expect(plain.code).toBe(1);
    expect(plain.stderr.trim()).toBe(`${smallDir}: the run stopped at its turn limit (7); give a larger --max-turns to continue it`);
    // a larger --max-turns now wins; the budget of 3000 given before still holds (1500 would stop it at once)
    const more = await cli(['resume', smallDir, '--max-turns', '100', '--quiet'], dir);
    expect(more.code).toBe(0);
    expect(closing(more.stderr)).toBe(closing(straight.stderr));
    expect(resumedEvents(smallDir).map((e) => [e.settings?.max_turns, e.launch?.budget_tokens])).toEqual([
      [7, 3000],
      [100, 3000],
    ]);
  }, 60_000);

  it('a fork takes the settings that applied at its turn: those of the resume that ran it, or the launch', async () => {
    const dir = tempDir('sop-resume-settings-fork-');
    const { small, smallDir } = await budgetRuns(dir);
    const first = await cli(['resume', smallDir, '--budget-tokens', '3000', '--max-turns', '7', '--quiet'], dir);
    expect(first.stderr).toContain('Stopped after --max-turns 7 turns');
    // turn 6 was run by that resume: its --max-turns 7 and --budget-tokens 3000
    const late = await cli(['fork', smallDir, '--at', '6', '--out', 'late', '--quiet'], dir);
    expect(late.code).toBe(0);
    expect(late.stderr).toContain('Stopped after --max-turns 7 turns');
    const lateDir = join(dir, 'late', readdirSync(join(dir, 'late'))[0]!);
    expect(journal(lateDir)[0]).toMatchObject({ type: 'run_started', settings: { max_turns: 7 }, launch: { budget_tokens: 3000 } });
    // turn 3 was run by the launch: its --budget-tokens 1500 stops the fork where the launch stopped
    const early = await cli(['fork', smallDir, '--at', '3', '--out', 'early', '--quiet'], dir);
    expect(early.code).toBe(0);
    expect(closing(early.stderr)).toBe(closing(small.stderr));
    // flags given to the fork win
    const given = await cli(
      ['fork', smallDir, '--at', '6', '--max-turns', '8', '--budget-tokens', '1500', '--out', 'given', '--quiet'],
      dir,
    );
    expect(given.stderr).toMatch(/Stopped by the budget after 6 turns \(--budget-tokens 1500:/);
  }, 60_000);

  it('a resume journals --redact names and a --base-url credential redacted, never their values', async () => {
    const dir = tempDir('sop-resume-settings-secrets-');
    const { smallDir } = await budgetRuns(dir);
    const value = 'canary-resume-value-8d1f2a';
    const key = 'canary-url-key-5e7c90';
    const first = await cli(
      [
        'resume',
        smallDir,
        '--budget-tokens',
        '3000',
        '--max-turns',
        '6',
        '--redact',
        'RESUME_CANARY',
        '--base-url',
        `http://127.0.0.1:9/v1?api-key=${key}`,
        '--quiet',
      ],
      dir,
      { env: { RESUME_CANARY: value } },
    );
    expect(first.stderr).toContain('Stopped after --max-turns 6 turns');
    const text = readFileSync(join(smallDir, 'journal.jsonl'), 'utf8');
    expect(text).not.toContain(value);
    expect(text).not.toContain(key);
    const [marker] = resumedEvents(smallDir);
    expect(marker!.launch).toMatchObject({ redact: 'RESUME_CANARY', base_url: 'http://127.0.0.1:9/v1?api-key=[REDACTED]' });
    // the credential is not kept: a later resume asks for --base-url again, in one line
    const plain = await cli(['resume', smallDir, '--max-turns', '7', '--quiet'], dir);
    expect(plain.code).toBe(1);
    expect(plain.stderr.trim().split('\n').at(-1)).toBe(
      'error: the run was launched (or last resumed) with a --base-url holding a credential, which the journal does not keep ' +
        '(http://127.0.0.1:9/v1?api-key=[REDACTED]); give --base-url again',
    );
    expect(plain.stderr).not.toMatch(/\n\s+at /); // no stack trace
    // given again, the resume goes on, and the names given before are still redacted
    const again = await cli(
      ['resume', smallDir, '--max-turns', '7', '--base-url', `http://127.0.0.1:9/v1?api-key=${key}`, '--quiet'],
      dir,
      {
        env: { RESUME_CANARY: value },
      },
    );
    expect(again.stderr).toContain('Stopped after --max-turns 7 turns');
    expect(resumedEvents(smallDir)[1]!.launch).toMatchObject({ redact: 'RESUME_CANARY', budget_tokens: 3000 });
    expect(readFileSync(join(smallDir, 'journal.jsonl'), 'utf8')).not.toContain(key);
  }, 60_000);

  it('resumeRun (the API) journals its settings over the recorded launch, so a CLI resume keeps the budget', async () => {
    const dir = tempDir('sop-resume-settings-api-');
    const { straight, smallDir } = await budgetRuns(dir);
    const first = await cli(['resume', smallDir, '--budget-tokens', '3000', '--max-turns', '6', '--quiet'], dir);
    expect(first.stderr).toContain('Stopped after --max-turns 6 turns');
    const r = await resumeRun(smallDir, { maxTurns: 7 }).result;
    expect(r).toMatchObject({ status: 'max_turns', turns: 7 });
    expect(resumedEvents(smallDir)[1]).toMatchObject({ settings: { max_turns: 7 }, launch: { llm: 'mock', budget_tokens: 3000 } });
    // the API run had no budget (its checkpoint holds none): the 3000 still counts all the run spent
    const more = await cli(['resume', smallDir, '--max-turns', '100', '--quiet'], dir);
    expect(closing(more.stderr)).toBe(closing(straight.stderr));
  }, 60_000);

  it('resumeRun keeps the run budgets of the launch, and a budget given to it lasts for a CLI resume', async () => {
    const dir = tempDir('sop-resume-settings-api-budget-');
    const { straight, small, smallDir } = await budgetRuns(dir);
    const same = await resumeRun(smallDir).result; // the launch's 1500, spent: it stops at once
    expect(same).toMatchObject({ status: 'budget', turns: 5 });
    expect(`Stopped by the budget after ${same.turns} turns (${same.budget})`).toBe(/^[^;]*/.exec(closing(small.stderr)!)![0]);
    const larger = await resumeRun(smallDir, { budget: { tokens: 3000 } }).result;
    expect(larger).toMatchObject({ status: 'budget', turns: 9 });
    expect(resumedEvents(smallDir).at(-1)!.launch).toMatchObject({ llm: 'mock', budget_tokens: 3000 });
    const plain = await cli(['resume', smallDir, '--quiet'], dir); // stops at once, by the 3000 given to the API
    expect(closing(plain.stderr)).toBe(closing(straight.stderr));
  }, 60_000);

  it('a budget given only to a resume of a run launched without one counts what the run spent before', async () => {
    const dir = tempDir('sop-resume-settings-new-budget-');
    const [straight, first] = await Promise.all([
      cli(['run', DEBATE, '--llm', 'mock', '--budget-tokens', '3000', '--quiet', '--out', 'straight'], dir),
      cli(['run', DEBATE, '--llm', 'mock', '--max-turns', '6', '--quiet', '--out', 'b'], dir),
    ]);
    expect(first.stderr).toContain('Stopped after --max-turns 6 turns');
    const runDir = join(dir, 'b', readdirSync(join(dir, 'b'))[0]!);
    const resumed = await cli(['resume', runDir, '--budget-tokens', '3000', '--max-turns', '100', '--quiet'], dir);
    expect(closing(resumed.stderr)).toBe(closing(straight.stderr)); // not 3000 more tokens on top of the 1757 spent
  }, 60_000);

  it('a journal whose resumed events carry no settings (an older sop) resumes with the launch settings', async () => {
    const dir = tempDir('sop-resume-settings-old-');
    const { smallDir } = await budgetRuns(dir);
    const first = await cli(['resume', smallDir, '--budget-tokens', '3000', '--max-turns', '7', '--quiet'], dir);
    expect(first.stderr).toContain('Stopped after --max-turns 7 turns');
    // as an older sop wrote it: the resumed marker alone
    const file = join(smallDir, 'journal.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    const old = lines.map((l) => {
      if (!l.includes('"type":"resumed"')) return l;
      const { settings: _s, launch: _l, ...marker } = JSON.parse(l) as Record<string, unknown>;
      return JSON.stringify(marker);
    });
    expect(old).not.toEqual(lines);
    writeFileSync(file, old.join('\n'));
    expect(resumedEvents(smallDir)[0]).toEqual({ type: 'resumed', mode: 'resume', from_turn: 5, time: expect.any(String) });
    // the launch's settings: no turn limit of 7, and the 1500 budget, already spent, stops it at once
    const plain = await cli(['resume', smallDir, '--quiet'], dir);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toContain('Resuming run');
    expect(plain.stderr).toMatch(/Stopped by the budget after 7 turns \(--budget-tokens 1500:/);
    expect(journal(smallDir).at(-1)).toMatchObject({ type: 'run_finished', status: 'budget', turns: 7 });
  }, 60_000);
});
