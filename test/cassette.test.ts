// Cassettes: replay in order with clear errors on a mismatch or an exhausted cassette, and
// `--record` through the CLI against the local server, replayed to an identical transcript.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayProvider, readCassette, type Cassette } from '../src/core/llm/cassette.js';
import { LlmError } from '../src/core/llm/types.js';
import { Run } from '../src/api/engine/run-with-features.js';
import { validateSopDocument } from '../src/api/loader/checked-load.js';
import { startOpenAiServer, type ChatRequestBody } from './helpers/openai-server.js';
import { spawnCli, spawnCliAsync, requireBuiltCli } from './helpers/cli.js';

const ROOT = join(import.meta.dirname, '..');
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sop-cassette-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Ann (Host) opens with an LLM call, Ben (Guest) answers; the judge decides after each turn.
const sop = validateSopDocument(
  {
    name: 'chat',
    root: 'talk',
    agents: { Ann: { roles: { talk: 'Host' } }, Ben: { roles: { talk: 'Guest' } } },
    states: { talk: { roles: ['Host', 'Guest'], next_states: { '0': 'talk', '1': 'end' } }, end: { final: true } },
  },
  'chat.sop.json',
).sop;

const cassette = (interactions: Cassette['interactions']): Cassette => ({ version: 1, source: 'hand-written', interactions });

async function replay(c: Cassette) {
  const llm = new ReplayProvider('test.cassette.json', c);
  const result = await new Run({ sop, file: 'chat.sop.json', llm, maxTurns: 10 }).run();
  return { result, llm };
}

describe('replay', () => {
  it('replays interactions in order', async () => {
    const { result, llm } = await replay(
      cassette([
        { purpose: 'agent', state: 'talk', agent: 'Ann', response: 'Ann: Welcome!' },
        { purpose: 'judge', response: '<end>0</end>' },
        { purpose: 'agent', agent: 'Ben', response: 'Thanks, glad to be here.' },
        { purpose: 'judge', state: 'talk', response: '<end>1</end>', usage: { promptTokens: 7, completionTokens: 3 } },
      ]),
    );
    expect(result).toMatchObject({ status: 'finished', finalState: 'end', turns: 2 });
    expect(result.messages.map((m) => [m.sender, m.content])).toEqual([
      ['Ann', 'Welcome!'],
      ['Ben', 'Thanks, glad to be here.'],
    ]);
    expect(llm.position).toBe(4);
    expect(result.usage.calls).toBe(4);
    expect(result.usage.by_purpose.judge?.prompt_tokens).toBeGreaterThanOrEqual(7);
  });

  it.each([
    [
      'purpose',
      { purpose: 'judge', response: '1' },
      /\/interactions\/0 is a judge call, but the run asked for an agent call by Ann in state "talk"/,
    ],
    [
      'agent',
      { purpose: 'agent', agent: 'Ben', response: 'x' },
      /\/interactions\/0 is an agent call by Ben, but the run asked for an agent call by Ann/,
    ],
    [
      'state',
      { purpose: 'agent', state: 'elsewhere', response: 'x' },
      /\/interactions\/0 is an agent call in state "elsewhere", but the run asked for an agent call by Ann in state "talk"/,
    ],
  ] as const)('a wrong %s fails with an error naming the interaction', async (_what, first, pattern) => {
    const { result } = await replay(cassette([first]));
    expect(result.status).toBe('failed');
    expect(result.error).toBeInstanceOf(LlmError);
    expect(result.error!.message).toContain('test.cassette.json');
    expect(result.error!.message).toMatch(pattern);
  });

  it('a mismatch later in the cassette names that index', async () => {
    const { result } = await replay(
      cassette([
        { purpose: 'agent', agent: 'Ann', response: 'hi' },
        { purpose: 'agent', agent: 'Ben', response: 'oops, judge expected' },
      ]),
    );
    expect(result.error!.message).toMatch(
      /\/interactions\/1 is an agent call by Ben, but the run asked for a judge call in state "talk" \(turn 1\)/,
    );
  });

  it('an exhausted cassette fails clearly', async () => {
    const { result } = await replay(
      cassette([
        { purpose: 'agent', agent: 'Ann', response: 'hi' },
        { purpose: 'judge', response: '0' },
      ]),
    );
    expect(result).toMatchObject({ status: 'failed', turns: 2 });
    expect(result.error!.message).toMatch(
      /ran out after 2 interactions; the run asked for an agent call by Ben in state "talk" \(turn 2\)/,
    );
    expect(result.messages).toHaveLength(1);
  });

  it('gives calls made at once the interaction recorded under their effect key, in any order', async () => {
    const llm = new ReplayProvider(
      'pop.json',
      cassette([
        { purpose: 'agent', state: 'feed', agent: 'a0', effect: '1.2:a0', response: 'from a0' },
        { purpose: 'agent', state: 'feed', agent: 'a1', effect: '1.2:a1', response: 'from a1' },
        { purpose: 'agent', state: 'feed', agent: 'a2', effect: '1.2:a2', response: 'from a2' },
        { purpose: 'summary', state: 'feed', response: 'after the step' },
      ]),
    );
    const call = (agent: string, effect?: string) => ({
      messages: [],
      model: 'm',
      meta: { purpose: 'agent' as const, state: 'feed', agent, turn: 2, ...(effect ? { effect } : {}) },
    });
    // a resumed step: a1's reply comes from the journal, a2 asks before a0
    llm.seek(0);
    expect((await llm.chat(call('a2', '1.2:a2'))).content).toBe('from a2');
    llm.reused(call('a1', '1.2:a1'));
    expect((await llm.chat(call('a0', '1.2:a0'))).content).toBe('from a0');
    expect(llm.position).toBe(3); // past the step's last interaction: the next call in order is the summary
    const next = await llm.chat({ messages: [], model: 'm', meta: { purpose: 'summary', state: 'feed', turn: 2 } });
    expect(next.content).toBe('after the step');
    await expect(llm.chat(call('a9', '1.2:a9'))).rejects.toThrow(
      'cassette pop.json: holds no reply for an agent call by a9 in state "feed" (turn 2, call 1.2:a9)',
    );
  });

  it('delivers a streamed reply as a delta', async () => {
    const llm = new ReplayProvider('x', cassette([{ purpose: 'agent', response: 'streamed text' }]));
    const deltas: string[] = [];
    const res = await llm.chat(
      { messages: [], model: 'm', stream: true, meta: { purpose: 'agent', state: 's', turn: 1 } },
      { onDelta: (d) => deltas.push(d) },
    );
    expect(res.content).toBe('streamed text');
    expect(deltas.join('')).toBe('streamed text');
  });

  it('rejects unreadable and malformed cassette files with their path', () => {
    expect(() => readCassette(join(dir, 'none.json'))).toThrow(/none\.json: cannot read \(ENOENT\)/);
    const broken = join(dir, 'broken.json');
    writeFileSync(broken, '{"interactions": [');
    expect(() => readCassette(broken)).toThrow(/broken\.json: invalid JSON/);
    const bad = join(dir, 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({
        version: 1,
        interactions: [
          { purpose: 'agent', response: 'a' },
          { purpose: 'nope', response: 'b' },
        ],
      }),
    );
    expect(() => readCassette(bad)).toThrow(/bad\.json: \/interactions\/1: needs "purpose"/);
  });
});

/** Run the CLI; resolves with exit code and output. Async, so the test server can answer. */
function cli(
  args: string[],
  env: Record<string, string | undefined> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawnCli([...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function runFolder(out: string): string {
  const entries = readdirSync(out);
  expect(entries).toHaveLength(1);
  return join(out, entries[0]!);
}

const withoutTimestamps = (jsonl: string) =>
  jsonl
    .trim()
    .split('\n')
    .map((l) => {
      const { timestamp: _t, ...rest } = JSON.parse(l) as Record<string, unknown>;
      return rest;
    });

describe('record and replay through the CLI', () => {
  beforeAll(() => {
    requireBuiltCli();
  });

  it('--record writes a cassette that replays offline to the identical transcript', async () => {
    let agentCalls = 0;
    const server = await startOpenAiServer({
      reply: (body: ChatRequestBody) => {
        if (body.stream) return `Reply number ${++agentCalls}, with some words to stream.`;
        const system = body.messages[0]?.content ?? '';
        if (/choose who speaks next/i.test(system)) return '<end>Negative</end>';
        if (/running summary/i.test(system)) return `Summary after ${agentCalls} replies.`;
        return '<decision>0</decision><end>0</end>';
      },
    });
    try {
      const cassetteFile = join(dir, 'debate.recorded.json');
      const sopFile = join(ROOT, 'examples', 'debate', 'debate.sop.json');
      const common = ['run', sopFile, '--max-turns', '24', '--seed', '5', '--input', 'topic=x'];
      const recorded = await cli(
        [...common, '--llm', 'openai', '--base-url', server.url, '--record', cassetteFile, '--out', join(dir, 'rec')],
        { OPENAI_API_KEY: 'test', OPENAI_BASE_URL: undefined },
      );
      expect(recorded.code, recorded.stderr).toBe(0);
      expect(recorded.stderr).toMatch(/Finished in state "end"/);
      expect(agentCalls).toBeGreaterThan(10);

      const c = readCassette(cassetteFile);
      expect(c.source).toBe('recorded');
      expect(c.interactions.length).toBe(server.requests.length);
      const validated = await spawnCliAsync(['validate', cassetteFile], { encoding: 'utf8' });
      expect(validated.status, validated.stderr).toBe(0);

      await server.close();
      const replayed = await cli([...common, '--llm', `replay:${cassetteFile}`, '--out', join(dir, 'rep')], {
        OPENAI_API_KEY: undefined,
        OPENAI_BASE_URL: undefined,
      });
      expect(replayed.code, replayed.stderr).toBe(0);

      const a = runFolder(join(dir, 'rec'));
      const b = runFolder(join(dir, 'rep'));
      const ta = withoutTimestamps(readFileSync(join(a, 'transcript.jsonl'), 'utf8'));
      const tb = withoutTimestamps(readFileSync(join(b, 'transcript.jsonl'), 'utf8'));
      expect(ta.length).toBe(18); // 3 + 3 prep turns, 5 openings, 6 on the open floor, the verdict
      expect(tb).toEqual(ta);
      expect(new Set(ta.map((m) => m.state)).size).toBeGreaterThan(2);
      expect(JSON.parse(readFileSync(join(b, 'usage.json'), 'utf8'))).toEqual(JSON.parse(readFileSync(join(a, 'usage.json'), 'utf8')));
    } finally {
      await server.close();
    }
  }, 60_000);

  it.each([
    ['debate', ['run', 'examples/debate/debate.sop.json', '--llm', 'replay:examples/debate/debate.cassette.json']],
    [
      'assistant',
      [
        'run',
        'examples/assistant/assistant.sop.json',
        '--llm',
        'replay:examples/assistant/assistant.cassette.json',
        '--answers',
        'examples/assistant/answers.txt',
      ],
    ],
  ])(
    'the shipped %s cassette replays to the final state',
    async (name, args) => {
      const out = join(dir, `shipped-${name}`);
      const r = await cli([...args, '--out', out], { OPENAI_API_KEY: undefined, OPENAI_BASE_URL: undefined });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/Finished in state/);
      const transcript = readFileSync(join(runFolder(out), 'transcript.md'), 'utf8');
      expect(transcript).toMatch(/Finished in state/);
    },
    60_000,
  );

  it('without a key, base URL or cassette, the CLI names the three ways to run', async () => {
    const r = await cli(['run', 'examples/debate/debate.sop.json', '--llm', 'openai', '--out', join(dir, 'nokey')], {
      OPENAI_API_KEY: undefined,
      OPENAI_BASE_URL: undefined,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/OPENAI_API_KEY/);
    expect(r.stderr).toMatch(/--base-url/);
    expect(r.stderr).toMatch(/replay:FILE/);
    expect(r.stderr).not.toContain('    at ');
  });
});
