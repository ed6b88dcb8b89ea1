// Issue 26 acceptance (batch mode): `sop run --llm-mode batch` against the fake Batch API is
// SIGKILLed while it waits for its batch; `sop resume` then polls the batch it had submitted (its
// id is journaled) and submits no second one for that step, and the run finishes.
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatchServer, type FakeBatchServer } from './helpers/batch-server.js';
import { AGENTS, STEPS, writePopulationSop, inMessages } from './helpers/population-sop.js';
import { requireBuiltCli, runCliKillable, spawnCli } from './helpers/cli.js';
import type { ChatRequestBody } from './helpers/openai-server.js';
import { until } from './helpers/until.js';

const ENV = { ...process.env, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: undefined } as NodeJS.ProcessEnv;
let dir: string;
let server: FakeBatchServer | undefined;

const reply = (b: ChatRequestBody) =>
  JSON.stringify({ command: 'post', command_args: { text: `${inMessages(b.messages, /You are (\w+)\./)} says hello` } });

type Line = { type: string; id?: string; status?: string; step?: number; kind?: string; key?: string };
const journal = (runDir: string): Line[] =>
  existsSync(join(runDir, 'journal.jsonl'))
    ? readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter((l) => l.trim())
        .flatMap((l) => {
          try {
            return [JSON.parse(l) as Line];
          } catch {
            return []; // a line cut by the kill
          }
        })
    : [];

beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-batch-resume-'));
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a run killed while it waits for its batch', () => {
  it('resumes waiting for the same batch, and submits no second one for that step', async () => {
    const sopFile = writePopulationSop(dir);
    server = await startBatchServer({ reply, hold: true });
    const out = join(dir, 'runs');
    let kill: (() => void) | undefined;
    const args = [
      'run',
      sopFile,
      '--llm',
      'openai',
      '--base-url',
      server.url,
      '--llm-mode',
      'batch',
      '--batch-poll',
      '0.1',
      '--out',
      out,
      '--quiet',
    ];
    const first = runCliKillable(args, ENV, (k) => (kill = k));
    // killed once the journal holds the submitted batch and the server was asked about it
    let runDir = '';
    const waiting = await until(
      () => {
        if (!runDir && existsSync(out) && readdirSync(out).length > 0) runDir = join(out, readdirSync(out)[0]!);
        return runDir !== '' && journal(runDir).some((l) => l.type === 'batch' && l.status === 'in_progress');
      },
      { timeoutMs: 30_000 },
    );
    expect(waiting).toBe(true);
    kill!();
    const killed = await first;
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    expect(server.created).toHaveLength(1);
    const submitted = journal(runDir).find((l) => l.type === 'batch' && l.status === 'submitted')!;
    expect(submitted.id).toBe(server.created[0]!.id);

    server.release();
    const resumed = await runCliKillable(['resume', runDir, '--quiet'], ENV);
    expect(resumed.code, resumed.stderr).toBe(0);
    // step 1's batch polled again (journaled as resumed), step 2's submitted: one batch a step in all
    expect(server.created.map((b) => (b.metadata as { sop_step: string }).sop_step)).toEqual(['feed#1:1', 'feed#1:2']);
    const after = journal(runDir);
    expect(after.some((l) => l.type === 'batch' && l.status === 'resumed' && l.id === submitted.id)).toBe(true);
    expect(after.filter((l) => l.type === 'population_step').map((l) => l.step)).toEqual([1, 2]);
    expect(after.at(-1)).toMatchObject({ type: 'run_finished', status: 'finished' });
    // the calls of the batch waited for are not counted lost (they were answered once, by it)
    const usage = JSON.parse(readFileSync(join(runDir, 'usage.json'), 'utf8')) as { calls: number; lost?: unknown; cost?: number };
    expect(usage.lost).toBeUndefined();
    expect(usage.calls).toBe(AGENTS * STEPS);
    expect(usage.cost).toBeCloseTo(AGENTS * STEPS * ((1000 * 0.075 + 100 * 0.3) / 1e6), 10); // gpt-4o-mini at batch prices
  });

  it('stops waiting at Ctrl-C, as interrupted, and the resume waits for the same batch', async () => {
    const own = mkdtempSync(join(dir, 'sigint-'));
    const sopFile = writePopulationSop(own);
    const held = await startBatchServer({ reply, hold: true });
    const out = join(own, 'runs');
    try {
      const child = spawnCli(
        ['run', sopFile, '--llm', 'openai', '--base-url', held.url, '--llm-mode', 'batch', '--batch-poll', '0.1', '--out', out, '--quiet'],
        { stdio: ['ignore', 'ignore', 'pipe'], env: ENV },
      );
      let stderr = '';
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
      let runDir = '';
      const waiting = await until(
        () => {
          if (!runDir && existsSync(out) && readdirSync(out).length > 0) runDir = join(out, readdirSync(out)[0]!);
          return runDir !== '' && journal(runDir).some((l) => l.type === 'batch' && l.status === 'in_progress');
        },
        { timeoutMs: 30_000 },
      );
      expect(waiting).toBe(true);
      child.kill('SIGINT');
      expect(await exited, stderr).toBe(130); // interrupted (resumable)
      expect(stderr).toContain('stopped by Ctrl-C while waiting for batch');
      expect(journal(runDir).at(-1)).toMatchObject({ type: 'run_finished', status: 'interrupted' });
      held.release();
      const resumed = await runCliKillable(['resume', runDir, '--quiet'], ENV);
      expect(resumed.code, resumed.stderr).toBe(0);
      expect(held.created).toHaveLength(STEPS);
    } finally {
      await held.close();
    }
  });
});
