// Issue #26's acceptance for adaptive throughput: against a local server that answers 429 above
// 300 requests in flight (with retry-after), a population step of 2,000 agents at --concurrency
// 2000 finishes with every agent's action made, none failed; the run's journal shows the limit of
// calls at once (the `concurrency` events) settling below 300.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inMessages } from './helpers/population-sop.js';
import { loadSop, runSop, type RunEvent } from '../src/index.js';
import { startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';

const AGENTS = 2000;
const LIMIT = 300;
let dir: string;
let server: TestServer;

/** Each agent posts a line with its id, read from its persona. */
function reply(b: ChatRequestBody): string {
  const id = inMessages(b.messages, /You are agent (\w+),/) ?? 'someone';
  return JSON.stringify({ command: 'post', command_args: { text: `${id} says hello` } });
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sop-rate-limit-'));
  server = await startOpenAiServer({ reply, latencyMs: 1000, maxInFlight: { limit: LIMIT, retryAfterMs: 100 } });
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sop = {
  name: 'crowd',
  llm: { model: 'test-model' },
  agents: {},
  root: 'feed',
  states: {
    feed: {
      environment_prompt: 'You use a small social network.',
      population: {
        source: { generate: { n: AGENTS, seed: 3, columns: { mood: { choice: ['calm', 'busy'] } } } },
        persona: 'You are agent {{id}}, {{mood}} today.',
      },
      world: { type: 'social', params: { feed_size: 3 } },
      actions: ['post', 'idle'],
      activation: { probability: 1 },
      cognition: { tier: 'per_agent' },
      max_steps: 1,
      next_states: { '1': 'end' },
    },
    end: { final: true },
  },
};

describe('a 2,000-agent step against a server that answers 429 above 300 calls in flight', () => {
  it('finishes with every agent acting and no failed action; the logged limit settles below 300', async () => {
    const file = join(dir, 'crowd.sop.json');
    writeFileSync(file, JSON.stringify(sop));
    const warnings: string[] = [];
    const handle = runSop(loadSop(file), {
      llm: 'openai',
      baseUrl: server.url,
      concurrency: AGENTS,
      out: join(dir, 'runs'),
      listeners: [(e) => void (e.type === 'warning' && warnings.push(e.message))],
    });
    const result = await handle.result;
    expect(result.status, result.error?.message).toBe('finished');

    const runDir = join(dir, 'runs', readdirSync(join(dir, 'runs'))[0]!);
    const journal = readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as RunEvent);
    const step = journal.find((e): e is Extract<RunEvent, { type: 'population_step' }> => e.type === 'population_step')!;
    expect(step.active).toBe(AGENTS);
    expect(step.actions).toHaveLength(AGENTS);
    expect(step.actions.filter((a) => a.name !== 'post' || !a.ok)).toEqual([]);
    expect(new Set(step.actions.map((a) => a.agent)).size).toBe(AGENTS);

    const changes = journal.filter((e): e is Extract<RunEvent, { type: 'concurrency' }> => e.type === 'concurrency');
    const trace = changes.map((c) => `${c.previous}->${c.limit} (${c.reason})`).join(', ');
    console.log(
      `rate limit ${LIMIT}: ${server.rejected} calls answered 429, peak ${server.peakInFlight} in flight, ${warnings.length} warnings; limit: ${trace}`,
    );
    // the server did refuse calls, and every one was retried to an answer
    expect(server.rejected).toBeGreaterThan(0);
    const answered = journal.filter((e) => e.type === 'llm_call').length;
    expect(answered).toBe(AGENTS);
    expect(changes.some((c) => c.reason === '429')).toBe(true);
    expect(changes.length).toBeLessThan(60); // a log line per change, not per call
    expect(warnings.length).toBeLessThan(10); // 429 retries are warned once every 5 s
    expect(changes.at(-1)!.limit).toBeLessThan(LIMIT);
    expect(server.peakInFlight).toBeLessThanOrEqual(LIMIT);
  }, 60_000);
});
