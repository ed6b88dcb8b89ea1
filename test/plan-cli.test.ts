// `sop plan` on the command line (docs/plan.md): the table of both examples (calls, tokens, cached
// share, cost and time per state and per population step, and the assumptions), --json, and
// `sop plan --run RUN` after `sop run --llm mock`: predicted beside realised within 15%, kept in
// RUN/plan.json, usage.json's `predicted` and the PLANNED column of `sop runs`; `sop run --plan`
// keeps the prediction before the run starts.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { spawnCliAsync } from './helpers/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'sop-plan-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const DEBATE = resolve('examples/debate/debate.sop.json');
const SPREAD = resolve('examples/social-spread/social-spread.sop.json');
const sop = (args: string[]) => spawnCliAsync(args, { cwd: tmp, timeout: 120_000 });

interface Figures {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  cached_share: number;
  cost?: number;
  seconds: number;
}

describe('sop plan', () => {
  it.each([
    ['debate', DEBATE, ['affirmative_prep', 'open_floor', 'verdict']],
    ['social-spread', SPREAD, ['feed', '  step 1', '  step 6', 'debrief']],
  ])('%s: a table of calls, tokens, cached share, $ and time per state, and what it assumes', async (_name, file, labels) => {
    const r = await sop(['plan', file]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^STATE\s+CALLS\s+PROMPT\s+COMPLETION\s+CACHED\s+COST\s+TIME$/m);
    for (const label of labels)
      expect(r.stdout).toMatch(new RegExp(`^${label}\\s+\\d[\\d,]*\\s+\\d[\\d,]*\\s+\\d[\\d,]*\\s+\\d+%\\s+\\$[\\d.]+\\s+[\\d.]+s$`, 'm'));
    expect(r.stdout).toMatch(/^TOTAL\s+/m);
    expect(r.stdout).toMatch(/^Predicted: [\d,]+ LLM calls, [\d,]+ tokens \(\d+% of the prompt tokens cached\), \$[\d.]+, /m);
    expect(r.stdout).toContain('- replies: 150 tokens for each free-text reply');
    expect(r.stdout).toContain('- time: 1.5s a call (--latency)');
    expect(r.stdout).toContain("- cached share: OpenAI's prompt cache simulated");
  });

  it('--json, a throughput profile, and a clear error for a bad flag', async () => {
    const fast = JSON.parse((await sop(['plan', SPREAD, '--json', '--concurrency', '256', '--latency', '800ms'])).stdout) as {
      total: Figures;
      steps: Array<Figures & { step: number }>;
      profile: { concurrency: number; latency: number };
    };
    expect(fast.profile).toEqual({ concurrency: 256, latency: 0.8 });
    for (const s of fast.steps) expect(s.seconds).toBeCloseTo(Math.ceil(s.calls / 256) * 0.8);
    const bad = await sop(['plan', SPREAD, '--latency', 'soon']);
    expect(bad.status).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toHaveLength(1);
    expect(bad.stderr).toContain('--latency must be a duration such as 1.5s, 800ms or 2m (got "soon")');
    expect((await sop(['plan'])).stderr).toContain('sop plan needs a SOP file, or --run RUN');
  });

  it.each([
    { name: 'debate', file: DEBATE },
    { name: 'social-spread', file: SPREAD },
  ])(
    '$name: sop plan --run beside a mock run, calls and tokens within 15 per cent; usage.json and sop runs show both',
    async ({ name, file }) => {
      const out = join(tmp, `runs-${name}`);
      expect((await sop(['run', file, '--llm', 'mock', '--out', out])).status).toBe(0);
      const dir = join(out, readdirSync(out)[0]!);
      const r = await sop(['plan', '--run', dir, '--json']);
      expect(r.status).toBe(0);
      const { plan, realised } = JSON.parse(r.stdout) as { plan: { total: Figures; replies: string }; realised: { total: Figures } };
      expect(plan.replies).toBe('mock'); // the run's own LLM
      for (const key of ['calls', 'prompt_tokens', 'completion_tokens'] as const)
        expect(Math.abs(plan.total[key] - realised.total[key]) / realised.total[key]).toBeLessThanOrEqual(0.15);
      expect(existsSync(join(dir, 'plan.json'))).toBe(true);
      const usage = JSON.parse(readFileSync(join(dir, 'usage.json'), 'utf8')) as { calls: number; predicted: Figures };
      expect(usage.predicted.calls).toBe(plan.total.calls);
      expect(usage.calls).toBe(realised.total.calls);
      const runs = await sop(['runs', '--out', out]);
      expect(runs.stdout).toMatch(/PLANNED \(sop plan\)/);
      expect(runs.stdout).toContain(`${plan.total.calls.toLocaleString('en-US')} calls, `);
      const table = (await sop(['plan', '--run', dir])).stdout;
      expect(table).toMatch(/^TOTAL\s+[\d,]+ \/ [\d,]+ \([+-]\d+%\)/m);
    },
  );

  it('sop run --plan: the prediction is in the run folder before the run, and usage.json has it beside the realised figures', async () => {
    const out = join(tmp, 'runs-planned');
    const r = await sop(['run', DEBATE, '--llm', 'mock', '--plan', '--out', out, '--quiet']);
    expect(r.status).toBe(0);
    const dir = join(out, readdirSync(out)[0]!);
    const plan = JSON.parse(readFileSync(join(dir, 'plan.json'), 'utf8')) as { total: Figures; replies: string };
    expect(plan.replies).toBe('mock');
    const usage = JSON.parse(readFileSync(join(dir, 'usage.json'), 'utf8')) as Figures & { predicted: Figures };
    expect(usage.predicted.calls).toBe(plan.total.calls);
    for (const key of ['calls', 'prompt_tokens', 'completion_tokens'] as const)
      expect(Math.abs(usage.predicted[key] - usage[key]) / usage[key]).toBeLessThanOrEqual(0.15);
  });
});
