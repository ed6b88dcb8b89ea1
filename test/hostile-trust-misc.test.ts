// Hostile trust, the medium and low items of issue 23: code whose escaped child (cleared
// environment, its own session) keeps the output open; concurrent resumes of one run; secrets
// by newer names handed to code; a human player shown what their agent may not see; and the
// low items (disk full, render limits, sub-flow cycles across files, lost replies, edited
// journals, resume --record). Everything runs the real executors or the real `sop` binary;
// only the LLM is replaced (a local OpenAI-compatible server, mock or cassettes).
import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { executor as code } from '../src/features/actions/executors/code.js';
import { CodeSession } from '../src/features/actions/executors/session/code-session.js';
import { makeRedactor } from '../src/shared/util/redact.js';
import { RenderLimitError, withinLimits } from '../src/format/sop/render-limits.js';
import { execContext, tempDir } from './helpers/executor-context.js';
import { CLI, runCli } from './helpers/cli.js';
import { startOpenAiServer } from './helpers/openai-server.js';
import { scaled } from './helpers/time.js';

const counts = {
  escaped: 0,
  escapedReaped: 0,
  secretVars: 0,
  secretVarsWithheld: 0,
  resumePairs: 0,
  doubleResumes: 0,
  playerHidden: 0,
  playerShown: 0,
  playerLeaks: 0,
  embeddingCalls: 0,
  embeddingCounted: 0,
  diskFull: 'skipped',
};

afterAll(() => {
  console.log(
    `hostile trust (misc): ${counts.escapedReaped}/${counts.escaped} escaped children (env -i setsid, output held) reaped; ` +
      `${counts.secretVarsWithheld}/${counts.secretVars} secret variables withheld from code and redacted; ` +
      `${counts.doubleResumes} double resumes in ${counts.resumePairs} pairs of concurrent resumes; ` +
      `a human player at a terminal: ${counts.playerShown} messages shown with their marks, ${counts.playerHidden} kept from them, ${counts.playerLeaks} leaks; ` +
      `${counts.embeddingCounted}/${counts.embeddingCalls} embedding calls counted in usage, cost and budgets; ` +
      `disk full on --record and in a sweep: ${counts.diskFull}`,
  );
});

const gone = (pid: number) => {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
};

/** A zombie is gone for our purpose (it holds nothing); its state letter is Z. */
function dead(pid: number): boolean {
  if (gone(pid)) return true;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}

async function waitDead(pid: number, ms: number): Promise<boolean> {
  const end = Date.now() + scaled(ms);
  while (Date.now() < end) {
    if (dead(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return dead(pid);
}

/**
 * A script whose child clears its environment (so it carries no run tag), leaves the process
 * group (setsid) and keeps the script's stdout open; it waits until the escape has happened.
 */
const escape = (after: string) =>
  [
    'env -i setsid sleep 1000 < /dev/null &',
    'pid=$!',
    'for i in $(seq 1 5000); do [ -e /proc/$pid ] || break; [ "$(cut -d" " -f6 /proc/$pid/stat 2>/dev/null)" = "$pid" ] && break; done',
    'echo "escaped $pid"',
    after,
  ].join('\n');

describe('code whose escaped child keeps stdout open (no sandbox)', () => {
  // Waiting for the escaped child (sleep 1000) instead would outlast the test's timeout; a script
  // that ended is not reported as timed out.
  it.each([
    ['when the script ends', '', scaled(30_000)],
    ['at the timeout', 'sleep 1000', scaled(5_000)],
  ])('returns and the child is reaped %s', async (_label, after, timeoutMs) => {
    const r = await code.run(
      { language: 'bash', code: escape(after) },
      execContext({ settings: { language: 'bash', timeout_ms: timeoutMs } }),
    );
    const pid = Number(/escaped (\d+)/.exec(r.result)?.[1]);
    expect(pid, r.result).toBeGreaterThan(0);
    counts.escaped++;
    const reaped = await waitDead(pid, 5_000);
    if (!reaped) process.kill(pid, 'SIGKILL'); // clean up what the test started
    expect(reaped).toBe(true);
    if (after) expect(r.result).toContain('timeout');
    else expect(r.result).toContain('exit code 0');
    counts.escapedReaped++;
  });

  it('a session cell returns at its timeout, and the session starts afresh', async () => {
    const session = new CodeSession({ language: 'python', cwd: tempDir(), sandbox: false });
    const cell = [
      'import shutil, subprocess, time',
      "p = subprocess.Popen([shutil.which('sleep'), '1000'], env={}, start_new_session=True, stdin=subprocess.DEVNULL)",
      "print('escaped', p.pid, flush=True)",
      'time.sleep(1000)',
    ].join('\n');
    try {
      const r = await session.run(cell, { timeoutMs: scaled(5_000) });
      const pid = Number(/escaped (\d+)/.exec(r.stdout)?.[1]);
      expect(pid, JSON.stringify(r)).toBeGreaterThan(0);
      counts.escaped++;
      expect(r.timedOut).toBe(true);
      const reaped = await waitDead(pid, 5_000);
      if (!reaped) process.kill(pid, 'SIGKILL');
      expect(reaped).toBe(true);
      counts.escapedReaped++;
      const next = await session.run("print('again')", { timeoutMs: scaled(30_000) });
      expect(next.stdout.trim()).toBe('again');
    } finally {
      session.close();
    }
  });
});

describe('secrets by newer names', () => {
  const canaries: Record<string, string> = {
    MYSQL_PWD: 'mysql-canary-pw-4417',
    PGPASSWORD: 'pg-canary-pw-9021',
    JWT: 'eyJhbGciOiJIUzI1NiJ9.eyJjYW5hcnkiOjF9.c2lnY2FuYXJ5',
    TEAM_WEBHOOK_URL: 'https://hooks.example.test/services/T0/B0/canaryhook77',
    SENTRY_DSN: 'https://canarydsn5512@o1.ingest.example.test/42',
  };
  it('are not in the environment of code, and are redacted wherever they are printed', async () => {
    const saved = { ...process.env };
    Object.assign(process.env, canaries);
    try {
      const r = await code.run({ language: 'bash', code: 'env' }, execContext({ settings: { language: 'bash' } }));
      expect(r.result).toContain('SOP_WORKSPACE=');
      const redact = makeRedactor();
      for (const [name, value] of Object.entries(canaries)) {
        counts.secretVars++;
        // not handed to the code at all
        expect(r.result, name).not.toContain(`${name}=`);
        expect(r.result, name).not.toContain(value);
        // and redacted where anything prints it (code reading its parent's environ, a reply)
        const b64 = Buffer.from(value).toString('base64');
        const shown = redact(`x ${value} ${b64} y`);
        expect(shown, name).toMatch(/^x \[REDACTED\] \[REDACTED\]/);
        expect(shown, name).not.toContain(value);
        expect(shown, name).not.toContain(b64.slice(0, 8));
        counts.secretVarsWithheld++;
      }
    } finally {
      for (const k of Object.keys(canaries)) if (!(k in saved)) delete process.env[k];
    }
  });
});

const FIX = join(process.cwd(), 'test/fixtures/durable');
const TOWN = [
  'run',
  join(FIX, 'town.sop.json'),
  '--llm',
  `replay:${join(FIX, 'town.cassette.json')}`,
  '--answers',
  join(FIX, 'answers.txt'),
  '--seed',
  '7',
];

/** A run of the town SOP SIGKILLed once it has printed `lines` --json events; its run folder. */
function killedRun(out: string, lines: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...TOWN, '--json', '--out', out], { stdio: ['ignore', 'pipe', 'ignore'] });
    let seen = 0;
    child.stdout.on('data', (c: Buffer) => {
      for (const b of c) if (b === 10) seen++;
      if (seen >= lines) child.kill('SIGKILL');
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) return reject(new Error('the run finished before it was killed'));
      const dirs = readdirSync(out).filter((d) => !d.startsWith('.'));
      resolve(join(out, dirs[0]!));
    });
  });
}

const journalTypes = (dir: string) =>
  readFileSync(join(dir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      try {
        return (JSON.parse(l) as { type: string }).type;
      } catch {
        return 'torn';
      }
    });

describe('two concurrent resumes of one run', () => {
  it('never both continue', async () => {
    const base = tempDir('sop-double-resume-');
    for (const [i, lines] of [12, 20, 28, 36, 16, 24, 32, 40].entries()) {
      const dir = await killedRun(join(base, `r${i}`), lines);
      const [a, b] = await Promise.all([runCli(['resume', dir, '--quiet']), runCli(['resume', dir, '--quiet'])]);
      counts.resumePairs++;
      const resumed = journalTypes(dir).filter((t) => t === 'resumed').length;
      if (resumed > 1) counts.doubleResumes++;
      expect(resumed, `${a.stderr}\n---\n${b.stderr}`).toBe(1);
      // the other one said why in one line: the run is in use, or already finished
      const other = [a, b].find((r) => !/Resuming run/.test(r.stderr));
      expect(other, `${a.stderr}\n---\n${b.stderr}`).toBeDefined();
      expect(other!.stderr.trim().split('\n')).toHaveLength(1);
      expect(other!.stderr).toMatch(/still running \(process \d+\)|already finished/);
    }
  }, 600_000); // 24 CLI processes: about 30 s on a quiet machine, 300 s at a load of 50

  it('a resume holds the lock from before it reads the journal', async () => {
    const dir = await killedRun(tempDir('sop-held-resume-'), 20);
    // a process that has read the journal to resume it, and not yet gone on
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { prepareResume } from ${JSON.stringify(join(process.cwd(), 'dist/src/api/continue.js'))};
         prepareResume(${JSON.stringify(dir)}); console.log('read'); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.on('data', (c: Buffer) => c.toString().includes('read') && resolve());
        holder.on('close', () => reject(new Error('the holder ended')));
      });
      const second = await runCli(['resume', dir, '--quiet']);
      expect(second.status).toBe(1);
      expect(second.stderr).toMatch(new RegExp(`still running \\(process ${holder.pid}\\)`));
      expect(journalTypes(dir)).not.toContain('resumed');
    } finally {
      holder.kill('SIGKILL');
    }
    await new Promise((r) => holder.once('close', r));
    // its lock is stale now: the next resume takes it over and continues
    const third = await runCli(['resume', dir, '--quiet']);
    expect(third.status, third.stderr).toBe(0);
    expect(journalTypes(dir).filter((t) => t === 'resumed')).toHaveLength(1);
  }, 60_000);
});

const hasScript = /util-linux/.test(spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout ?? '');
if (!hasScript) console.warn('hostile-trust-misc: the human player test is skipped: util-linux `script` is not installed');

describe('a human player at a terminal', () => {
  it.skipIf(!hasScript)(
    `sees only what their agent may see, with the audience marks${hasScript ? '' : ' (skipped: no `script`)'}`,
    async () => {
      // The auction: Ben (a bidder) is played by a person. The seller's reserve and the other
      // bidders' sealed bids are for the auctioneer only.
      const dir = tempDir('sop-player-');
      const sop = JSON.parse(readFileSync(join(process.cwd(), 'examples/auction/auction.sop.json'), 'utf8')) as {
        $schema?: string;
        agents: Record<string, { human?: boolean }>;
      };
      delete sop.$schema;
      sop.agents.Ben!.human = true;
      writeFileSync(join(dir, 'auction.sop.json'), JSON.stringify(sop));
      const out = join(dir, 'out');
      const bids = ['I bid <bid>410</bid>', 'Final: <bid>455</bid>'];
      const cmd = `stty cols 250; ${process.execPath} ${CLI} run auction.sop.json --llm mock --out out`;
      const screen = await new Promise<string>((resolve, reject) => {
        const child = spawn('script', ['-qfec', cmd, '/dev/null'], { cwd: dir, stdio: ['pipe', 'pipe', 'pipe'] });
        let text = '';
        let asked = 0;
        child.stdout.on('data', (c: Buffer) => {
          text += c.toString();
          // a prompt is answered once it is shown; Ctrl-D after the last bid
          const prompts = text.split('Ben (Bidder A) > ').length - 1;
          while (asked < prompts) child.stdin.write(asked < bids.length ? `${bids[asked++]}\n` : (asked++, '\u0004'));
        });
        child.on('error', reject);
        child.on('close', () => resolve(text));
      });
      // eslint-disable-next-line no-control-regex -- the terminal's escape sequences are removed
      const plain = screen.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
      const runDir = join(out, readdirSync(out)[0]!);
      const messages = readFileSync(join(runDir, 'transcript.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as { sender: string; content: string; audience?: string[]; to?: string; kind: string });
      expect(messages.filter((m) => m.sender === 'Ben')).toHaveLength(2);
      for (const m of messages) {
        const mayBenSee = m.audience === undefined || m.sender === 'Ben' || m.audience.includes('Ben');
        const first = m.content.split('<')[0]!.trim().slice(0, 40); // before any tag the display labels
        if (!mayBenSee) {
          counts.playerHidden++;
          if (plain.includes(first)) counts.playerLeaks++;
          expect(plain, `${m.sender}: ${m.content}`).not.toContain(first);
        } else {
          counts.playerShown++;
          const mark = m.to !== undefined ? ` [to ${m.to}: ${m.audience!.map((a) => (a === 'Ben' ? 'Ben (you)' : a)).join(', ')}]` : '';
          expect(plain).toContain(`${m.sender} (`);
          expect(plain, m.content).toContain(first);
          if (mark) expect(plain).toContain(mark);
        }
      }
      expect(counts.playerHidden).toBeGreaterThanOrEqual(3);
    },
    60_000,
  );
});

describe('embedding calls', () => {
  it('count in usage, cost and budgets', async () => {
    const server = await startOpenAiServer({ embeddingDim: 32 });
    try {
      const out = tempDir('sop-embed-usage-');
      const r = await runCli(
        [
          'run',
          join(process.cwd(), 'examples/debate/debate.sop.json'),
          '--llm',
          'openai',
          '--base-url',
          server.url,
          '--embedder',
          'openai:text-embedding-3-small',
          '--top-k',
          '2',
          '--max-turns',
          '4',
          '--budget-tokens',
          '100000000',
          '--out',
          out,
          '--quiet',
        ],
        { OPENAI_API_KEY: 'sk-test-embeddings' },
      );
      expect(r.status, r.stderr).toBe(0);
      const dir = join(out, readdirSync(out)[0]!);
      // what the server was asked and said it counted
      const embedRequests = server.requests.filter((q) => q.path.endsWith('/embeddings'));
      const reported = embedRequests.reduce((n, q) => {
        const input = (q.body as { input: string[] }).input;
        return n + input.join(' ').length; // the test server's prompt_tokens
      }, 0);
      expect(embedRequests.length).toBeGreaterThan(1); // the probe, then the messages and queries
      counts.embeddingCalls += embedRequests.length;
      const usage = JSON.parse(readFileSync(join(dir, 'usage.json'), 'utf8')) as {
        calls: number;
        prompt_tokens: number;
        completion_tokens: number;
        cost?: number;
        by_purpose: Record<string, { calls: number; prompt_tokens: number; cost?: number }>;
      };
      const emb = usage.by_purpose.embedding!;
      expect(emb.calls).toBe(embedRequests.length);
      expect(emb.prompt_tokens).toBe(reported);
      expect(emb.cost).toBeCloseTo((reported * 0.02) / 1e6, 10); // pricing.json: text-embedding-3-small
      const chat = Object.entries(usage.by_purpose).filter(([k]) => k !== 'embedding');
      expect(usage.calls).toBe(emb.calls + chat.reduce((n, [, b]) => n + b.calls, 0));
      expect(usage.cost).toBeCloseTo(emb.cost! + chat.reduce((n, [, b]) => n + (b.cost ?? 0), 0), 10);
      // the --budget-tokens account was charged every token the usage holds, embeddings included
      type Checkpoint = {
        type: string;
        snapshot?: {
          usage: { prompt_tokens: number; completion_tokens: number; by_purpose: Record<string, { calls: number }> };
          extensions?: { budget?: { cli?: { tokens: number } } };
        };
      };
      const events = readFileSync(join(dir, 'journal.jsonl'), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l) as Checkpoint);
      const last = events.filter((e) => e.type === 'checkpoint').at(-1)!.snapshot!;
      expect(last.usage.by_purpose.embedding?.calls).toBeGreaterThan(0);
      expect(last.extensions?.budget?.cli?.tokens).toBe(last.usage.prompt_tokens + last.usage.completion_tokens);
      expect(events.filter((e) => e.type === 'embedding_call').length).toBe(embedRequests.length);
      counts.embeddingCounted += emb.calls;
    } finally {
      await server.close();
    }
  }, 60_000);
});

/** Whether a small tmpfs can be mounted in a private mount namespace here. */
function tinyDiskSupport(): string {
  const probe = tempDir('sop-tmpfs-probe-');
  const r = spawnSync('unshare', ['-rm', 'sh', '-c', `mount -t tmpfs -o size=64k tmpfs "${probe}"`], {
    encoding: 'utf8',
    timeout: scaled(10_000),
  });
  if (r.error) return `unshare is not available (${(r.error as NodeJS.ErrnoException).code})`;
  if (r.status !== 0) return `cannot mount a tmpfs in a private namespace here: ${(r.stderr || `exit ${r.status}`).trim()}`;
  return '';
}
const tinyDiskMissing = tinyDiskSupport();
if (tinyDiskMissing) console.warn(`hostile-trust-misc: disk-full test skipped: ${tinyDiskMissing}`);

describe('a full disk', () => {
  it.skipIf(tinyDiskMissing !== '')(
    `on --record and in a sweep says so in one line, naming the file and what to do${tinyDiskMissing ? ` (skipped: ${tinyDiskMissing})` : ''}`,
    async () => {
      const dir = tempDir('sop-tiny-disk-');
      const mnt = join(dir, 'm');
      const q = (x: string) => `'${x.replace(/'/g, `'\\''`)}'`;
      const sopCli = `${q(process.execPath)} ${q(CLI)}`;
      const debate = q(join(process.cwd(), 'examples/debate/debate.sop.json'));
      const script = [
        `mkdir -p ${q(mnt)} && mount -t tmpfs -o size=64k tmpfs ${q(mnt)} || exit 99`,
        // room for the cassette's first interactions, not for all of them
        `head -c 48000 /dev/zero > ${q(join(mnt, 'fill'))}`,
        `${sopCli} run ${debate} --llm mock --record ${q(join(mnt, 'c.json'))} --out ${q(join(dir, 'runs'))} --quiet; echo "record=$?"`,
        `rm ${q(join(mnt, 'fill'))}; head -c 30000 /dev/zero > ${q(join(mnt, 'fill'))}`,
        `${sopCli} sweep ${debate} --llm mock --seeds 1-4 --concurrency 1 --out ${q(join(mnt, 'sw'))}; echo "sweep=$?"`,
      ].join('\n');
      const r = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn('unshare', ['-rm', 'sh', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('error', reject);
        child.on('close', () => resolve({ stdout, stderr }));
      });
      expect(r.stdout).toMatch(/record=(1|130)/);
      expect(r.stderr).toMatch(/disk full: cannot write \S+\/c\.json \(ENOSPC\); nothing written before it was lost; free some space/);
      expect(r.stdout).toContain('sweep=1');
      // the runs, or one of the sweep's own files (results.jsonl, summary.md...: whichever fills the
      // disk first), could not be written: either way one line names it and says what to do
      const sweepDir = join(mnt, 'sw').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      expect(r.stderr).toMatch(
        new RegExp(
          `disk full: (\\d+ of the runs could not be written under ${sweepDir}|cannot write ${sweepDir}/\\S+ \\(ENOSPC\\); nothing written before it was lost); free some space, then run the same sop sweep again`,
        ),
      );
      expect(r.stderr).not.toMatch(/ENOSPC: no space left on device/); // Node's own message, which names no file
      expect(r.stderr).not.toMatch(/\n\s+at /);
      counts.diskFull = 'the cassette and the sweep named, 0 raw ENOSPC, 0 stack traces';
    },
    120_000,
  );
});

describe("V8's own string limit in a render", () => {
  it('becomes the render-limit message', () => {
    // 'x'.repeat(2 ** 30) is past the longest string V8 holds: it throws RangeError("Invalid string length")
    expect(() => 'x'.repeat(2 ** 30)).toThrow(/Invalid string length/);
    expect(() => withinLimits(() => 'x'.repeat(2 ** 30))).toThrow(RenderLimitError);
    expect(() => withinLimits(() => 'x'.repeat(2 ** 30))).toThrow(
      /grows past the longest string JavaScript can hold.*limit of 16,000,000 characters/,
    );
    expect(() =>
      withinLimits(() => {
        throw new RangeError('Maximum call stack size exceeded');
      }),
    ).toThrow(RangeError);
  });
});

describe('a sub-flow that names its own file', () => {
  const flow = (name: string, sub: string) => ({
    name,
    agents: { Boss: { roles: { boss: 'R' } } },
    root: 'boss',
    states: {
      boss: {
        roles: ['R'],
        commands: { again: { executor: 'sop', settings: { file: sub } }, finish: { executor: 'finish' } },
        controller: { max_turns: 3 },
        next_states: { 1: 'end' },
      },
      end: { final: true },
    },
  });
  it('is refused by validate, itself or through other files (a cycle across files)', async () => {
    const dir = tempDir('sop-subflow-cycle-');
    writeFileSync(join(dir, 'self.sop.json'), JSON.stringify(flow('self', 'self.sop.json')));
    writeFileSync(join(dir, 'a.sop.json'), JSON.stringify(flow('a', 'b.sop.json')));
    writeFileSync(join(dir, 'b.sop.json'), JSON.stringify(flow('b', './sub/../a.sop.json')));
    writeFileSync(join(dir, 'c.sop.json'), JSON.stringify(flow('c', 'a.sop.json'))); // leads into a cycle, not back to c
    const self = await runCli(['validate', join(dir, 'self.sop.json')]);
    expect(self.status).toBe(1);
    expect(self.stderr).toMatch(/states\/boss\/commands\/again\/settings\/file.*sub-flow cycle: self\.sop\.json -> self\.sop\.json/);
    const a = await runCli(['validate', join(dir, 'a.sop.json')]);
    expect(a.status).toBe(1);
    expect(a.stderr).toMatch(
      /sub-flow cycle: a\.sop\.json -> b\.sop\.json -> a\.sop\.json; a SOP that runs itself as a sub-flow never ends/,
    );
    expect(a.stderr.trim().split('\n')).toHaveLength(1);
    const c = await runCli(['validate', join(dir, 'c.sop.json')]);
    expect(c.stderr).not.toMatch(/cycle: c\.sop\.json/);
  });
});
