// Hostile input to sop sweep: bad grids, data files and options get one clear error line (no
// stack trace) before anything is written; a results.jsonl torn by a kill or holding garbage loses
// no finished run and counts none twice; a sweep stopped with Ctrl-C continues where it stopped;
// failed runs say why; an API key echoed by the LLM server is never written.
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { sweepRunSettings } from '../src/apps/sweep/run-point.js';
import { Progress } from '../src/apps/sweep/progress.js';
import type { ResultLine } from '../src/apps/sweep/results.js';
import { startOpenAiServer } from './helpers/openai-server.js';
import { spawnCli, spawnCliAsync } from './helpers/cli.js';

const DEBATE = join(process.cwd(), 'examples/debate/debate.sop.json');
const CASSETTE = join(process.cwd(), 'examples/debate/debate.cassette.json');
const KEY = 'sk-test-SECRET123';
/** The shared secret queued jobs are signed with (sop sweep --queue and sop worker need it). */
const QUEUE_ENV = { SOP_QUEUE_SECRET: 'hostile-sweep-secret-0123456789' };
let refused = 0;
let damaged = 0;
let twice = 0;
let resumed = 0;
let failuresExplained = 0;
let keysWritten = 0;
let warned = 0;

async function sop(args: string[]) {
  const r = await spawnCliAsync([...args], { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const lines = (out: string): ResultLine[] =>
  readFileSync(join(out, 'results.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ResultLine);

/** The CLI as a child process that does not block this one (a test server answers it). */
function sopAsync(args: string[], env: NodeJS.ProcessEnv = {}) {
  const child = spawnCli([...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  const waiters: Array<() => void> = [];
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
    waiters.forEach((w) => w());
  });
  child.stdout.resume();
  const exited = new Promise<number | null>((done) => child.on('close', (code) => done(code)));
  return {
    child,
    exited,
    get stderr() {
      return stderr;
    },
    /** Resolves once stderr matches. */
    waitFor: (re: RegExp) =>
      new Promise<void>((done) => {
        const check = () => re.test(stderr) && done();
        waiters.push(check);
        check();
      }),
  };
}

/** Every file under a folder, recursively. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
}

afterAll(() => {
  console.log(
    `hostile sweep: ${refused} bad inputs refused with one line, ${damaged} damaged results files recovered, ${twice} runs counted twice, ` +
      `${resumed} runs stopped by Ctrl-C continued, ${failuresExplained} failed runs explained in results.jsonl and summary.md, ${keysWritten} API keys written, ${warned} re-runs with changed settings warned`,
  );
});

describe('hostile sweep input', () => {
  it('bad input: one clear error line, no stack trace, nothing written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-sweep-'));
    writeFileSync(join(dir, 'bad.jsonl'), '{"topic":"ok"}\n[1,2]\n');
    writeFileSync(join(dir, 'bad.csv'), 'topic,other\n"unclosed\n');
    writeFileSync(join(dir, 'after.csv'), 'topic\n"ok"\n"ab"cd\n');
    writeFileSync(join(dir, 'twice.csv'), 'topic,topic\na,b\n');
    writeFileSync(join(dir, 'empty.csv'), '');
    writeFileSync(join(dir, 'header.csv'), 'topic\n');
    writeFileSync(join(dir, 'a-file'), 'not a folder');
    writeFileSync(join(dir, 'numbers.json'), '[1, 2]');
    const cases = [
      [['--seeds', '9-2'], /--seeds "9-2"/],
      [['--inputs', join(dir, 'bad.jsonl')], /bad\.jsonl:2: each line must be a JSON object/],
      [['--inputs', join(dir, 'bad.csv')], /bad\.csv:2: a quoted field is not closed/],
      [['--inputs', join(dir, 'missing.jsonl')], /--inputs .*missing\.jsonl/],
      [['--concurrency', '0'], /--concurrency must be/],
      [['--detach'], /--detach needs --queue/],
      [
        ['--detach', '--collect', '--queue', 'redis://127.0.0.1:1'],
        /--detach queues the runs and --collect gathers them: give one of the two/,
      ],
      [['--queue', 'http://x'], /--queue "http:\/\/x": use redis:\/\/HOST:PORT/],
      // an empty --queue is not "no queue": the sweep does not quietly run here instead
      [['--queue', ''], /--queue "" is not a URL/],
      [['--seeds', 'x'], /--seeds "x": use a number/],
      [['--inputs', join(dir, 'after.csv')], /after\.csv:3: text after the closing quote/],
      [['--inputs', join(dir, 'twice.csv')], /twice\.csv: column "topic" appears twice/],
      [['--inputs', join(dir, 'empty.csv')], /empty\.csv: no header row/],
      [['--inputs', join(dir, 'header.csv')], /header\.csv: no rows/],
      [['--model', ''], /--model "": an empty model name/],
      // options every run would fail on, one by one: refused once, before anything starts
      [['--threads', '0'], /--threads must be a whole number, at least 1 \(got 0\)/],
      [['--max-turns', '0'], /--max-turns must be a whole number of turns/],
      [['--max-turns', 'x'], /--max-turns must be a whole number of turns/],
      [['--timeout', '0'], /--timeout must be a number of seconds above 0/],
      [['--attempts', '0', '--queue', 'redis://127.0.0.1:1'], /--attempts must be a whole number/],
      [['--llm', 'bogus'], /unknown --llm "bogus"/],
      [['--llm', `replay:${join(dir, 'missing.cassette.json')}`], /missing\.cassette\.json/],
      [['--pricing', join(dir, 'missing-pricing.json')], /missing-pricing\.json/],
      // each run's budgets and answers file
      [['--budget-tokens', '0'], /--budget-tokens must be a number above 0, the budget of each run \(got 0\)/],
      [['--budget-tokens', 'x'], /--budget-tokens must be a number above 0/],
      [['--budget-usd', '-0.5'], /--budget-usd must be a number above 0, the budget of each run \(got -0\.5\)/],
      [['--answers', join(dir, 'missing-answers.txt')], /answers file .*missing-answers\.txt: cannot read \(ENOENT\)/],
      [['--answers', join(dir, 'numbers.json')], /answers file .*numbers\.json: must be a JSON list of strings/],
    ] as const;
    // four at a time, each with its own --out (the option given last wins, so --llm bogus
    // replaces the --llm mock given first)
    const results: Array<{ code: number | null; stderr: string }> = [];
    for (let i = 0; i < cases.length; i += 4) {
      const batch = cases.slice(i, i + 4).map(async ([args], j) => {
        const p = sopAsync(['sweep', DEBATE, '--llm', 'mock', ...args, '--out', join(dir, `OUT-${i + j}`)]);
        return { code: await p.exited, stderr: p.stderr };
      });
      results.push(...(await Promise.all(batch)));
    }
    for (const [i, [args, message]] of cases.entries()) {
      const out = join(dir, `OUT-${i}`);
      const r = results[i]!;
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).not.toMatch(/\n\s+at /);
      expect(existsSync(out), `${args.join(' ')} wrote ${out}`).toBe(false);
      refused++;
    }
    // --out naming a file: refused, the file untouched
    const onFile = await sop(['sweep', DEBATE, '--llm', 'mock', '--out', join(dir, 'a-file')]);
    expect(onFile.code).toBe(1);
    expect(onFile.stderr.trim().split('\n')).toEqual([
      `error: --out ${join(dir, 'a-file')}: is a file, not a folder (give a folder for results.jsonl, summary.md and runs/)`,
    ]);
    expect(readFileSync(join(dir, 'a-file'), 'utf8')).toBe('not a folder');
    refused++;
    // a required input no run of the grid has: one line, not one failed run per grid point
    const coder = join(process.cwd(), 'sops/coder.sop.json');
    const req = await sop(['sweep', coder, '--llm', 'mock', '--seeds', '1-20', '--out', join(dir, 'OUT')]);
    expect(req.code).toBe(1);
    expect(req.stderr.trim().split('\n')).toHaveLength(1);
    expect(req.stderr).toMatch(
      /^error: input "goal" is required .* and 20 of 20 runs have none: give --input goal=VALUE or a "goal" column in --inputs$/m,
    );
    expect(existsSync(join(dir, 'OUT'))).toBe(false);
    refused++;
    // sop worker: bad values refused before connecting
    for (const [args, message] of [
      [['--queue', ''], /--queue "" is not a URL/],
      [['--queue', 'redis://127.0.0.1:1', '--lock-ms', '0'], /--lock-ms must be a whole number of milliseconds, at least 1000/],
      [
        ['--queue', 'redis://127.0.0.1:1', '--shared-limit', '0.5'],
        /--shared-limit must be a whole number of LLM calls, at least 1 \(got 0.5\)/,
      ],
    ] as const) {
      const r = await sop(['worker', ...args]);
      expect(r.code, r.stderr).toBe(1);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
      expect(r.stderr).toMatch(message);
      refused++;
    }
  }, 600_000); // about forty CLI processes, one after another: minutes on a busy two-core machine

  it('a queue nothing listens on: one error line from sop sweep and from sop worker, no "queue:" noise', async () => {
    const port = await new Promise<number>((done) => {
      const srv = createServer().listen(0, '127.0.0.1', () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => done(p));
      });
    });
    const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
    const url = `redis://127.0.0.1:${port}`;
    const sweep = sopAsync(
      [
        'sweep',
        DEBATE,
        '--llm',
        'mock',
        '--queue',
        url,
        '--concurrency',
        '4',
        '--base-url',
        'http://127.0.0.1:9/v1?api-key=abcdefSECRET',
        '--out',
        out,
      ],
      QUEUE_ENV,
    );
    const worker = sopAsync(['worker', '--queue', url], QUEUE_ENV);
    expect(await sweep.exited).toBe(1);
    expect(await worker.exited).toBe(1);
    for (const r of [sweep, worker]) {
      const errors = r.stderr.split('\n').filter((l) => /error|ECONNREFUSED/.test(l));
      expect(errors, r.stderr).toEqual([`error: cannot reach Redis at ${url} within 10 s (connect ECONNREFUSED 127.0.0.1:${port})`]);
      expect(r.stderr).not.toMatch(/^(queue|worker): /m);
      refused++;
    }
    // a credential in --base-url would go to Redis with each job: said (and the credential itself is not printed)
    expect(sweep.stderr).toContain(
      'warning: --base-url holds a credential, and a queued job carries its --base-url to the workers through Redis',
    );
    expect(sweep.stderr).not.toContain('abcdefSECRET');
    // --concurrency is the workers' business on a queue: said, not silently ignored
    expect(sweep.stderr).toContain(
      'warning: --concurrency and --threads are for a sweep in this process; on a queue, give each sop worker its --concurrency',
    );
  }, 60_000);

  it('a queued job carries the replay cassette by its absolute path (a worker in another folder finds it)', () => {
    expect(sweepRunSettings({ llm: 'replay:examples/debate/debate.cassette.json', pricing: 'p.json' })).toMatchObject({
      llm: `replay:${resolve('examples/debate/debate.cassette.json')}`,
      pricing: resolve('p.json'),
    });
    expect(sweepRunSettings({ llm: 'mock' }).llm).toBe('mock');
  });

  it('a results.jsonl with a torn last line and garbage: the finished runs stay, the lost one is read back, one line each', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
    expect((await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--out', out])).code).toBe(0);
    const [a, b, c] = lines(out);
    // a kill tore the line of c; garbage and a duplicate of a around it
    writeFileSync(join(out, 'results.jsonl'), `${JSON.stringify(a)}\nnot json\n${JSON.stringify(b)}\n${JSON.stringify(a)}\n`);
    appendFileSync(join(out, 'results.jsonl'), JSON.stringify(c).slice(0, 40));
    const r = await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('2 already done, skipped');
    const rs = lines(out);
    twice += rs.length - new Set(rs.map((x) => x.key)).size;
    expect(rs.map((x) => x.key)).toEqual([a!.key, b!.key, c!.key]);
    // c had finished: read back from its journal, not run again
    expect(rs[2]!.resumed).toBe(true);
    expect(rs[2]!.turns).toBe(c!.turns);
    const journal = readFileSync(join(c!.run_dir!, 'journal.jsonl'), 'utf8');
    expect(journal.match(/"type":"run_started"/g)).toHaveLength(1);
    damaged++;
  });
});

describe('hostile sweep runs', () => {
  it("a run stopped by the SOP's budget is an outcome: it says which budget, and a re-run does not start it again and again", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-sweep-'));
    const file = join(dir, 'budget.sop.json');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(DEBATE, 'utf8')), budget: { tokens: 1500 } }));
    const out = join(dir, 'OUT');
    const args = ['sweep', file, '--llm', `replay:${CASSETTE}`, '--out', out];
    const r = await sop(args);
    expect(r.stderr).toContain('1 of 1 runs done (1 stopped by a budget), 0 failed;');
    expect(r.code).toBe(0);
    const [line] = lines(out);
    expect(line!.status).toBe('budget');
    expect(line!.budget).toMatch(/1500/);
    const again = await sop(args);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('(1 already done, skipped)');
    expect(lines(out)).toEqual([line]);
  });

  it('the same folder swept again with another --llm: a warning says the runs already done were made with the first', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
    expect((await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-2', '--out', out])).code).toBe(0);
    const r = await sop(['sweep', DEBATE, '--llm', `replay:${CASSETTE}`, '--seeds', '1-2', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(
      `warning: the runs in ${out} were made with --llm mock (now replay:${CASSETTE}): 2 already done are kept as they are (give another --out to run them all with these settings)`,
    );
    // the same settings again: no warning
    expect((await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-2', '--out', out])).stderr).not.toContain('warning');
    warned++;
  });

  it('a smaller grid in the same folder: its summary counts its own runs, results.jsonl keeps the others', async () => {
    const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
    expect((await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-3', '--out', out])).code).toBe(0);
    const r = await sop(['sweep', DEBATE, '--llm', 'mock', '--seeds', '1-2', '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('2 of 2 runs done');
    expect(lines(out)).toHaveLength(3);
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toContain('2 runs. (results.jsonl also holds 1 runs of this folder that are not in this sweep');
    expect(summary).toContain('| finished | 2 | 100.0% |');
  });

  it('Ctrl-C stops a running sweep; the same command continues the stopped runs from their journals and counts none twice', async () => {
    // replies after 150 ms: the sweep is still running when it is interrupted
    const server = await startOpenAiServer({ latencyMs: 150 });
    try {
      const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
      const args = ['sweep', DEBATE, '--base-url', server.url, '--seeds', '1-6', '--concurrency', '3', '--threads', '1', '--out', out];
      const env = { OPENAI_API_KEY: KEY };
      let calls = 0;
      const first = sopAsync(args, env);
      // readiness: the header is printed and the runs have made some calls
      await first.waitFor(/sweep debate: 6 runs/);
      await new Promise<void>((done) => {
        const t = setInterval(() => {
          if (server.requests.length >= 9) {
            clearInterval(t);
            done();
          }
        }, 20);
      });
      first.child.kill('SIGINT');
      expect(await first.exited).toBe(130);
      expect(first.stderr).toContain('Stopping: runs in progress stop after their turn');
      expect(first.stderr).not.toMatch(/MaxListenersExceededWarning|\n\s+at /);
      const stopped = lines(out);
      expect(stopped.length).toBeGreaterThan(0);
      expect(stopped.every((x) => x.status === 'interrupted' && x.error?.startsWith('stopped by Ctrl-C'))).toBe(true);
      expect(first.stderr).toContain(`${stopped[0]!.key}: interrupted (stopped by Ctrl-C`);
      calls = server.requests.length;

      const again = sopAsync(args, env);
      expect(await again.exited).toBe(0);
      // it says what it does: which runs continue
      expect(again.stderr).toContain(`(${stopped.length} to continue from their journals)`);
      expect(again.stderr).toContain('6 of 6 runs done, 0 failed');
      const rs = lines(out);
      twice += rs.length - new Set(rs.map((x) => x.key)).size;
      expect(rs).toHaveLength(6);
      expect(rs.every((x) => x.status === 'finished')).toBe(true);
      for (const x of rs) {
        const journal = readFileSync(join(x.run_dir!, 'journal.jsonl'), 'utf8');
        expect(journal.match(/"type":"run_started"/g)).toHaveLength(1); // continued, not started again
        if (stopped.some((s) => s.key === x.key)) {
          expect(x.resumed).toBe(true);
          resumed++;
        }
      }
      // the calls made before Ctrl-C are not made again: the server saw each counted call once, plus
      // at most the one call per stopped run that Ctrl-C cut off (not counted, made again)
      const counted = rs.reduce((n, x) => n + x.usage.calls, 0);
      expect(calls).toBeGreaterThan(0);
      expect(server.requests.length).toBeGreaterThanOrEqual(counted);
      expect(server.requests.length).toBeLessThanOrEqual(counted + stopped.length);
    } finally {
      await server.close();
    }
  }, 120_000);

  it('runs that fail say why: in results.jsonl, in summary.md and on stderr (no control characters off a terminal)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-sweep-'));
    // a cassette that runs out after 10 calls
    const cassette = JSON.parse(readFileSync(CASSETTE, 'utf8')) as { interactions: unknown[] };
    cassette.interactions = cassette.interactions.slice(0, 10);
    writeFileSync(join(dir, 'short.cassette.json'), JSON.stringify(cassette));
    const out = join(dir, 'OUT');
    const r = await sop(['sweep', DEBATE, '--llm', `replay:${join(dir, 'short.cassette.json')}`, '--seeds', '1-2', '--out', out]);
    expect(r.code).toBe(1);
    expect(r.stderr).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/); // eslint-disable-line no-control-regex
    const rs = lines(out);
    for (const x of rs) {
      expect(x.status).toBe('failed');
      expect(x.error).toMatch(/short\.cassette\.json: ran out after 10 interactions; the run asked for/);
      expect(r.stderr).toContain(`${x.key}: failed (${x.error})`);
    }
    const summary = readFileSync(join(out, 'summary.md'), 'utf8');
    expect(summary).toContain('## Not finished');
    expect(summary).toMatch(/\| failed: cassette .*short\.cassette\.json: ran out after 10 interactions; .* \| 2 \| s1-e05f9edf \|/);
    failuresExplained += rs.length;
  });

  it('an LLM server that echoes the API key in its error: the key is in no output and no file', async () => {
    const server = await startOpenAiServer({
      fault: () => ({
        kind: 'status',
        status: 400,
        body: { error: { message: `bad request for Bearer ${KEY}`, type: 'invalid_request_error' } },
      }),
    });
    try {
      const out = join(mkdtempSync(join(tmpdir(), 'sop-sweep-')), 'OUT');
      const r = sopAsync(['sweep', DEBATE, '--base-url', server.url, '--seeds', '1-2', '--out', out], { OPENAI_API_KEY: KEY });
      expect(await r.exited).toBe(1);
      expect(r.stderr).toContain('bad request for Bearer [REDACTED]');
      const files = filesUnder(out);
      expect(files.some((f) => f.endsWith('results.jsonl'))).toBe(true);
      for (const text of [r.stderr, ...files.map((f) => readFileSync(f, 'utf8'))]) if (text.includes('SECRET123')) keysWritten++;
      expect(keysWritten).toBe(0);
      expect(lines(out)[0]!.error).toContain('[REDACTED]');
    } finally {
      await server.close();
    }
  });

  it('the progress bar on a terminal: as wide as the terminal (120 columns when it tells no width), failures printed above it', () => {
    let written = '';
    const progress = new Progress({ total: 3, skipped: 0, out: { isTTY: true, columns: 0, write: (s: string) => (written += s) } });
    progress.start();
    progress.end({ key: 'k1', status: 'failed', error: 'the\nreason' } as ResultLine);
    progress.stop();
    const last = written.split('\r\x1b[2K').pop()!;
    expect(last).toMatch(/^\[#+\.+\] 1\/3 done · 0 running · 1 failed · .* tokens\n$/);
    expect(written).toContain('\r\x1b[2Kk1: failed (the reason)\n');
  });
});
