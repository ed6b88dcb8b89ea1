// A population run SIGKILLed in the middle of a step, then `sop resume`: the run finishes with
// the same steps and metrics as an uninterrupted run, and only the calls of that step that had not
// finished are made again (each call's reply is journaled as it comes, under a key naming its step
// and agent).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writePopulationSop, inMessages } from './helpers/population-sop.js';
import { requireBuiltCli, runCliKillable, spawnCliAsync } from './helpers/cli.js';
import { startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';

const ENV = { ...process.env, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: undefined } as NodeJS.ProcessEnv;
const AGENTS = 24;
const servers: TestServer[] = [];
let dir: string;
let sopFile: string;

/** Each agent posts a line with its name (read from its persona), so a reply depends only on who asks. */
function reply(b: ChatRequestBody): string {
  const name = inMessages(b.messages, /You are (\w+)\./) ?? 'someone';
  return JSON.stringify({ command: 'post', command_args: { text: `${name} says hello` } });
}

const cli = (args: string[], onSpawn?: (kill: () => void) => void) => runCliKillable(args, ENV, onSpawn);

type Line = { type: string; turn?: number; step?: number; metrics?: unknown; actions?: unknown; effect?: string };
const journal = (runDir: string): Line[] =>
  readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Line);
const onlyDir = (out: string) => join(out, readdirSync(out)[0]!);

beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-population-resume-'));
  sopFile = writePopulationSop(dir, { agents: AGENTS, steps: 3 });
});
afterAll(async () => {
  for (const s of servers) await s.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a population step killed half-way', () => {
  it('resumes with only its unfinished calls made again, to the same metrics as an uninterrupted run', async () => {
    // the uninterrupted run
    const plain = await startOpenAiServer({ reply, latencyMs: 150 });
    servers.push(plain);
    const whole = await cli([
      'run',
      sopFile,
      '--llm',
      'openai',
      '--base-url',
      plain.url,
      '--concurrency',
      '4',
      '--out',
      join(dir, 'whole'),
      '--quiet',
    ]);
    expect(whole.code, whole.stderr).toBe(0);
    const reference = journal(onlyDir(join(dir, 'whole'))).filter((l) => l.type === 'population_step');
    expect(reference).toHaveLength(3);

    // killed when the 12th request of step 2 reaches the server
    const KILL_AT = AGENTS + 11;
    let kill: (() => void) | undefined;
    const server = await startOpenAiServer({
      reply,
      latencyMs: 150,
      onRequest: (i) => {
        if (i === KILL_AT) kill?.();
      },
    });
    servers.push(server);
    const out = join(dir, 'killed');
    const first = await cli(
      ['run', sopFile, '--llm', 'openai', '--base-url', server.url, '--concurrency', '4', '--out', out, '--quiet'],
      (k) => (kill = k),
    );
    expect(first.signal, first.stderr).toBe('SIGKILL');
    const runDir = onlyDir(out);
    const before = journal(runDir);
    expect(before.filter((l) => l.type === 'population_step').map((l) => l.step)).toEqual([1]);
    const doneInStep2 = before.filter((l) => l.type === 'llm_call' && l.turn === 2).length;
    expect(doneInStep2).toBeGreaterThan(0);
    expect(doneInStep2).toBeLessThan(AGENTS);

    const asked = server.requests.length;
    const resumed = await cli(['resume', runDir, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const madeAgain = server.requests.length - asked;
    console.log(
      `population resume: step 2 had ${doneInStep2} of ${AGENTS} calls journaled at the kill; the resume made ${madeAgain} calls (${AGENTS - doneInStep2} for step 2, ${AGENTS} for step 3)`,
    );
    expect(madeAgain).toBe(AGENTS - doneInStep2 + AGENTS);
    const after = journal(runDir);
    const steps = after.filter((l) => l.type === 'population_step');
    expect(steps.slice(-3).map((l) => [l.step, l.metrics, l.actions])).toEqual(reference.map((l) => [l.step, l.metrics, l.actions]));
  });
});

describe('sop sweep of a population SOP', () => {
  it('runs the social-spread example for several seeds, in worker threads', async () => {
    const out = join(dir, 'sweep');
    const r = await cli([
      'sweep',
      'examples/social-spread/social-spread.sop.json',
      '--llm',
      'mock',
      '--seeds',
      '1-3',
      '--concurrency',
      '2',
      '--out',
      out,
    ]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('3 of 3 runs done, 0 failed');
    const results = readFileSync(join(out, 'results.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { status: string });
    expect(results.map((x) => x.status)).toEqual(['finished', 'finished', 'finished']);
  });
});

describe('the same seed and cassette at --concurrency 1 and 500', () => {
  it('give the same journal events and the same DuckDB tables', async () => {
    const cassette = join(dir, 'spread.cassette.json');
    const rec = await cli([
      'run',
      'examples/social-spread/social-spread.sop.json',
      '--llm',
      'mock',
      '--record',
      cassette,
      '--out',
      join(dir, 'rec'),
      '--quiet',
    ]);
    expect(rec.code, rec.stderr).toBe(0);
    const tables: string[] = [];
    const journals: string[] = [];
    for (const n of ['1', '500']) {
      const out = join(dir, `c${n}`);
      const r = await cli([
        'run',
        'examples/social-spread/social-spread.sop.json',
        '--llm',
        `replay:${cassette}`,
        '--concurrency',
        n,
        '--out',
        out,
        '--quiet',
      ]);
      expect(r.code, r.stderr).toBe(0);
      const runDir = onlyDir(out);
      journals.push(
        journal(runDir)
          .map((l) =>
            JSON.stringify(l, (k, v) => (['time', 'timestamp', 'ms', 'run_id', 'runId'].includes(k) ? undefined : (v as unknown))),
          )
          .join('\n'),
      );
      let dump = '';
      for (const table of ['agents', 'steps', 'actions', 'metrics', 'surveys']) {
        const q = await spawnCliAsync(['query', runDir, `select * from ${table} order by all`, '--csv'], { env: ENV });
        expect(q.status, q.stderr).toBe(0);
        dump += `${table}\n${q.stdout}`;
      }
      tables.push(dump);
    }
    expect(journals[1]).toBe(journals[0]);
    expect(tables[1]).toBe(tables[0]);
    expect(tables[0]).toContain('actions\n');
  });
});
