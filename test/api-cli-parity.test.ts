// The CLI is a pure client of the API: `sop run` and runSop make the same choices behind startRun
// (src/api/start.ts). An API run gets the CLI's run-wide retry budget, shared by every server the
// SOP names, and fails with the same status and message. The LLM servers are OpenAI-compatible
// listeners on 127.0.0.1 that fail four requests in five (each call succeeds on its fifth
// attempt, after four retries) or every request.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runCli } from './helpers/cli.js';
import { startOpenAiServer, type Fault, type TestServer } from './helpers/openai-server.js';
import { runSop } from '../src/index.js';

const KEY = 'sk-test-parity';
const busy: Fault = { kind: 'status', status: 503, headers: { 'retry-after-ms': '0' } };
let root: string;
let config: string;
const servers: TestServer[] = [];

beforeAll(() => {
  requireBuiltCli();
  root = mkdtempSync(join(tmpdir(), 'sop-parity-'));
  config = join(root, 'config'); // no allow file of the user's
  mkdirSync(config);
  process.env.OPENAI_API_KEY = KEY;
  process.env.SOP_CONFIG_DIR = config;
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(root, { recursive: true, force: true });
});

async function server(fault: (i: number) => Fault | undefined): Promise<TestServer> {
  const s = await startOpenAiServer({ reply: () => 'Fine.', fault });
  servers.push(s);
  return s;
}

/** Ann talks to the SOP's server, Bo to his own (his llm block names it): 40 turns at most. */
function sopFile(name: string, ann: string, bo: string): string {
  const sop = {
    name,
    llm: { model: 'm', base_url: ann },
    environment: { summary: { enabled: false } },
    agents: { Ann: { roles: { talk: 'First' } }, Bo: { roles: { talk: 'Second' }, llm: { base_url: bo } } },
    root: 'talk',
    states: {
      talk: {
        roles: ['First', 'Second'],
        components: { First: { task: 'Open.' }, Second: { task: 'Answer.' } },
        controller: { type: 'order', max_turns: 40 },
        next_states: { '1': 'end' },
      },
      end: { final: true },
    },
  };
  const file = join(root, `${name}.sop.json`);
  writeFileSync(file, JSON.stringify(sop));
  return file;
}

interface Outcome {
  status: string;
  turns: number;
  error: string;
  requests: number;
}

/** The same run through runSop and through `sop run`, each against fresh servers. */
async function both(fault: (i: number) => Fault | undefined): Promise<{ api: Outcome; cli: Outcome }> {
  const run = async (via: 'api' | 'cli'): Promise<Outcome> => {
    const [a, b] = [await server(fault), await server(fault)];
    const file = sopFile(`parity-${via}`, a.url, b.url);
    const count = () => a.requests.length + b.requests.length;
    if (via === 'api') {
      const r = await runSop(file, { allowBaseUrl: [a.url, b.url], out: join(root, 'api') }).result;
      return { status: r.status, turns: r.turns, error: r.error?.message ?? '', requests: count() };
    }
    const r = await runCli(['run', file, '--allow-base-url', a.url, '--allow-base-url', b.url, '--out', join(root, 'cli'), '--quiet'], {
      OPENAI_API_KEY: KEY,
      SOP_CONFIG_DIR: config,
      OPENAI_BASE_URL: undefined,
    });
    const line = /^Interrupted after (\d+) turns? \((.*)\); /m.exec(r.stderr);
    expect(line, r.stderr).not.toBeNull();
    expect(r.status).toBe(75); // stopped for the LLM (130 is Ctrl-C)
    return { status: 'interrupted', turns: Number(line![1]), error: line![2]!, requests: count() };
  };
  return { api: await run('api'), cli: await run('cli') };
}

describe('runSop and sop run: one retry budget for the whole run', () => {
  it('shares the run-wide budget (50 retries, and one per two calls) between the servers of the SOP: both stop at the same call', async () => {
    const { api, cli } = await both((i) => (i % 5 === 4 ? undefined : busy));
    // each call is answered at its 5th attempt: 14 calls spend 56 retries of the 50 + 14/2 = 57;
    // the 15th gets 1 more and stops: 14 * 5 + 2 requests, whichever server each went to
    expect(cli).toEqual({
      status: 'interrupted',
      turns: 8,
      error: expect.stringMatching(/HTTP 503.*retry budget \(57\) is spent/),
      requests: 72,
    });
    expect(api).toEqual(cli);
  }, 60_000);

  it('a server that fails every request: the same status, message and number of attempts', async () => {
    const { api, cli } = await both(() => busy);
    expect(cli).toEqual({
      status: 'interrupted',
      turns: 1,
      error: expect.stringMatching(/HTTP 503.*gave up after 5 attempts/),
      requests: 5,
    });
    expect(api).toEqual(cli);
  }, 60_000);
});
