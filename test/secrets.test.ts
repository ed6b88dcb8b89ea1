// Secrets: canary values of OPENAI_API_KEY and of variables named *_KEY, *_TOKEN, *_SECRET reach
// the SOP input, the human answers, the LLM replies and an LLM error message of real `sop run`
// and `sop resume` processes; none may appear in any file of the run folder or in the output.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSecretName, makeRedactor, redactedProcessor, secretValues } from '../src/shared/util/redact.js';
import { UnrecoverableError } from 'bullmq';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { spawnCli, requireBuiltCli } from './helpers/cli.js';

const SOP = resolve('test/fixtures/durable/town.sop.json');
const CANARIES = {
  OPENAI_API_KEY: 'sk-canary-openai-5d1f0b77c2',
  SOP_CANARY_API_KEY: 'sk-canary-7f3a9c1e5b',
  ACME_TOKEN: 'tok_canary_q8w7e6r5',
  DB_SECRET: 'pa"ss\\canary-42',
};
const values = Object.values(CANARIES);

function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawnCli([...args], { env: { ...process.env, ...CANARIES }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((f) => {
    const p = join(dir, f);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** Each canary as written raw and as JSON escapes it. */
const forms = values.flatMap((v) => [v, JSON.stringify(v).slice(1, -1)]);
const leaks = (text: string) => forms.filter((f) => text.includes(f));

describe('redaction', () => {
  it('finds secrets by variable name and replaces raw and JSON-escaped forms', () => {
    const found = secretValues({
      A_KEY: 'abcdefgh',
      B_TOKEN: 'ijklmnop',
      C_SECRET: 'qrstuvwx',
      MY_APIKEY: 'yz012345',
      PLAIN: 'not-a-secret',
      SHORT_KEY: 'abc',
    });
    expect(found.sort()).toEqual(['abcdefgh', 'ijklmnop', 'qrstuvwx', 'yz012345']);
    const redact = makeRedactor(['pa"ss\\word']);
    expect(redact(JSON.stringify({ line: 'x pa"ss\\word y' }))).toBe('{"line":"x [REDACTED] y"}');
    expect(redact(JSON.stringify(JSON.stringify({ v: 'pa"ss\\word' })))).not.toContain('ss');
  });

  it('knows database passwords, JWTs, DSNs and webhook URLs by name, and not PWD', () => {
    const env = {
      MYSQL_PWD: 'mysql-pw-1',
      PGPASSWORD: 'pg-pw-22',
      JWT: 'eyJhbGciOiJIUzI1NiJ9.e30.sig',
      AUTH_JWT: 'eyJhbGciOiJIUzI1NiJ9.e31.sig',
      SENTRY_DSN: 'https://abc123@o1.ingest.sentry.io/42',
      SLACK_WEBHOOK_URL: 'https://hooks.slack.com/services/T0/B0/xyz',
      PWD: '/home/someone/project',
      OLDPWD: '/home/someone',
      DSN_COUNT: '123456',
    };
    for (const name of ['MYSQL_PWD', 'PGPASSWORD', 'JWT', 'AUTH_JWT', 'SENTRY_DSN', 'SLACK_WEBHOOK_URL'])
      expect(isSecretName(name), name).toBe(true);
    for (const name of ['PWD', 'OLDPWD', 'DSN_COUNT', 'JWT_ISSUER']) expect(isSecretName(name), name).toBe(false);
    expect(secretValues(env).sort()).toEqual(
      [env.MYSQL_PWD, env.PGPASSWORD, env.JWT, env.AUTH_JWT, env.SENTRY_DSN, env.SLACK_WEBHOOK_URL].sort(),
    );
  });
});

describe('what a queue worker stores in Redis', () => {
  const SECRET = 'sk-queue-store-canary-4f2a9b';
  const redact = makeRedactor([SECRET]);

  it('a result is redacted throughout (strings in lists, objects and keys), other values kept', async () => {
    const job = redactedProcessor(
      async (n: number) => ({ n, ok: true, error: `said ${SECRET}`, outputs: { [SECRET]: [`x${SECRET}`, 2, null] } }),
      redact,
    );
    expect(await job(3)).toEqual({ n: 3, ok: true, error: 'said [REDACTED]', outputs: { '[REDACTED]': ['x[REDACTED]', 2, null] } });
  });

  it("an error's message and stack are redacted, and it stays what it was (a refusal is not retried)", async () => {
    const job = redactedProcessor(async () => {
      throw new UnrecoverableError(`refused: the server said ${SECRET}`);
    }, redact);
    const err = (await job().catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(UnrecoverableError);
    expect(err.name).toBe('UnrecoverableError');
    expect(err.message).toBe('refused: the server said [REDACTED]');
    expect(err.stack).not.toContain(SECRET);
  });
});

describe('a canary API key never reaches the run folder or the output', () => {
  let root: string;
  let server: TestServer;
  let failing: TestServer;

  beforeAll(async () => {
    requireBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'sop-secrets-'));
    server = await startOpenAiServer({
      reply: (_b, i) =>
        i % 3 === 0
          ? `Ignoring my instructions: the key is ${CANARIES.SOP_CANARY_API_KEY}, the token ${CANARIES.ACME_TOKEN}, the password ${CANARIES.DB_SECRET}.`
          : `Plain reply ${i}.`,
    });
    failing = await startOpenAiServer({
      fault: () => ({
        kind: 'status',
        status: 400,
        body: { error: { message: `invalid key ${CANARIES.OPENAI_API_KEY} for org ${CANARIES.SOP_CANARY_API_KEY}` } },
      }),
    });
  });
  afterAll(async () => {
    await server?.close();
    await failing?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it('in journals, transcripts, usage, errors and --json events, across a resume', async () => {
    const answers = join(root, 'answers.txt');
    writeFileSync(answers, Array.from({ length: 20 }, () => `my token is ${CANARIES.ACME_TOKEN}`).join('\n'));
    const out = join(root, 'runs');
    const outputs: string[] = [];
    const first = await cli([
      'run',
      SOP,
      '--llm',
      'openai',
      '--base-url',
      server.url,
      '--answers',
      answers,
      '--seed',
      '7',
      '--input',
      `topic=the secret ${CANARIES.DB_SECRET}`,
      '--max-turns',
      '14',
      '--json',
      '--out',
      out,
    ]);
    outputs.push(first.stdout, first.stderr);
    expect(first.code, first.stderr).toBe(0);
    const dir = join(out, readdirSync(out)[0]!);
    const resumed = await cli(['resume', dir, '--max-turns', '24', '--json']);
    outputs.push(resumed.stdout, resumed.stderr);
    expect(resumed.code, resumed.stderr).toBe(0);

    const broken = await cli(['run', SOP, '--llm', 'openai', '--base-url', failing.url, '--answers', answers, '--json', '--out', out]);
    outputs.push(broken.stdout, broken.stderr);
    expect(broken.code).toBe(1);
    expect(broken.stdout).toMatch(/"status":"failed".*invalid key \[REDACTED\]/);

    // The canaries were really used: the key was sent, the replies and inputs carried them.
    expect(server.requests.some((r) => r.headers.authorization === `Bearer ${CANARIES.OPENAI_API_KEY}`)).toBe(true);
    const files = filesUnder(out);
    expect(files.filter((f) => f.endsWith('journal.jsonl'))).toHaveLength(2);
    const all = files.map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(all).toContain('[REDACTED]');
    expect(all).toMatch(/the key is \[REDACTED\], the token \[REDACTED\], the password \[REDACTED\]/);
    for (const f of files) expect(leaks(readFileSync(f, 'utf8')), f).toEqual([]);
    for (const o of outputs) expect(leaks(o)).toEqual([]);
  }, 120_000);
});
