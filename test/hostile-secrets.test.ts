// Hostile input, secrets and approvals. Code written by a model reads the engine's own
// environment (/proc/$PPID/environ, unsandboxed) and prints every secret it finds in many
// encodings; none of them may reach a prompt sent to the LLM server, a file of the run folder
// or the output. A secret split across streamed deltas is not printed; escape sequences in
// replies and code output do not reach the terminal; an answers file never approves code.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { terminalDisplay } from '../src/apps/cli/display.js';
import { sandboxSupport } from '../src/shared/sandbox/sandbox.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { makeRedactor, secretValues } from '../src/shared/util/redact.js';
import { StreamRedactor } from '../src/shared/util/stream-redactor.js';
import { terminalSafe } from '../src/shared/util/terminal-text.js';
import { calledCommand, offered, startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { codeSop } from './helpers/code-sop.js';
import { spawnCli, requireBuiltCli } from './helpers/cli.js';

const DB_PASSWORD = 'pgCanaryPw_73kq';
const CANARIES = {
  OPENAI_API_KEY: 'sk-canary-proc-environ-8e41c9d2a7',
  ACME_PAT: 'ghp_canaryPat0123456789',
  SMTP_PASS: 'smtp-canary-pass-991',
  CLOUD_CREDENTIALS: 'cred:canary/42+x=',
  SITE_MISC: 'misc-canary-named-by-redact', // secret only through --redact SITE_MISC
  DATABASE_URL: `postgres://app:${DB_PASSWORD}@db.internal:5432/prod`,
};
/** The values that must never appear (the URL's password, not the whole URL). */
const SECRETS = [
  CANARIES.OPENAI_API_KEY,
  CANARIES.ACME_PAT,
  CANARIES.SMTP_PASS,
  CANARIES.CLOUD_CREDENTIALS,
  CANARIES.SITE_MISC,
  DB_PASSWORD,
];

const reverse = (s: string) => [...s].reverse().join('');

/**
 * Which secrets `text` holds, in any of the forms the attack uses, found independently of the
 * redactor: raw, reversed, any case, hex, URL-encoded, and base64 (decoding every base64-like
 * run at every alignment, standard or URL-safe, of the secret or its changed-case forms).
 */
function leaks(text: string): string[] {
  const low = text.toLowerCase();
  const found = new Set<string>();
  for (const s of SECRETS) {
    for (const v of [s, reverse(s)]) {
      const forms = [v, Buffer.from(v).toString('hex'), Buffer.from(v.toUpperCase()).toString('hex'), encodeURIComponent(v)];
      if (forms.some((f) => low.includes(f.toLowerCase()))) found.add(s);
    }
  }
  for (const run of text.match(/[A-Za-z0-9+/_-]{12,}/g) ?? []) {
    for (let offset = 0; offset < 4; offset++) {
      const decoded = Buffer.from(run.slice(offset), 'base64').toString('latin1').toLowerCase();
      for (const s of SECRETS) if (decoded.includes(s.toLowerCase()) || decoded.includes(reverse(s).toLowerCase())) found.add(s);
    }
  }
  return [...found];
}

const support = sandboxSupport();
if (!support.ok) console.warn(`hostile secrets: the sandboxed runs are skipped: ${support.reason}`);

const counts = { encodings: 0, destinations: 0, checked: 0, leaked: 0, splits: 0, escapes: 0, approvalCases: 0, approvalsFromFile: 0 };

afterAll(() => {
  console.log(
    `hostile secrets: ${SECRETS.length} secrets x ${counts.encodings} encodings redacted; ${counts.destinations} destinations (prompts, journal, transcripts, logs.md, output) checked ${counts.checked} times, ${counts.leaked} leaks; ${counts.splits} stream splits held; ${counts.escapes} escape sequences neutralised; ${counts.approvalCases} approval confusion cases, ${counts.approvalsFromFile} approvals taken from an answers file`,
  );
});

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawnCli([...args], {
      env: { ...process.env, ...CANARIES, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
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

const command = (name: string, args: Record<string, unknown>) => JSON.stringify({ command: name, command_args: args });

describe('the redactor', () => {
  it('replaces every encoding of every kind of secret', () => {
    const env = { ...CANARIES, PLAIN: 'not a secret at all' };
    const values = secretValues(env);
    expect(values).toEqual(
      expect.arrayContaining([
        CANARIES.OPENAI_API_KEY,
        CANARIES.ACME_PAT,
        CANARIES.SMTP_PASS,
        CANARIES.CLOUD_CREDENTIALS,
        DB_PASSWORD,
        `app:${DB_PASSWORD}@`,
      ]),
    );
    expect(values).not.toContain('not a secret at all');
    const redact = makeRedactor([...values, CANARIES.SITE_MISC]);
    const encodings: Array<[string, (s: string) => string]> = [
      ['raw', (s) => s],
      ['upper', (s) => s.toUpperCase()],
      ['lower', (s) => s.toLowerCase()],
      ['reversed', reverse],
      ['reversed upper', (s) => reverse(s).toUpperCase()],
      ['json', (s) => JSON.stringify(JSON.stringify(s))],
      ['url', encodeURIComponent],
      ['hex', (s) => Buffer.from(s).toString('hex')],
      ['HEX', (s) => Buffer.from(s).toString('hex').toUpperCase()],
      ['base64', (s) => Buffer.from(s).toString('base64')],
      ['base64 +1', (s) => Buffer.from(`=${s}`).toString('base64')],
      ['base64 +2', (s) => Buffer.from(`K=${s}`).toString('base64')],
      ['base64url', (s) => Buffer.from(`ab${s}`).toString('base64url')],
      ['base64 of reversed', (s) => Buffer.from(reverse(s)).toString('base64')],
      ['base64 of upper', (s) => Buffer.from(s.toUpperCase()).toString('base64')],
      ['base64 of a whole environ', (s) => Buffer.from(`PATH=/usr/bin\0HOME=/root\0X_KEY=${s}\0LANG=C`).toString('base64')],
    ];
    counts.encodings = encodings.length;
    for (const s of SECRETS) {
      for (const [name, encode] of encodings) {
        const text = `output: ${encode(s)} (end)`;
        expect(leaks(text), `${name} of ${s} is found by the test`).toContain(s);
        expect(leaks(redact(text)), `${name} of ${s}`).toEqual([]);
      }
    }
    // The user:password part of a URL, however short the password.
    expect(makeRedactor(secretValues({ DATABASE_URL: 'postgres://u:p@host/db' }))('postgres://u:p@host/db')).toBe(
      'postgres://[REDACTED]host/db',
    );
    // A key in the query of a base URL.
    expect(secretValues({ OPENAI_BASE_URL: 'https://proxy.example/v1?api-key=abcdef123456' })).toContain('abcdef123456');
  });

  it('holds a secret split across streamed pieces, at every split point', () => {
    const redact = makeRedactor(SECRETS);
    for (const s of SECRETS) {
      for (const form of [s, reverse(s).toUpperCase(), Buffer.from(s).toString('base64')]) {
        const text = `before ${form} after`;
        for (let cut = 1; cut < text.length; cut++) {
          const stream = new StreamRedactor(redact);
          const shown = stream.push(text.slice(0, cut)) + stream.push(text.slice(cut)) + stream.flush();
          expect(leaks(shown), `split at ${cut}`).toEqual([]);
          expect(shown.startsWith('before ') && shown.endsWith(' after')).toBe(true);
          counts.splits++;
        }
      }
    }
  });
});

/** A stream that says it is a terminal, collecting what is written. */
function fakeTerminal(): Writable & { isTTY: boolean; text: () => string } {
  const chunks: string[] = [];
  const w = new Writable({
    write(c: Buffer, _e, done) {
      chunks.push(c.toString());
      done();
    },
  });
  return Object.assign<Writable, { isTTY: boolean; text: () => string }>(w, { isTTY: true, text: () => chunks.join('') });
}

describe('the terminal display', () => {
  it('prints no secret split across deltas, and no escape sequence from a reply or code output', () => {
    const out = fakeTerminal();
    const err = fakeTerminal();
    const show = terminalDisplay({
      out: out as unknown as NodeJS.WriteStream,
      err: err as unknown as NodeJS.WriteStream,
      quiet: false,
      redact: makeRedactor(SECRETS),
    });
    const key = CANARIES.OPENAI_API_KEY;
    const hostile = [
      '\x1b[2J\x1b[H',
      '\x1b]52;c;ZXZpbA==\x07',
      '\x1b]0;pwned\x07',
      '\x9b31m',
      '\x1b[8m',
      '\x1bP+q\x1b\\',
      'line\roverwritten',
    ];
    const reply = `key ${key} and ${hostile.join(' ')} end`;
    show({ type: 'speaker_chosen', state: 's', agent: 'Ann', role: 'R', turn: 1 } as RunEvent);
    for (let i = 0; i < reply.length; i += 5) show({ type: 'delta', agent: 'Ann', text: reply.slice(i, i + 5) });
    show({
      type: 'message',
      message: { id: 0, turn: 1, state: 's', sender: 'Ann', role: 'R', content: reply, kind: 'speech', timestamp: '' },
    });
    show({
      type: 'message',
      message: {
        id: 1,
        turn: 1,
        state: 's',
        sender: 'run_code',
        role: 'code',
        content: `stdout:\n${hostile.join('')}${Buffer.from(key).toString('base64')}`,
        kind: 'action',
        timestamp: '',
      },
    });
    show({ type: 'warning', message: `server said ${hostile[2]}` });
    const printed = out.text() + err.text();
    expect(leaks(printed)).toEqual([]);
    expect(printed).toContain('key [REDACTED] and');
    // The display's own colours remain; nothing else starts an escape sequence.
    // eslint-disable-next-line no-control-regex -- the test looks for escape sequences
    const own = printed.replace(/\x1b\[(?:\d+|2K)m|\x1b\[2K|\r\x1b\[2K/g, '');
    // eslint-disable-next-line no-control-regex -- the test looks for escape sequences
    expect(own).not.toMatch(/[\x1b\x9b\x07\x90\x9d]/);
    expect(printed).toContain('␛]52;c;ZXZpbA==␇');
    expect(printed).toContain('line␍overwritten');
    counts.escapes += hostile.length;
    expect(terminalSafe('a\tb\nc\r\n')).toBe('a\tb\nc\r\n');
  });
});

describe("code reading the engine's environment", () => {
  let root: string;
  let server: TestServer;
  const attack = [
    'import base64, os, urllib.parse',
    'raw = open("/proc/%d/environ" % os.getppid(), "rb").read()',
    'for item in raw.split(b"\\0"):',
    '    name, _, value = item.decode("utf8", "replace").partition("=")',
    '    if name in ("OPENAI_API_KEY", "ACME_PAT", "SMTP_PASS", "CLOUD_CREDENTIALS", "SITE_MISC", "DATABASE_URL"):',
    '        print(name, value, value[::-1], value.upper(), value[::-1].upper())',
    '        print(base64.b64encode(value.encode()).decode(), base64.b64encode(value[::-1].encode()).decode(), base64.b64encode(value.upper().encode()).decode())',
    '        print(value.encode().hex(), urllib.parse.quote(value, safe=""))',
    'print(base64.b64encode(raw).decode())',
  ].join('\n');

  beforeAll(async () => {
    requireBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'sop-hostile-secrets-'));
    server = await startOpenAiServer({
      reply: (body) => {
        const turns = body.messages.filter((m) => m.role === 'assistant').length;
        return turns === 0 ? command('run_code', { code: attack }) : command('finish', { result: 'done' });
      },
    });
  });
  afterAll(async () => {
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  function sop(): string {
    const file = join(root, 'steal.sop.json');
    writeFileSync(file, JSON.stringify(codeSop('steal', 'Mallory')));
    return file;
  }

  const modes = [
    { name: '--no-sandbox', flags: ['--no-sandbox'] },
    ...(sandboxSupport().ok ? [{ name: 'default (sandboxed)', flags: [] as string[] }] : []),
  ];

  for (const mode of modes) {
    it(`${mode.name}: no secret reaches a prompt, a run folder file or the output`, async () => {
      const before = server.requests.length;
      for (const json of [true, false]) {
        const out = join(root, `runs-${mode.flags.join('') || 'default'}-${json ? 'json' : 'text'}`);
        const r = await cli([
          'run',
          sop(),
          '--llm',
          'openai',
          '--base-url',
          server.url,
          '--auto-run',
          '--redact',
          'SITE_MISC',
          '--out',
          out,
          ...mode.flags,
          ...(json ? ['--json'] : []),
        ]);
        expect(r.code, r.stderr).toBe(0);
        if (mode.flags.includes('--no-sandbox')) expect(r.stderr.match(/warning: --no-sandbox/g)).toHaveLength(1);
        else expect(r.stderr).not.toMatch(/sandbox/);
        const destinations: Array<[string, string]> = [
          ['stdout', r.stdout],
          ['stderr', r.stderr],
        ];
        const dir = join(out, readdirSync(out)[0]!);
        for (const f of filesUnder(dir)) destinations.push([f.slice(dir.length + 1), readFileSync(f, 'utf8')]);
        const prompts = server.requests.slice(before).map((q) => JSON.stringify(q.body));
        destinations.push(...prompts.map((p, i) => [`prompt ${i}`, p] as [string, string]));
        expect(destinations.map(([n]) => n)).toEqual(
          expect.arrayContaining(['journal.jsonl', 'transcript.md', 'transcript.jsonl', 'memory/logs.md']),
        );
        counts.destinations = Math.max(counts.destinations, destinations.length);
        for (const [name, text] of destinations) {
          const found = leaks(text);
          counts.checked++;
          counts.leaked += found.length;
          expect(found, name).toEqual([]);
        }
        // The code ran, read the environment, and its (redacted) output reached the next prompt.
        const codeOutput = prompts.find((p) => /exit code 0/.test(p));
        expect(codeOutput).toBeDefined();
        if (mode.flags.includes('--no-sandbox')) expect(codeOutput).toMatch(/OPENAI_API_KEY \[REDACTED\] \[REDACTED\]/);
      }
      // The API key itself was sent where it belongs: the Authorization header.
      expect(server.requests.slice(before).every((q) => q.headers.authorization === `Bearer ${CANARIES.OPENAI_API_KEY}`)).toBe(true);
    }, 120_000);
  }
});

describe('approval confusion: answers files answer questions, never approve code', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'sop-hostile-approval-'));
  });
  afterAll(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  /** A plan review, then code that touches a marker file, then finish; the SOP's own scripted LLM server. */
  async function setup(withReview: boolean) {
    const server = await startOpenAiServer({
      reply: (body) => {
        if (offered(body).includes('propose_plan')) return command('propose_plan', { draft: '1. touch the marker' });
        const done = calledCommand(body, 'run_code');
        return done ? command('finish', { result: 'done' }) : command('run_code', { code: 'open("marker.txt", "w").write("ran")' });
      },
    });
    const file = join(root, `approve-${withReview}.sop.json`);
    const execute = {
      roles: ['Coder'],
      components: { Coder: { task: 'Do the plan.' } },
      commands: { run_code: { executor: 'code', settings: { language: 'python' } }, finish: { executor: 'finish' } },
      next_states: { 1: 'end' },
    };
    const plan = {
      roles: ['Coder'],
      components: { Coder: { task: 'Propose a plan.' } },
      commands: { propose_plan: { executor: 'human', settings: { kind: 'review', save_to: 'plan' } } },
      next_states: { 1: 'execute' },
    };
    writeFileSync(
      file,
      JSON.stringify({
        name: 'approve',
        memory: { plan: '' },
        environment: { summary: { enabled: false } },
        agents: { Ann: { roles: { ...(withReview ? { plan: 'Coder' } : {}), execute: 'Coder' } } },
        root: withReview ? 'plan' : 'execute',
        states: { ...(withReview ? { plan } : {}), execute, end: { final: true } },
      }),
    );
    return { server, file };
  }

  const marker = (dir: string) => existsSync(join(dir, 'workspace', 'marker.txt'));

  const cases: Array<{ name: string; review: boolean; answers: string[]; flags: string[]; runs: boolean }> = [
    { name: 'an "ok" for the plan review and a "yes" after it', review: true, answers: ['ok', 'yes', 'y'], flags: [], runs: false },
    { name: 'a lone "yes" with code first', review: false, answers: ['yes'], flags: [], runs: false },
    { name: 'an empty answer (which accepts a review)', review: false, answers: ['[""]'], flags: [], runs: false },
    { name: '--auto-run with the answers file', review: true, answers: ['ok'], flags: ['--auto-run'], runs: true },
    { name: '--yes', review: true, answers: ['ok'], flags: ['--yes'], runs: true },
  ];

  for (const c of cases) {
    it(
      c.name,
      async () => {
        const { server, file } = await setup(c.review);
        try {
          const answers = join(root, `answers-${counts.approvalCases}.txt`);
          writeFileSync(answers, c.answers[0] === '[""]' ? '[""]' : c.answers.join('\n'));
          const out = join(root, `runs-${counts.approvalCases}`);
          counts.approvalCases++;
          const r = await cli(['run', file, '--llm', 'openai', '--base-url', server.url, '--answers', answers, '--out', out, ...c.flags]);
          const dir = join(out, readdirSync(out)[0]!);
          expect(marker(dir), r.stderr).toBe(c.runs);
          if (marker(dir) && !c.runs) counts.approvalsFromFile++;
          if (c.runs) {
            expect(r.code, r.stderr).toBe(0);
            return;
          }
          expect(r.code, r.stderr).toBe(3); // stopped for a person
          expect(r.stderr).toMatch(/needs approval to run code, and answers from --answers FILE answer questions only/);
          expect(r.stderr).toMatch(/sop resume \S+ --auto-run/);
          expect(r.stderr).not.toMatch(/at .*\.js:\d+/); // no stack trace
          if (c.review) expect(readFileSync(join(dir, 'memory', 'plan.md'), 'utf8')).toContain('touch the marker');
          // The stopped run goes on as the user decides: with --auto-run the code runs now.
          const resumed = await cli(['resume', dir, '--auto-run']);
          expect(resumed.code, resumed.stderr).toBe(0);
          expect(marker(dir)).toBe(true);
        } finally {
          await server.close();
        }
      },
      60_000,
    );
  }
});

describe('the sandbox by default', () => {
  let root: string;
  let server: TestServer;
  /** A PATH with python3 and bash but no bwrap: bubblewrap is "not installed". */
  let noBwrapPath: string;
  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'sop-hostile-sandbox-'));
    noBwrapPath = join(root, 'bin');
    mkdirSync(noBwrapPath);
    const python = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], { encoding: 'utf8' }).stdout.trim();
    symlinkSync(python, join(noBwrapPath, 'python3'));
    symlinkSync(spawnSync('bash', ['-c', 'command -v bash'], { encoding: 'utf8' }).stdout.trim(), join(noBwrapPath, 'bash'));
    server = await startOpenAiServer({
      reply: (body) =>
        body.messages.some((m) => m.role === 'assistant')
          ? command('finish', { result: 'done' })
          : command('run_code', { code: 'print("hello from the code")' }),
    });
  });
  afterAll(async () => {
    await server?.close();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  function sop(): string {
    const file = join(root, 'hello.sop.json');
    writeFileSync(file, JSON.stringify(codeSop('hello', 'Ann')));
    return file;
  }
  const result = (out: string) => {
    const journal = readFileSync(join(out, readdirSync(out)[0]!, 'journal.jsonl'), 'utf8');
    return journal
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RunEvent)
      .find((e) => e.type === 'executor_result') as Extract<RunEvent, { type: 'executor_result' }>;
  };

  it.skipIf(!sandboxSupport().ok)(
    'runs code in the sandbox when bubblewrap works, without a word',
    async () => {
      const out = join(root, 'default');
      const r = await cli(['run', sop(), '--llm', 'openai', '--base-url', server.url, '--auto-run', '--out', out]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).not.toMatch(/warning/);
      expect(result(out).result).toMatch(/^The python code ran in the run's python session \(cell 1\) in the sandbox: exit code 0\./);
    },
    60_000,
  );

  it('without bubblewrap: one warning and code runs unsandboxed; --sandbox refuses with one line', async () => {
    const out = join(root, 'no-bwrap');
    const r = await cli(['run', sop(), '--llm', 'openai', '--base-url', server.url, '--auto-run', '--out', out], { PATH: noBwrapPath });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr.match(/warning: code runs without a sandbox: bwrap \(bubblewrap\) is not installed/g)).toHaveLength(1);
    expect(result(out).result).toMatch(/^The python code ran in the run's python session \(cell 1\): exit code 0\./);
    const required = await cli(
      ['run', sop(), '--llm', 'openai', '--base-url', server.url, '--auto-run', '--sandbox', '--out', join(root, 'required')],
      { PATH: noBwrapPath },
    );
    expect(required.code).toBe(1);
    expect(required.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: --sandbox: bwrap \(bubblewrap\) is not installed/)]);
  }, 60_000);
});
