// `sop run --llm local:MODEL` with a real model, SmolLM2-135M-Instruct Q4_1 (issue 28): the
// debate runs 4 turns of non-empty messages and usage.json counts the tokenizer's prompt tokens;
// the MCP notes example completes a tool call made under the JSON-schema grammar; `--record`
// gives a cassette that replays to the same transcript. Short runs: one thread, 48-token
// replies (test/helpers/local-model.ts). They skip, saying why, without the model.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, runCli, spawnCli, spawnCliAsync } from './helpers/cli.js';
import { loadRunRecord } from '../src/features/journal/record.js';
import { goldenOf, runFolderIn } from './helpers/golden.js';
import { LOCAL_ENV, TEST_MODEL, noteSkip } from './helpers/local-model.js';
import { readJournal } from '../src/features/journal/reader.js';

const missing = noteSkip('sop run --llm local:');
const tmp = mkdtempSync(join(tmpdir(), 'sop-local-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Event {
  type: string;
  [k: string]: unknown;
}
/** The journal's events, prompts whole (their system parts put back). */
const journal = (dir: string): Event[] => readJournal(dir).events;

describe.skipIf(missing !== undefined)('sop run --llm local: on SmolLM2-135M-Instruct', () => {
  beforeAll(requireBuiltCli);
  const cassette = join(tmp, 'debate.cassette.json');
  let recorded = '';

  it('the debate runs 4 turns of non-empty messages, and usage.json counts the tokenizer prompt tokens', async () => {
    const out = join(tmp, 'debate');
    const r = await runCli(
      [
        'run',
        'examples/debate/debate.sop.json',
        '--llm',
        `local:${TEST_MODEL}`,
        '--max-turns',
        '4',
        '--out',
        out,
        '--quiet',
        '--record',
        cassette,
      ],
      LOCAL_ENV,
    );
    expect(r.status, r.stderr).toBe(0);
    const dir = runFolderIn(out);
    recorded = dir;
    const events = journal(dir);
    const messages = events.filter((e) => e.type === 'message').map((e) => e.message as { content: string; sender: string });
    expect(messages).toHaveLength(4);
    for (const m of messages) expect(m.content.trim(), m.sender).not.toBe('');
    const calls = events.filter((e) => e.type === 'llm_call') as Array<
      Event & { usage: { promptTokens: number }; model: string; reply: string }
    >;
    expect(calls.length).toBeGreaterThan(0);
    // the agents' replies are the model's, not empty
    for (const c of calls.filter((c) => c.purpose === 'agent')) expect(c.reply.trim()).not.toBe('');
    for (const c of calls) expect(c.model).toBe('SmolLM2-135M-Instruct.Q4_1.gguf');
    const usage = JSON.parse(readFileSync(join(dir, 'usage.json'), 'utf8')) as { prompt_tokens: number; calls: number; cost_usd?: number };
    expect(usage.calls).toBe(calls.length);
    expect(usage.prompt_tokens).toBe(calls.reduce((n, c) => n + c.usage.promptTokens, 0));
    // the tokenizer's count, not the 4-characters-a-token estimate
    const estimates = calls.map((c) => {
      const prompt = events.find((e) => e.type === 'prompt' && e.turn === c.turn && e.purpose === c.purpose) as
        { messages: Array<{ content: string }> } | undefined;
      return prompt ? prompt.messages.reduce((n, m) => n + Math.ceil(m.content.length / 4) + 4, 0) : -1;
    });
    expect(calls.some((c, i) => c.usage.promptTokens !== estimates[i])).toBe(true);
    expect(usage.cost_usd).toBeUndefined(); // a model run here costs nothing: not priced
  }, 300_000);

  it('the recorded cassette names the model and replays to the same transcript', async () => {
    expect(recorded).not.toBe('');
    const c = JSON.parse(readFileSync(cassette, 'utf8')) as { source: string; interactions: unknown[] };
    expect(c.source).toMatch(
      /^recorded: real output of SmolLM2-135M-Instruct\.Q4_1\.gguf \(135M parameters, a very small model, quantisation Q4_1\), run in process by node-llama-cpp 3\.21\.1 with --seed 1$/,
    );
    const out = join(tmp, 'replay');
    const r = await runCli([
      'run',
      'examples/debate/debate.sop.json',
      '--llm',
      `replay:${cassette}`,
      '--max-turns',
      '4',
      '--out',
      out,
      '--quiet',
    ]);
    expect(r.status, r.stderr).toBe(0);
    // the same transcript, but for the header's provider (record(local), replay)
    const body = (dir: string) => goldenOf(dir).transcript.replace(/, LLM: [^,]+,/, ', LLM: -,');
    expect(body(runFolderIn(out))).toBe(body(recorded));
  }, 120_000);

  it('the MCP notes example completes a tool call made under the grammar', async () => {
    const out = join(tmp, 'notes');
    const r = await runCli(
      ['run', 'examples/mcp/notes.sop.json', '--llm', `local:${TEST_MODEL}`, '--yes', '--max-turns', '3', '--out', out, '--quiet'],
      { ...LOCAL_ENV, SOP_LOCAL_MAX_TOKENS: '96' },
    );
    expect(r.status, r.stderr).toBe(0);
    const events = journal(runFolderIn(out));
    const replies = events.filter((e) => e.type === 'llm_call' && e.purpose === 'agent').map((e) => String(e.reply));
    expect(replies.length).toBeGreaterThan(0);
    for (const reply of replies) expect(() => JSON.parse(reply) as unknown, reply).not.toThrow(); // every reply is the command JSON
    const results = events.filter((e) => e.type === 'executor_result' && e.executor === 'mcp');
    expect(results.length).toBeGreaterThan(0);
    expect(results.some((e) => e.ok === true)).toBe(true);
  }, 300_000);

  it('Ctrl-C stops the run waiting for the model at once: it ends interrupted, resumable', async () => {
    // a SOP whose first call streams a long reply (provider local, its model named in the SOP)
    const file = join(tmp, 'long.sop.json');
    writeFileSync(
      file,
      JSON.stringify({
        name: 'long-reply',
        llm: { provider: 'local', model: TEST_MODEL, max_tokens: 3000 },
        agents: { Ada: { roles: { talk: 'Speaker' } } },
        root: 'talk',
        states: {
          talk: {
            roles: ['Speaker'],
            components: { Speaker: { task: 'Count from one to one thousand, in words, one number a line.' } },
            next_states: { '0': 'end' },
          },
          end: { final: true },
        },
      }),
    );
    const out = join(tmp, 'sigint');
    const child = spawnCli(['run', file, '--out', out, '--json'], { env: { ...process.env, ...LOCAL_ENV } });
    let stderr = '';
    let sent = false;
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // the readiness signal: the speaker is chosen, its call starts now (--json does not print the
    // reply's pieces; test/local-provider.test.ts aborts a call after its first piece)
    child.stdout.on('data', (d: Buffer) => {
      if (!sent && d.toString().includes('"type":"speaker_chosen"')) {
        sent = true;
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((r) => child.on('close', r));
    expect(sent).toBe(true);
    expect(code, stderr).toBe(130); // 3000 tokens would take minutes, past the test's timeout
    const record = loadRunRecord(runFolderIn(out));
    expect(record.status).toBe('interrupted');
    expect(record.finished?.error).toMatch(/stopped by Ctrl-C while waiting for the LLM/);
  }, 120_000);
});

describe('sop validate: a SOP whose llm.provider is local', () => {
  beforeAll(requireBuiltCli);
  it('every model file it names is there (relative to its folder), or an hf: model; the top-level block names one', async () => {
    const dir = mkdtempSync(join(tmp, 'validate-'));
    writeFileSync(join(dir, 'small.gguf'), 'GGUF');
    const sop = (llm: object, agentLlm?: object) => ({
      name: 'v',
      llm,
      agents: { Ada: { roles: { talk: 'Speaker' }, ...(agentLlm ? { llm: agentLlm } : {}) } },
      root: 'talk',
      states: { talk: { roles: ['Speaker'], next_states: { '0': 'end' } }, end: { final: true } },
    });
    const validate = (doc: object) => {
      const file = join(dir, 'v.sop.json');
      writeFileSync(file, JSON.stringify(doc));
      return spawnCliAsync(['validate', file]);
    };
    expect((await validate(sop({ provider: 'local', model: 'small.gguf' }, { model: 'hf:someone/repo/x.gguf' }))).status).toBe(0);
    const missing = await validate(sop({ provider: 'local', model: 'small.gguf' }, { model: 'models/big.gguf' }));
    expect(missing.status).toBe(1);
    expect(missing.stderr + missing.stdout).toContain(
      '/agents/Ada/llm/model: local model file models/big.gguf not found (llm.provider "local" reads it from the SOP\'s folder)',
    );
    const none = await validate(sop({ provider: 'local' }));
    expect(none.status).toBe(1);
    expect(none.stderr + none.stdout).toContain('/llm: llm.provider "local" needs llm.model');
  });
});
