// A paid LLM call in flight when the run is SIGKILLed: its `llm_call_started` line reached the
// journal before the request went out, its reply never did. `sop resume` counts it in usage
// (calls, estimated prompt tokens, cost: `lost`), so usage.json agrees with what the server
// was asked (and paid) for.
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runCliKillable, spawnCliAsync } from './helpers/cli.js';
import { startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';
import { lostCalls } from '../src/features/journal/lost-calls.js';
import type { RunEvent } from '../src/core/runtime/events.js';

const DEBATE = join(import.meta.dirname, '..', 'examples', 'debate', 'debate.sop.json');
const ENV = { ...process.env, OPENAI_API_KEY: 'test-key', OPENAI_BASE_URL: undefined } as NodeJS.ProcessEnv;

function debateReply(b: ChatRequestBody): string {
  const system = b.messages[0]?.content ?? '';
  if (/choose who speaks next/i.test(system)) return '<end>Negative</end>';
  if (/running summary/i.test(system)) return 'A short summary.';
  return '<decision>0</decision><end>0</end> A point, briefly made.';
}

const cli = (args: string[], onSpawn?: (kill: () => void) => void) => runCliKillable(args, ENV, onSpawn);

const journal = (runDir: string): RunEvent[] =>
  readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as RunEvent);

let dir: string;
let server: TestServer | undefined;
beforeAll(() => {
  requireBuiltCli();
  dir = mkdtempSync(join(tmpdir(), 'sop-lost-calls-'));
});
afterAll(async () => {
  await server?.close();
});

describe('a call in flight at a kill', () => {
  it('is counted in usage by the resume: calls, prompt tokens and cost agree with what the server was asked', async () => {
    const KILL_AT = 3; // the fourth chat request: its answer never comes before the kill
    let kill: (() => void) | undefined;
    server = await startOpenAiServer({
      reply: debateReply,
      fault: (i) => (i === KILL_AT ? { kind: 'delay', ms: 60_000 } : undefined),
      onRequest: (i) => {
        if (i === KILL_AT) kill?.(); // readiness: the request has reached the server
      },
    });
    const out = join(dir, 'runs');
    const killed = await cli(
      ['run', DEBATE, '--llm', 'openai', '--base-url', server.url, '--max-turns', '4', '--quiet', '--out', out],
      (k) => (kill = k),
    );
    expect(killed.signal, killed.stderr).toBe('SIGKILL');
    const runDir = join(out, readdirSync(out)[0]!);

    // The journal holds the call as started, with no reply.
    const events = journal(runDir);
    const lost = lostCalls(events);
    expect(lost).toHaveLength(1);
    expect(lost[0]!.prompt_tokens).toBeGreaterThan(0);
    expect(lost[0]!.cost_usd).toBeGreaterThan(0); // the example's model has a price in pricing.json

    const resumed = await cli(['resume', runDir, '--quiet']);
    expect(resumed.code, resumed.stderr).toBe(0);
    const chats = server.requests.filter((r) => r.path.endsWith('/chat/completions')).length;
    const usage = JSON.parse(readFileSync(join(runDir, 'usage.json'), 'utf8')) as {
      calls: number;
      prompt_tokens: number;
      cost?: number;
      lost?: { calls: number; prompt_tokens: number; cost?: number };
    };
    expect(usage.lost).toEqual({ calls: 1, prompt_tokens: lost[0]!.prompt_tokens, cost: lost[0]!.cost_usd });
    // every request the server was sent is counted, the lost one included
    expect(usage.calls).toBe(chats);
    const byPurpose = Object.values((usage as unknown as { by_purpose: Record<string, { calls: number }> }).by_purpose);
    expect(byPurpose.reduce((n, b) => n + b.calls, 0)).toBe(chats);
    expect(usage.cost).toBeGreaterThan(lost[0]!.cost_usd!);
    // sop runs shows the same cost
    const runs = await spawnCliAsync(['runs', '--out', out, '--json'], { env: ENV });
    expect(runs.status, runs.stderr).toBe(0);
    expect((JSON.parse(runs.stdout.split('\n')[0]!) as { cost_usd?: number }).cost_usd).toBe(usage.cost);
  }, 60_000);

  it('is not counted when the attempt ended on its own (run_finished), nor when its reply came in a later line', () => {
    const started = (effect: string): RunEvent => ({
      type: 'llm_call_started',
      purpose: 'agent',
      state: 's',
      agent: 'A',
      turn: 1,
      model: 'm',
      prompt_tokens: 10,
      effect,
    });
    const reply = { type: 'llm_call', effect: '0.0' } as unknown as RunEvent;
    const finished = { type: 'run_finished' } as unknown as RunEvent;
    const resumed = { type: 'resumed', from_turn: 0 } as unknown as RunEvent;
    expect(lostCalls([started('0.0'), reply])).toHaveLength(0);
    expect(lostCalls([started('0.0'), finished])).toHaveLength(0);
    // killed twice: both attempts lost their call, the same key each time
    expect(lostCalls([started('0.0'), resumed, started('0.0')])).toHaveLength(2);
    // the second attempt got the reply the first one lost
    expect(lostCalls([started('0.0'), resumed, started('0.0'), reply])).toHaveLength(1);
  });
});
