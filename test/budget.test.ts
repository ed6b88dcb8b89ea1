// Budgets as transitions (docs/cost.md): a spent budget moves the run to its on_exhausted state,
// or stops it with status "budget" (exit 0, named in the closing line, the journal and `sop runs`);
// calls are checked before they are made, so a run overshoots by at most one call; a state's
// budget is its own allowance per visit; sub-flows draw on the parent's budget; USD budgets use
// the prices. The LLM is the mock, a scripted provider, or a local OpenAI-compatible server.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { Run } from '../src/api/engine/run-with-features.js';
import { MockProvider } from '../src/core/llm/mock.js';
import { loadPricing } from '../src/core/llm/pricing.js';
import { loadSopFile } from '../src/api/loader/checked-load.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { estimateUsage, type ChatOptions, type ChatRequest, type ChatResponse } from '../src/core/llm/types.js';
import type { Sop } from '../src/format/sop/types.js';
import { graphDiagnostics } from '../src/format/sop/validate.js';
import { tempDir } from './helpers/executor-context.js';
import { ScriptedLlm } from './helpers/scripted-llm.js';
import { spawnCli } from './helpers/cli.js';

function cli(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawnCli([...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

/** Two agents talk forever in `talk`; `wrap_up` ends the run in two turns. */
function loopSop(budget: Sop['budget'], wrapBudget?: Sop['budget']): Sop {
  return {
    name: 'looping',
    open_ended: true,
    environment: { summary: { enabled: false } },
    agents: { Ada: { roles: { talk: 'Pro', wrap_up: 'Closer' } }, Ben: { roles: { talk: 'Con' } } },
    root: 'talk',
    ...(budget ? { budget } : {}),
    states: {
      talk: {
        environment_prompt: 'A talk that never ends on its own.',
        roles: ['Pro', 'Con'],
        controller: { type: 'order' },
        next_states: { '0': 'talk' },
      },
      wrap_up: {
        environment_prompt: 'Sum the talk up.',
        roles: ['Closer'],
        controller: { type: 'order', max_turns: 2 },
        next_states: { '1': 'end' },
        ...(wrapBudget ? { budget: wrapBudget } : {}),
      },
      end: { final: true },
    },
  };
}

async function run(
  sop: Sop,
  opts: { budget?: { tokens?: number; usd?: number }; llm?: ScriptedLlm | MockProvider; pricing?: boolean } = {},
) {
  const events: RunEvent[] = [];
  const result = await new Run({
    sop,
    file: '<memory>',
    llm: opts.llm ?? new MockProvider(),
    maxTurns: 60,
    budget: opts.budget,
    ...(opts.pricing ? { pricing: loadPricing() } : {}),
    listeners: [(e) => events.push(e)],
  }).run();
  return { result, events };
}

/** Scripted replies, with usage measured as the mock does. */
class MeasuredLlm extends ScriptedLlm {
  override async chat(request: ChatRequest, options?: ChatOptions): Promise<ChatResponse> {
    const res = await super.chat(request, options);
    return { ...res, usage: estimateUsage(request.messages, res.content) };
  }
}

const tokensOf = (u: { prompt_tokens: number; completion_tokens: number }) => u.prompt_tokens + u.completion_tokens;

describe('budgets', () => {
  it('sop run --budget-tokens stops the debate with status budget: exit 0, closing line, journal, sop runs', async () => {
    const dir = tempDir('sop-budget-');
    const r = await cli(['run', resolve('examples/debate/debate.sop.json'), '--llm', 'mock', '--budget-tokens', '1500'], dir);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/Stopped by the budget after \d+ turns \(--budget-tokens 1500: \d+ of 1500 tokens used/);
    const runDir = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
    const lines = readFileSync(join(runDir, 'journal.jsonl'), 'utf8').trim().split('\n');
    const finished = JSON.parse(lines[lines.length - 1]!) as Extract<RunEvent, { type: 'run_finished' }>;
    expect(finished.type).toBe('run_finished');
    expect(finished.status).toBe('budget');
    expect(finished.budget).toContain('--budget-tokens 1500');
    // checked before each call: what was spent is under the budget but for the last reply's completion
    const calls = lines.map((l) => JSON.parse(l) as RunEvent).filter((e) => e.type === 'llm_call');
    const lastCompletion = calls[calls.length - 1]!.usage.completionTokens;
    expect(tokensOf(finished.usage)).toBeLessThanOrEqual(1500 + lastCompletion);
    expect(tokensOf(finished.usage)).toBeGreaterThan(1000); // it ran up to the budget, not far short of it
    const runs = await cli(['runs'], dir);
    expect(runs.stdout).toMatch(/\sbudget\s+\d+\s/);
    const bad = await cli(['run', resolve('examples/debate/debate.sop.json'), '--llm', 'mock', '--budget-tokens', '0'], dir);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim()).toBe('error: --budget-tokens must be a number above 0 (got 0)');
  }, 30_000);

  it('a resumed run keeps its --budget-tokens and what it had spent', async () => {
    const dir = tempDir('sop-budget-resume-');
    const debate = resolve('examples/debate/debate.sop.json');
    const straight = await cli(['run', debate, '--llm', 'mock', '--budget-tokens', '3000', '--quiet', '--out', 'a'], dir);
    const first = await cli(['run', debate, '--llm', 'mock', '--budget-tokens', '3000', '--max-turns', '4', '--quiet', '--out', 'b'], dir);
    expect(first.stderr).toContain('Stopped after --max-turns 4 turns');
    const runDir = join(dir, 'b', readdirSync(join(dir, 'b'))[0]!);
    const resumed = await cli(['resume', runDir, '--max-turns', '100', '--quiet'], dir);
    expect(resumed.code).toBe(0);
    const closing = (s: string) => /Stopped by the budget[^\n]*tokens\./.exec(s)?.[0];
    expect(closing(resumed.stderr)).toBeDefined();
    expect(closing(resumed.stderr)).toBe(closing(straight.stderr)); // same turn, same tokens as a run never stopped
    // a run stopped by its budget goes on with a larger one given to sop resume, as if it had had it from the start
    const small = await cli(['run', debate, '--llm', 'mock', '--budget-tokens', '1500', '--quiet', '--out', 'c'], dir);
    expect(small.stderr).toContain('Stopped by the budget');
    const smallDir = join(dir, 'c', readdirSync(join(dir, 'c'))[0]!);
    const again = await cli(['resume', smallDir, '--quiet'], dir); // the same budget: it stops again at once
    expect(closing(again.stderr)).toBe(closing(small.stderr));
    const larger = await cli(['resume', smallDir, '--budget-tokens', '3000', '--quiet'], dir);
    expect(closing(larger.stderr)).toBe(closing(straight.stderr));
  }, 60_000);

  it('a spent SOP budget moves the run to on_exhausted, which finishes on its own allowance', async () => {
    const { result, events } = await run(loopSop({ tokens: 900, on_exhausted: 'wrap_up' }, { tokens: 2000 }));
    expect(result.status).toBe('finished');
    expect(result.finalState).toBe('end');
    const moved = events.find((e) => e.type === 'state_entered' && e.state === 'wrap_up');
    expect(moved).toMatchObject({ reason: 'budget', from: 'talk' });
    expect(
      events.some((e) => e.type === 'warning' && /the SOP's budget: \d+ of 900 tokens used.*moving to state "wrap_up"/.test(e.message)),
    ).toBe(true);
    // the wrap-up spoke after the run's budget was spent, on its own allowance
    expect(result.messages.filter((m) => m.state === 'wrap_up').length).toBeGreaterThan(0);
    expect(tokensOf(result.usage)).toBeGreaterThan(900);
    const beforeWrap = events
      .filter((e): e is Extract<RunEvent, { type: 'llm_call' }> => e.type === 'llm_call' && e.state === 'talk')
      .reduce((n, e) => n + e.usage.promptTokens + e.usage.completionTokens, 0);
    expect(beforeWrap).toBeLessThanOrEqual(900 + 40);
    expect(beforeWrap).toBeGreaterThan(600);
  });

  it('a turns budget without on_exhausted stops the run; a wrap-up state that spends its own budget stops it too', async () => {
    const a = await run(loopSop({ turns: 5 }));
    expect(a.result.status).toBe('budget');
    expect(a.result.turns).toBe(5);
    expect(a.result.budget).toBe("the SOP's budget: 5 of 5 turns taken");
    const b = await run(loopSop({ turns: 4, on_exhausted: 'wrap_up' }, { turns: 1 }));
    expect(b.result.status).toBe('budget');
    expect(b.result.budget).toBe('state "wrap_up"\'s budget: 1 of 1 turns taken');
    expect(b.result.messages.map((m) => m.state)).toEqual(['talk', 'talk', 'talk', 'talk', 'wrap_up']);
  });

  it("a state's own budget moves the run on from that state after its turns", async () => {
    const sop = loopSop(undefined);
    sop.states.talk!.budget = { turns: 3, on_exhausted: 'wrap_up' };
    const { result, events } = await run(sop);
    expect(result.status).toBe('finished');
    expect(result.messages.filter((m) => m.state === 'talk')).toHaveLength(3);
    expect(events.find((e) => e.type === 'state_entered' && e.state === 'wrap_up')).toMatchObject({
      reason: 'budget',
      from: 'talk',
      turn: 3,
    });
  });

  it('a turn refused by the budget is not counted, and no call is made past it', async () => {
    const llm = new ScriptedLlm();
    const { result } = await run(loopSop(undefined), { llm, budget: { tokens: 400 } });
    expect(result.status).toBe('budget');
    expect(result.turns).toBe(result.messages.length);
    expect(llm.calls.length).toBe(result.usage.calls);
  });

  it('--budget-usd counts the prices of the calls; an unpriced run says USD budgets are not checked', async () => {
    const sop = { ...loopSop(undefined), llm: { model: 'gpt-4o' } } as Sop;
    const { result } = await run(sop, { budget: { usd: 0.01 }, pricing: true });
    expect(result.status).toBe('budget');
    expect(result.budget).toMatch(/^--budget-usd 0\.01: \$0\.0\d+ of \$0\.01 spent, the next call costs about \$0\.0\d+$/);
    expect(result.usage.cost).toBeLessThanOrEqual(0.01 + 0.0002 /* one reply's completion at $10/M */);
    expect(result.usage.cost).toBeGreaterThan(0.009);
    // a model only the SOP's llm.pricing prices: its calls are estimated and counted at that price
    const own = { ...loopSop(undefined), llm: { model: 'house-model', pricing: { input: 2.5, output: 10 } } } as Sop;
    const house = await run(own, { budget: { usd: 0.01 }, pricing: true });
    expect(house.result.status).toBe('budget');
    expect(house.events.some((e) => e.type === 'warning' && /has no price/.test(e.message))).toBe(false);
    expect(house.result.usage.cost).toBeGreaterThan(0.009);
    expect(house.result.usage.cost).toBeLessThanOrEqual(0.01 + 0.0002);
    const mock = await run(loopSop({ usd: 0.001, turns: 3 }));
    expect(mock.events.some((e) => e.type === 'warning' && /not priced \(the mock\): USD budgets are not checked/.test(e.message))).toBe(
      true,
    );
    expect(mock.result.budget).toBe("the SOP's budget: 3 of 3 turns taken");
  });

  it('a sub-flow draws on its parent budget: it stops there, and the parent stops at its next call', async () => {
    const dir = tempDir('sop-budget-sub-');
    const child = {
      name: 'child',
      environment: { summary: { enabled: false } },
      agents: { Worker: { roles: { work: 'R' } } },
      root: 'work',
      states: {
        work: {
          roles: ['R'],
          commands: { note: { executor: 'memory', settings: { op: 'append', file: 'scratch' } }, finish: { executor: 'finish' } },
          controller: { max_turns: 50 },
          next_states: { 1: 'end' },
        },
        end: { final: true },
      },
      memory: { scratch: '' },
    };
    const parent = {
      name: 'parent',
      environment: { summary: { enabled: false } },
      agents: { Boss: { roles: { boss: 'R' } } },
      root: 'boss',
      budget: { tokens: 1500 },
      states: {
        boss: {
          roles: ['R'],
          commands: { delegate: { executor: 'sop', settings: { file: 'child.sop.json' } }, finish: { executor: 'finish' } },
          next_states: { 1: 'end' },
        },
        end: { final: true },
      },
    };
    writeFileSync(join(dir, 'child.sop.json'), JSON.stringify(child));
    writeFileSync(join(dir, 'parent.sop.json'), JSON.stringify(parent));
    const file = join(dir, 'parent.sop.json');
    const { sop } = loadSopFile(file);
    const cmd = (command: string, args: Record<string, string>) => JSON.stringify({ command, command_args: args });
    // the boss delegates, the worker takes notes forever
    const llm = new MeasuredLlm({
      agent: [cmd('delegate', {})],
      fallback: () => cmd('note', { content: 'a note of some length to spend tokens '.repeat(3) }),
    });
    const events: RunEvent[] = [];
    const result = await new Run({ sop, file, llm, actions: { runDir: join(dir, 'run') }, listeners: [(e) => events.push(e)] }).run();
    const sub = events.find((e) => e.type === 'subflow' && e.event.type === 'run_finished');
    expect(sub?.type === 'subflow' && sub.event.type === 'run_finished' && sub.event.status).toBe('budget');
    expect(result.status).toBe('budget');
    expect(result.budget).toMatch(/^the SOP's budget: \d+ of 1500 tokens used/);
    // the parent's usage includes the sub-flow's calls, and stays within one call of the budget
    expect(tokensOf(result.usage)).toBeGreaterThan(1000);
    expect(tokensOf(result.usage)).toBeLessThanOrEqual(1500 + 60);
  });

  it('validate names an on_exhausted state that does not exist', () => {
    const sop = loopSop({ tokens: 10, on_exhausted: 'nowhere' });
    const errors = graphDiagnostics(sop).filter((d) => d.severity === 'error');
    expect(errors.map((d) => d.message)).toContain('budget.on_exhausted "nowhere" is not defined in "states"');
  });
});
