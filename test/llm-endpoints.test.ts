// One run, two servers: an agent whose LLM block names its own base_url and api_key_env is
// answered by that server with that key (the real `openai` client against two OpenAI-compatible
// test servers on 127.0.0.1); every other call goes to the run's own server. --base-url and
// --model send every call to one server. A block's server never gets OPENAI_API_KEY unasked, and
// every server the SOP names is one the user allowed (here: an allow file, and --allow-base-url;
// the refusals are in hostile-trust-destinations.test.ts).
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callEndpoint, llmBlockSecrets } from '../src/core/llm/endpoints.js';
import { runCli } from './helpers/cli.js';
import { startOpenAiServer, type ChatRequestBody, type TestServer } from './helpers/openai-server.js';

const KEY_A = 'sk-test-run-key-AAAA1111';
const KEY_B = 'sk-test-other-key-BBBB2222';
let root: string;
let a: TestServer;
let b: TestServer;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'sop-endpoints-'));
  a = await startOpenAiServer({ reply: () => 'From server A.' });
  b = await startOpenAiServer({ reply: () => 'From server B.' });
  // the user's consent to the servers these SOPs name, with the variables they name (src/core/llm/consent.ts)
  mkdirSync(join(root, 'config'));
  writeFileSync(
    join(root, 'config', 'allow.json'),
    JSON.stringify({
      llm: [
        { base_url: a.url, env: ['OPENAI_API_KEY', 'SOP_TEST_UNSET_RUN_KEY'] },
        { base_url: b.url, env: ['SOP_TEST_OTHER_API_KEY', 'SOP_TEST_UNSET_API_KEY'] },
      ],
    }),
  );
});

/** `sop ARGS` with the allow file above. */
const cli = (args: string[], env: Record<string, string> = {}) => runCli(args, { SOP_CONFIG_DIR: join(root, 'config'), ...env });
afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
  rmSync(root, { recursive: true, force: true });
});

/** Ann speaks through the run's server, Bo through his own; four turns, then the end. */
function sopFile(name: string, bo: Record<string, unknown>): string {
  const sop = {
    name,
    llm: { model: 'model-a', base_url: a.url },
    environment: { summary: { enabled: false } },
    agents: { Ann: { roles: { talk: 'First' } }, Bo: { roles: { talk: 'Second' }, llm: bo } },
    root: 'talk',
    states: {
      talk: {
        roles: ['First', 'Second'],
        components: { First: { task: 'Open.' }, Second: { task: 'Answer.' } },
        controller: { type: 'order', max_turns: 4 },
        next_states: { '1': 'end' },
      },
      end: { final: true },
    },
  };
  const file = join(root, `${name}.sop.json`);
  writeFileSync(file, JSON.stringify(sop));
  return file;
}

const agentOf = (r: { body: unknown }) => ((r.body as ChatRequestBody).messages[0]?.content?.match(/^You are (\w+)/) ?? [])[1];
/** The agents' calls a server got (the judge's go to the run's server too). */
const chats = (s: TestServer) => s.requests.filter((r) => r.path.endsWith('/chat/completions') && agentOf(r) !== undefined);
const judgeCalls = (s: TestServer) => s.requests.filter((r) => r.path.endsWith('/chat/completions') && agentOf(r) === undefined);
const reset = () => {
  a.requests.length = 0;
  b.requests.length = 0;
};
const runFiles = (out: string) => {
  const dir = join(out, readdirSync(out)[0]!);
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => readFileSync(join(d.parentPath, d.name), 'utf8'));
};

describe('LLM blocks with their own server', () => {
  it("answers Bo at his server with his key and model, Ann at the run's; no key is written", async () => {
    reset();
    const file = sopFile('two-servers', { base_url: b.url, api_key_env: 'SOP_TEST_OTHER_API_KEY', model: 'model-b' });
    const out = join(root, 'two');
    const r = await cli(['run', file, '--out', out], { OPENAI_API_KEY: KEY_A, SOP_TEST_OTHER_API_KEY: KEY_B, OPENAI_BASE_URL: '' });
    expect(r.status, r.stderr).toBe(0);
    expect(chats(a).map(agentOf)).toEqual(['Ann', 'Ann']);
    expect(chats(b).map(agentOf)).toEqual(['Bo', 'Bo']);
    expect(judgeCalls(a).length).toBeGreaterThan(0);
    expect(judgeCalls(b)).toHaveLength(0);
    expect(chats(a).map((x) => x.headers.authorization)).toEqual([`Bearer ${KEY_A}`, `Bearer ${KEY_A}`]);
    expect(chats(b).map((x) => x.headers.authorization)).toEqual([`Bearer ${KEY_B}`, `Bearer ${KEY_B}`]);
    expect(chats(b).map((x) => (x.body as ChatRequestBody).model)).toEqual(['model-b', 'model-b']);
    const transcript = readFileSync(join(out, readdirSync(out)[0]!, 'transcript.md'), 'utf8');
    expect(transcript).toContain('From server A.');
    expect(transcript).toContain('From server B.');
    for (const text of [...runFiles(out), r.stderr]) {
      expect(text).not.toContain(KEY_A);
      expect(text).not.toContain(KEY_B);
    }
  });

  it('gets no key from OPENAI_API_KEY when the block names no api_key_env', async () => {
    reset();
    const file = sopFile('no-key', { base_url: b.url });
    const r = await cli(['run', file, '--out', join(root, 'nokey')], { OPENAI_API_KEY: KEY_A, OPENAI_BASE_URL: '' });
    expect(r.status, r.stderr).toBe(0);
    expect(chats(b).map((x) => x.headers.authorization)).toEqual(['Bearer no-key', 'Bearer no-key']);
  });

  it('a refused key names the variable it came from, or says that none was sent', async () => {
    const refusing = await startOpenAiServer({ fault: () => ({ kind: 'status', status: 401 }) });
    try {
      const env = { OPENAI_API_KEY: KEY_A, SOP_TEST_OTHER_API_KEY: KEY_B };
      const allow = ['--allow-base-url', refusing.url, '--allow-base-url-env', `${refusing.url}=SOP_TEST_OTHER_API_KEY`];
      const none = await cli(['run', sopFile('refused-none', { base_url: refusing.url }), '--out', join(root, 'r1'), ...allow], env);
      expect(none.status).toBe(1);
      expect(none.stderr).toMatch(
        /wants an API key \(HTTP 401\), and none was sent: name the variable that holds it with llm\.api_key_env/,
      );
      const named = sopFile('refused-named', { base_url: refusing.url, api_key_env: 'SOP_TEST_OTHER_API_KEY' });
      const r = await cli(['run', named, '--out', join(root, 'r2'), ...allow], env);
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/the server refused the API key \(HTTP 401\)\. Check SOP_TEST_OTHER_API_KEY\./);
    } finally {
      await refusing.close();
    }
  });

  it('says which variable is missing, in one line, when api_key_env is not set', async () => {
    reset();
    const file = sopFile('unset', { base_url: b.url, api_key_env: 'SOP_TEST_UNSET_API_KEY' });
    const r = await cli(['run', file, '--out', join(root, 'unset')], { OPENAI_API_KEY: KEY_A, SOP_TEST_UNSET_API_KEY: '' });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /the environment variable SOP_TEST_UNSET_API_KEY \(llm\.api_key_env for http:\/\/127\.0\.0\.1:\d+\/v1\) is not set/,
    );
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(chats(b)).toHaveLength(0);
  });

  it("--base-url sends every call to one server; --model every call to the run's own", async () => {
    reset();
    const file = sopFile('fixed', { base_url: b.url, api_key_env: 'SOP_TEST_OTHER_API_KEY', model: 'model-b' });
    const env = { OPENAI_API_KEY: KEY_A, SOP_TEST_OTHER_API_KEY: KEY_B };
    const fixed = await cli(['run', file, '--base-url', a.url, '--out', join(root, 'fixed')], env);
    expect(fixed.status, fixed.stderr).toBe(0);
    expect(chats(a).map(agentOf)).toEqual(['Ann', 'Bo', 'Ann', 'Bo']);
    expect(chats(b)).toHaveLength(0);
    reset();
    const model = await cli(['run', file, '--model', 'model-z', '--out', join(root, 'model')], env);
    expect(model.status, model.stderr).toBe(0);
    expect(chats(a).map((x) => (x.body as ChatRequestBody).model)).toEqual(['model-z', 'model-z', 'model-z', 'model-z']);
    expect(chats(b)).toHaveLength(0);
  });
});

describe('a sub-flow', () => {
  it("is answered at its own SOP's server, its caller at the run's", async () => {
    reset();
    // the boss delegates once, then finishes
    const boss = await startOpenAiServer({
      reply: (_body, index) =>
        JSON.stringify(index === 0 ? { command: 'delegate', command_args: {} } : { command: 'finish', command_args: { result: 'done' } }),
    });
    const dir = join(root, 'subflow');
    mkdirSync(dir, { recursive: true });
    const child = {
      name: 'child',
      llm: { base_url: b.url, api_key_env: 'SOP_TEST_OTHER_API_KEY', model: 'model-b' },
      environment: { summary: { enabled: false } },
      agents: { Kid: { roles: { play: 'Kid' } } },
      root: 'play',
      states: {
        play: { roles: ['Kid'], components: { Kid: { task: 'Say hello.' } }, controller: { max_turns: 1 }, next_states: { '1': 'end' } },
        end: { final: true },
      },
    };
    const parent = {
      name: 'parent',
      llm: { model: 'model-a', base_url: boss.url },
      environment: { summary: { enabled: false } },
      agents: { Boss: { roles: { boss: 'Boss' } } },
      root: 'boss',
      states: {
        boss: {
          roles: ['Boss'],
          components: { Boss: { task: 'Delegate, then finish.' } },
          commands: { delegate: { executor: 'sop', settings: { file: 'child.sop.json' } }, finish: { executor: 'finish' } },
          next_states: { '1': 'end' },
        },
        end: { final: true },
      },
    };
    writeFileSync(join(dir, 'child.sop.json'), JSON.stringify(child));
    writeFileSync(join(dir, 'parent.sop.json'), JSON.stringify(parent));
    try {
      const env = { OPENAI_API_KEY: KEY_A, SOP_TEST_OTHER_API_KEY: KEY_B };
      const r = await cli(['run', join(dir, 'parent.sop.json'), '--out', join(dir, 'runs'), '--allow-base-url', boss.url], env);
      expect(r.status, r.stderr).toBe(0);
      expect(chats(boss).map(agentOf)).toEqual(['Boss', 'Boss']);
      expect(chats(b).map(agentOf)).toEqual(['Kid']);
      expect(chats(b).map((x) => x.headers.authorization)).toEqual([`Bearer ${KEY_B}`]);
    } finally {
      await boss.close();
    }
  });
});

describe('in a sweep', () => {
  it('routes each run as sop run does, and refuses to start without the key variable of the SOP', async () => {
    reset();
    const file = sopFile('sweep-two', { base_url: b.url, api_key_env: 'SOP_TEST_OTHER_API_KEY', model: 'model-b' });
    const out = join(root, 'sweep');
    const env = { OPENAI_API_KEY: KEY_A, SOP_TEST_OTHER_API_KEY: KEY_B, OPENAI_BASE_URL: '' };
    const r = await cli(['sweep', file, '--seeds', '1-2', '--concurrency', '1', '--out', out], env);
    expect(r.status, r.stderr).toBe(0);
    expect(chats(a).map(agentOf)).toEqual(['Ann', 'Ann', 'Ann', 'Ann']);
    expect(chats(b).map((x) => x.headers.authorization)).toEqual(Array(4).fill(`Bearer ${KEY_B}`));
    expect(readFileSync(join(out, 'results.jsonl'), 'utf8')).not.toContain(KEY_B);

    const keyed = join(root, 'keyed.sop.json');
    writeFileSync(
      keyed,
      readFileSync(file, 'utf8').replace('"base_url":"' + a.url + '"', `"base_url":"${a.url}","api_key_env":"SOP_TEST_UNSET_RUN_KEY"`),
    );
    const refused = await cli(['sweep', keyed, '--seeds', '1', '--out', join(root, 'keyed')], { ...env, SOP_TEST_UNSET_RUN_KEY: '' });
    expect(refused.status).toBe(1);
    expect(refused.stderr.trim()).toMatch(
      /^error: the environment variable SOP_TEST_UNSET_RUN_KEY \(llm\.api_key_env for .*\) is not set$/,
    );
  });
});

describe('callEndpoint and llmBlockSecrets', () => {
  const sopLlm = { base_url: 'http://a/v1', api_key_env: 'A_KEY' };
  it("is the run's own server unless a block names another server or key", () => {
    expect(callEndpoint(sopLlm, { ...sopLlm, model: 'm' })).toBeUndefined();
    expect(callEndpoint(undefined, { model: 'm' })).toBeUndefined();
    expect(callEndpoint(sopLlm, { ...sopLlm, base_url: 'http://b/v1' })).toEqual({ baseURL: 'http://b/v1', apiKeyEnv: 'A_KEY' });
    expect(callEndpoint(sopLlm, { ...sopLlm, api_key_env: 'B_KEY' })).toEqual({ baseURL: 'http://a/v1', apiKeyEnv: 'B_KEY' });
    expect(callEndpoint(undefined, { base_url: 'http://b/v1' })).toEqual({ baseURL: 'http://b/v1' });
  });
  it('finds the key variables and servers of every LLM block', () => {
    const doc = {
      llm: { base_url: 'http://a/v1' },
      states: {
        s: {
          controller: { llm: { api_key_env: 'JUDGE_SECRET', base_url: 'http://j/v1' } },
          components: { R: { llm: { api_key_env: 'R_TOKEN' } } },
        },
      },
    };
    expect(llmBlockSecrets(doc)).toEqual({ names: ['JUDGE_SECRET', 'R_TOKEN'], urls: ['http://a/v1', 'http://j/v1'] });
  });
});
