// sop check: dry runs with the mock over seeds tell a SOP's expected calls, tokens and cost, and
// warn about states left only at max_turns, prompts over a model's context, summaries that never fire.
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSop } from '../src/api/cost-check.js';
import { loadPricing } from '../src/core/llm/pricing.js';
import type { Sop } from '../src/format/sop/types.js';
import { tempDir } from './helpers/executor-context.js';
import { spawnCli } from './helpers/cli.js';

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawnCli([...args], { cwd: tempDir('sop-check-cli-'), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

function sop(extra: { model?: string; prompt?: string; every?: number; commands?: boolean }): Sop {
  return {
    name: 'checked',
    llm: { model: extra.model ?? 'gpt-4o-mini' },
    environment: { summary: { every: extra.every ?? 2 } },
    agents: { Ada: { roles: { work: 'Pro' } }, Ben: { roles: { work: 'Con' } } },
    root: 'work',
    ...(extra.commands ? { memory: { notes: '' } } : {}),
    states: {
      work: {
        environment_prompt: extra.prompt ?? 'Work.',
        roles: ['Pro', 'Con'],
        controller: { type: 'order', max_turns: 4 },
        ...(extra.commands ? { commands: { note: { executor: 'memory', settings: { op: 'append', file: 'notes' } } } } : {}),
        next_states: { '1': 'end' },
      },
      end: { final: true },
    },
  };
}

const check = (s: Sop, runs = 3) => checkSop({ sop: s, file: '<memory>', runs, pricing: loadPricing() });

describe('sop check', () => {
  it('prints the debate’s calls per purpose, a token estimate and a $ cost', async () => {
    const r = await cli(['check', resolve('examples/debate/debate.sop.json'), '--runs', '3']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^sop check debate: 3 dry runs with the mock \(seeds 1-3\)$/m);
    expect(r.stdout).toMatch(/^ {2}agent +\d+ +\d+ +\d+$/m);
    expect(r.stdout).toMatch(/^ {2}judge +\d+ +\d+ +\d+$/m);
    expect(r.stdout).toMatch(/^ {2}prompt +\d+ +\d+ +\d+$/m);
    expect(r.stdout).toMatch(/^ {2}gpt-4o-mini +\$0\.\d{4} +\$0\.\d{4} +\$0\.\d{4}$/m);
    expect(r.stdout).toMatch(/^Estimate: about \d+ tokens and \$0\.\d{4} per run/m);
    const json = await cli(['check', resolve('examples/debate/debate.sop.json'), '--runs', '2', '--json']);
    const report = JSON.parse(json.stdout) as Awaited<ReturnType<typeof checkSop>>;
    expect(report.runs).toBe(2);
    expect(report.calls.agent!.median).toBeGreaterThan(0);
    expect(report.cost!.median).toBeGreaterThan(0);
    // the cost is the tokens at gpt-4o-mini's prices (0.15 and 0.6 USD per million), within rounding
    const expected = (report.prompt_tokens.median * 0.15 + report.completion_tokens.median * 0.6) / 1e6;
    expect(Math.abs(report.cost!.median - expected)).toBeLessThan(expected * 0.05);
    const bad = await cli(['check', resolve('examples/debate/debate.sop.json'), '--runs', '0']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr.trim().split('\n')).toEqual(['error: --runs must be a whole number from 1 to 1000 (got 0)']);
  }, 30_000);

  it('counts calls and tokens for every seed, with no warnings for a plain SOP', async () => {
    const r = await check(sop({}), 4);
    expect(r.statuses).toEqual({ finished: 4 });
    expect(r.calls.agent!.min).toBeGreaterThan(0);
    expect(r.calls.summary!.min).toBeGreaterThan(0);
    expect(r.prompt_tokens.min).toBeLessThanOrEqual(r.prompt_tokens.median);
    expect(r.prompt_tokens.median).toBeLessThanOrEqual(r.prompt_tokens.max);
    expect(r.warnings).toEqual([]);
  });

  it('warns about a state left only at max_turns, a summary that never fires, and an unpriced model', async () => {
    const r = await check(sop({ commands: true, every: 50, model: 'house-model' }));
    expect(r.warnings).toContain('state "work" ended only at its controller.max_turns in 3 dry runs (3 visits); nothing else moves it on');
    expect(r.warnings.some((w) => w.startsWith('the running summary never fired in 3 dry runs (every 50 messages'))).toBe(true);
    expect(r.cost_by_model['house-model']).toBe('unknown');
    expect(r.cost).toBeUndefined();
  });

  it('warns about a prompt larger than the model’s context', async () => {
    const r = await check(sop({ model: 'gpt-4', prompt: 'word '.repeat(8000) }), 1);
    expect(r.warnings.some((w) => /^a prompt of \d+ tokens \(state "work"\) exceeds the 8192-token context of gpt-4$/.test(w))).toBe(true);
  });

  it('reads a SOP file', async () => {
    const dir = tempDir('sop-check-file-');
    const file = join(dir, 'x.sop.json');
    writeFileSync(file, JSON.stringify(sop({})));
    const r = await cli(['check', file, '--runs', '1']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('sop check checked: 1 dry run with the mock (seed 1)');
    // a price of the SOP's own: the cost table says where its prices come from
    const priced = join(dir, 'priced.sop.json');
    writeFileSync(
      priced,
      JSON.stringify({ ...sop({ model: 'house-model' }), llm: { model: 'house-model', pricing: { input: 1, output: 2 } } }),
    );
    const p = await cli(['check', priced, '--runs', '1']);
    expect(p.code, p.stderr).toBe(0);
    expect(p.stdout).toMatch(/^Cost per run \(the SOP's llm\.pricing, else pricing\.json as of [\d-]+\) +min/m);
    expect(p.stdout).toMatch(/^ {2}house-model +\$0\.\d{4}/m);
  }, 30_000);

  it('sends no embedding request and loads no model: an openai or transformers embedder is replaced by the local one, with a warning', async () => {
    const requests: string[] = [];
    const server = createServer((req, res) => {
      requests.push(`${req.method} ${req.url}`);
      res.writeHead(500).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    try {
      const dir = tempDir('sop-check-embedder-');
      for (const embedder of ['openai:text-embedding-3-small', 'transformers:Xenova/no-such-model-for-sop-check']) {
        const file = join(dir, 'embeds.sop.json');
        writeFileSync(file, JSON.stringify({ ...sop({}), environment: { embedder, top_k: 2 } }));
        const child = spawnCli(['check', file, '--runs', '2'], {
          cwd: dir,
          env: { ...process.env, OPENAI_BASE_URL: url, OPENAI_API_KEY: 'sk-check-CANARY', HF_HUB_OFFLINE: '1' },
        });
        let stdout = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        const code = await new Promise<number | null>((r) => child.on('close', r));
        expect(code, stdout).toBe(0);
        expect(stdout).toContain('Outcome: 2 finished');
        expect(stdout).toMatch(/^Estimate: about \d+ tokens/m);
        expect(stdout).toContain(
          `warning: sop check sends no embedding request and loads no model: the dry runs embedded with the local embedder in place of ${embedder}`,
        );
      }
      expect(requests).toEqual([]);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  }, 60_000);

  it('dry runs that all fail: exit code 1, no estimate, the first run folder kept for its log, no summary warning', async () => {
    const dir = tempDir('sop-check-file-');
    const file = join(dir, 'broken.sop.json');
    // sop check starts no MCP server, so a state granted only `x/*` offers no command: every dry run fails at its first turn
    writeFileSync(
      file,
      JSON.stringify({
        ...sop({}),
        mcp_servers: { x: { command: 'no-such-command-for-sop-check' } },
        states: { ...sop({}).states, work: { ...sop({}).states.work, tools: ['x/*'] } },
      }),
    );
    const r = await cli(['check', file, '--runs', '2']);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain('Outcome: 2 failed');
    expect(r.stdout).toContain('Estimate: none, every dry run failed (see the warning below).');
    expect(r.stdout).not.toMatch(/Estimate: about|LLM calls per run|summary never fired/);
    const kept = /its folder is kept: (\S+)\)$/m.exec(r.stdout)?.[1];
    expect(kept, r.stdout).toBeDefined();
    expect(existsSync(kept!)).toBe(true);
    expect(r.stdout).toContain('gave no valid command');
    rmSync(kept!, { recursive: true, force: true });
    const json = await cli(['check', file, '--runs', '1', '--json']);
    expect(json.code).toBe(1);
    const report = JSON.parse(json.stdout) as Awaited<ReturnType<typeof checkSop>>;
    expect(report.statuses).toEqual({ failed: 1 });
    const keptToo = /its folder is kept: (\S+)\)$/.exec(report.warnings.find((w) => w.includes('did not finish')) ?? '')?.[1];
    expect(existsSync(keptToo!)).toBe(true);
    rmSync(keptToo!, { recursive: true, force: true });
  }, 30_000);

  it('bad options: one error line; an input the SOP does not declare is refused; an option given twice takes the last', async () => {
    const debate = resolve('examples/debate/debate.sop.json');
    for (const v of ['0', 'x']) {
      const bad = await cli(['check', debate, '--max-turns', v]);
      expect(bad.code).toBe(1);
      expect(bad.stderr.trim().split('\n')).toEqual([
        `error: --max-turns must be a whole number of turns, at least 1 (got ${v === 'x' ? 'NaN' : v})`,
      ]);
    }
    const typo = await cli(['check', debate, '--runs', '1', '--input', 'tpoic=cars']);
    expect(typo.code).toBe(1);
    expect(typo.stderr).toBe('error: debate has no input "tpoic"; did you mean "topic"? (its inputs: topic)\n');
    const twice = await cli(['check', debate, '--runs', '1', '--pricing', 'missing.json', '--pricing', resolve('pricing.json')]);
    expect(twice.stderr).toBe('');
    expect(twice.code).toBe(0);
    expect(twice.stdout).toContain('1 dry run with the mock (seed 1)');
    expect(twice.stdout).toContain(`Cost per run (${resolve('pricing.json')}, else pricing.json as of`);
  }, 30_000);
});
