// sop view: the web viewer's server (token, confinement to the run folders, pages, live stream)
// and, in Debian's chromium driven by playwright-core, the pages as a person sees them.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFile, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync, appendFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSop, resumeRun, runSop } from '../src/index.js';
import { acquireRunLock } from '../src/features/journal/lock.js';
import { findRuns } from '../src/apps/view/runs.js';
import { startViewServer, type ViewServer } from '../src/apps/view/server.js';
import { startOpenAiServer, type TestServer } from './helpers/openai-server.js';
import { spawnCli } from './helpers/cli.js';
import { text } from './helpers/html-text.js';
import { scaled } from './helpers/time.js';

const DEBATE = 'examples/debate/debate.sop.json';
const CASSETTE = 'replay:examples/debate/debate.cassette.json';
const CHROMIUM = '/usr/bin/chromium';
const tmp = mkdtempSync(join(tmpdir(), 'sop-view-'));
const out = join(tmp, 'runs');
const RUN = 'debate-run';
const LIVE = 'live-run';
const KILLED = 'killed-run';
let server: ViewServer;
let lastMessage = '';
let journalLines: string[] = [];

/** GET with a raw, unnormalised path (fetch would resolve "../" before sending). */
function rawGet(url: string, path: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: u.hostname, port: u.port, path, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

beforeAll(async () => {
  const h = runSop(loadSop(DEBATE), { llm: CASSETTE, out, runId: RUN });
  for await (const e of h) void e;
  expect((await h.result).status).toBe('finished');
  const dir = join(out, RUN);
  const transcript = readFileSync(join(dir, 'transcript.jsonl'), 'utf8').trim().split('\n');
  lastMessage = (JSON.parse(transcript[transcript.length - 1]!) as { content: string }).content;
  // Files the run page shows, and a link out of the run folder it must not follow.
  mkdirSync(join(dir, 'memory'), { recursive: true });
  mkdirSync(join(dir, 'workspace'), { recursive: true });
  writeFileSync(join(dir, 'memory', 'notes.md'), 'Remember: <b>Oslo</b> numbers.\n');
  writeFileSync(join(dir, 'workspace', 'draft.txt'), 'draft of the closing speech\n');
  writeFileSync(join(tmp, 'secret.txt'), 'outside the run folders\n');
  symlinkSync(join(tmp, 'secret.txt'), join(dir, 'memory', 'link.md'));
  // A killed run: the debate's journal cut after its fifth message's checkpoint (the SSE test appends the rest).
  journalLines = readFileSync(join(dir, 'journal.jsonl'), 'utf8').split('\n').filter(Boolean);
  let messages = 0;
  const fifth = journalLines.findIndex((l) => l.startsWith('{"type":"message"') && ++messages === 5);
  const cut = journalLines.findIndex((l, i) => i > fifth && l.startsWith('{"type":"checkpoint"'));
  for (const name of [LIVE, KILLED]) {
    mkdirSync(join(out, name));
    writeFileSync(join(out, name, 'journal.jsonl'), journalLines.slice(0, cut + 1).join('\n') + '\n');
  }
  journalLines = journalLines.slice(cut + 1);
  server = await startViewServer({ runs: () => findRuns(out, false), pollMs: 100 });
});

afterAll(async () => {
  await server?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('sop view server', () => {
  it('answers nothing without its token: 403 for a missing or wrong token, on every path', async () => {
    const base = new URL(server.url).origin;
    for (const path of ['/', `/run/${RUN}`, `/run/${RUN}/events`, `/run/${RUN}/file?path=memory/notes.md`, '/static/mermaid.min.js']) {
      expect((await fetch(base + path)).status, path).toBe(403);
      const sep = path.includes('?') ? '&' : '?';
      expect((await fetch(`${base}${path}${sep}t=${'0'.repeat(server.token.length)}`)).status, path).toBe(403);
    }
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?t=[0-9a-f]{48}$/);
    expect((await fetch(server.url)).status).toBe(200);
  });

  it('lists the runs with status, SOP, turns, tokens, the cost (so far, for a killed run) and the start time', async () => {
    const page = text(await (await fetch(server.url)).text());
    expect(page).toContain(RUN);
    // the replayed run is priced from pricing.json (its model is gpt-4o-mini)
    expect(page).toMatch(/debate-runfinisheddebate17\d+ \(28 calls\)\$0\.\d{4}\d{4}-\d\d-\d\d /);
    expect(page).toMatch(/killed-runkilleddebate\d+ \(\d+ calls\)\$0\.\d{4}\d{4}-/); // from its last checkpoint
    expect(page).toMatch(/live-runkilleddebate5/);
    expect(page).toMatch(/killed-runkilleddebate5/);
  });

  it('renders the run page on the server: the whole transcript by state visit, inspectors, the graph source, charts, files', async () => {
    const html = await (await fetch(server.runUrl(RUN))).text();
    const page = text(html);
    expect(page).toContain(lastMessage);
    expect(html.match(/<article class="msg"/g)).toHaveLength(17);
    expect(html.match(/<section class="visit"/g)).toHaveLength(6); // 6 state_entered events, the last one (end) without messages
    expect(page).toContain('verdict visit 1');
    // The inspector of Ben's first message: the judge decision before it, the speaker choice, its LLM call.
    const ben = text(html.slice(html.indexOf('<article class="msg" id="m1"'), html.indexOf('<article class="msg" id="m2"')));
    expect(ben).toContain('judge in affirmative_prep after turn 1: key 0 → affirmative_prep');
    expect(ben).toContain('speaker for turn 2: Ben as Researcher (order)');
    expect(ben).toMatch(/agentBengpt-4o-mini18061\d+ ms666/);
    // The prompt Ben's reply came from, as the journal recorded it (docs/durability.md).
    expect(ben).toContain('agent call of Ben in affirmative_prep');
    expect(ben).toContain('Bring evidence and examples for the affirmative arguments.');
    // The Mermaid source: visit counts, the current (final) state highlighted.
    expect(page).toContain('classDef current');
    expect(page).toMatch(/state "end \(final\)<br\/>visited 1×" as (s\d+)\n\s+class \1 current/);
    expect(page).toMatch(/class s0 visited/);
    // Token charts by agent and by purpose, drawn on the server.
    expect(html).toContain('Tokens per agent');
    expect(html).toMatch(/<polyline[^>]*><title>Judge Ruth<\/title>/);
    expect(html).toMatch(/<polyline[^>]*><title>judge<\/title>/);
    // Memory and workspace files (escaped), but not the link out.
    expect(html).toContain('Remember: &lt;b&gt;Oslo&lt;/b&gt; numbers.');
    expect(page).toContain('workspace/draft.txt');
    expect(page).not.toContain('outside the run folders');
  });

  it('shows output tags as labelled blocks, a legend of distinct colours, and cost and resumes as sop runs shows them', async () => {
    const html = await (await fetch(server.runUrl(RUN))).text();
    // the judge's verdict: its role's output tag, whose text the message holds without the tag
    const verdict = html.slice(html.lastIndexOf('<article class="msg"'));
    expect(verdict).toContain('<div class="content"><span class="tag"><span class="tag-label">verdict</span>');
    // each chart's legend is HTML (it wraps), one colour per series, all different
    for (const chart of html.split('<figure class="chart">').slice(1)) {
      const swatches = [...chart.matchAll(/<span class="swatch" style="background:(#[0-9a-f]{6})"><\/span>/g)].map((m) => m[1]);
      expect(swatches.length).toBeGreaterThan(1);
      expect(new Set(swatches).size).toBe(swatches.length);
    }
    // a mock run (not priced: "-", as sop runs says), stopped at 3 turns and resumed
    const mock = runSop(loadSop(DEBATE), { llm: 'mock', out, runId: 'mock-run', maxTurns: 3 });
    for await (const e of mock) void e;
    const resumed = resumeRun(join(out, 'mock-run'), { maxTurns: 5 });
    for await (const e of resumed) void e;
    expect((await resumed.result).status).toBe('max_turns');
    const list = text(await (await fetch(server.url)).text());
    expect(list).toMatch(/mock-runmax_turns resumed 1×debate5\d+ \(\d+ calls\)-\d{4}-/);
    const page = text(await (await fetch(server.runUrl('mock-run'))).text());
    expect(page).toContain('max_turns resumed 1×');
    expect(page).toContain(' · cost - · ');
  });

  it('serves only files of the run folders: traversal, encoded traversal and links out are refused (more in hostile-view)', async () => {
    const t = server.token;
    const base = new URL(server.url).origin;
    const ok = await fetch(`${base}/run/${RUN}/file?path=memory/notes.md&t=${t}`);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toContain('Oslo');
    const refused = [
      `/run/${RUN}/file?path=../secret.txt&t=${t}`,
      `/run/${RUN}/file?path=memory/../../../secret.txt&t=${t}`,
      `/run/${RUN}/file?path=%2e%2e%2f%2e%2e%2fsecret.txt&t=${t}`,
      `/run/${RUN}/file?path=memory/link.md&t=${t}`,
      `/run/..%2Fsecret.txt?t=${t}`,
    ];
    for (const path of refused) {
      const r = await fetch(base + path);
      expect(r.status, path).toBe(404);
      expect(await r.text(), path).not.toContain('outside the run folders');
    }
    for (const path of [`/../secret.txt?t=${t}`, `/run/../../secret.txt?t=${t}`, `/static/../../secret.txt?t=${t}`]) {
      const r = await rawGet(server.url, path);
      expect(r.status, path).not.toBe(200);
      expect(r.body, path).not.toContain('outside the run folders');
    }
  });

  it('streams what a running journal gains as server-sent events, as it is written', async () => {
    const unlock = acquireRunLock(join(out, LIVE)); // held as the process writing a run holds it
    const html = await (await fetch(server.runUrl(LIVE))).text();
    expect(html).toContain('id="status">running<');
    expect(html.match(/<article class="msg"/g)).toHaveLength(5);
    const at = /data-at="(\d+:\d+)"/.exec(html)![1];
    const ctl = new AbortController();
    const res = await fetch(`${new URL(server.url).origin}/run/${LIVE}/events?t=${server.token}&at=${at}`, { signal: ctl.signal });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let got = '';
    const until = async (pred: () => boolean) => {
      while (!pred()) {
        const { value, done } = await reader.read();
        if (done) break;
        got += decoder.decode(value, { stream: true });
      }
    };
    // The next message of the debate, with the events before it, appended as a run would.
    const next = journalLines.findIndex((l) => l.startsWith('{"type":"message"'));
    const content = (JSON.parse(journalLines[next]!) as { message: { content: string } }).message.content;
    appendFileSync(join(out, LIVE, 'journal.jsonl'), journalLines.slice(0, next + 1).join('\n') + '\n');
    await until(() => got.includes('event: message')); // the server looks every 100 ms (pollMs)
    const data = got
      .slice(got.indexOf('event: message'))
      .split('\n')[1]!
      .replace(/^data: /, '');
    expect(text((JSON.parse(data) as { html: string }).html)).toContain(content);
    expect(got).not.toContain('Let&#39;s agree on our three strongest'); // messages already on the page are not sent again
    // The rest of the run, to its end: the stream says so and ends.
    appendFileSync(join(out, LIVE, 'journal.jsonl'), journalLines.slice(next + 1).join('\n') + '\n');
    unlock();
    await until(() => got.includes('event: end'));
    expect(got).toContain('"status":"finished"');
    expect(got.match(/event: message/g)).toHaveLength(12);
    expect(got).toContain('event: graph');
    ctl.abort();
  });

  it('does not hold a stream open on a killed run: it sends what there is, then has the page ask again; a resume reloads the page', async () => {
    const base = `${new URL(server.url).origin}/run/${KILLED}/events?t=${server.token}`;
    const html = await (await fetch(server.runUrl(KILLED))).text();
    const at = /data-at="(\d+:\d+)"/.exec(html)![1]!;
    const first = await (await fetch(`${base}&at=${at}`)).text(); // ends by itself
    expect(first).toContain('retry: 2000');
    expect(first).toContain('event: idle');
    expect(first).toContain('event: status\ndata: {"status":"killed"}');
    expect(first).not.toContain('event: message');
    // The page reconnects with the id of the last event it got; events since then are sent.
    const next = journalLines.findIndex((l) => l.startsWith('{"type":"message"'));
    appendFileSync(join(out, KILLED, 'journal.jsonl'), journalLines.slice(0, next + 1).join('\n') + '\n');
    const again = await (await fetch(base, { headers: { 'Last-Event-ID': at } })).text();
    expect(again.match(/event: message/g)).toHaveLength(1);
    const id = /^id: (\d+:\d+)$/m.exec(again)![1]!;
    // (prompt_part lines hold system prompts that prompt lines refer to: they are not events)
    const events = journalLines.slice(0, next + 1).filter((l) => !l.startsWith('{"type":"prompt_part"')).length;
    expect(id).toBe(`0:${Number(at.split(':')[1]) + events}`);
    // A resume (here: its marker line) rewrites the history: the page is told to reload.
    // (the killed run's last checkpoint is turn 5's: the sixth message's was never written)
    appendFileSync(
      join(out, KILLED, 'journal.jsonl'),
      JSON.stringify({ type: 'resumed', mode: 'resume', from_turn: 5, time: new Date().toISOString() }) + '\n',
    );
    expect(await (await fetch(base, { headers: { 'Last-Event-ID': id } })).text()).toContain('event: reload');
  });

  it('sop view RUN_DIR --port 0 --no-open prints the run page URL, which holds the last message', async () => {
    const child = spawnCli(['view', join(out, RUN), '--port', '0', '--no-open'], { stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let buf = '';
        child.stdout.on('data', (c: Buffer) => {
          buf += c.toString();
          if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
        });
        child.once('exit', (code) => reject(new Error(`sop view exited with ${code}`)));
      });
      expect(url).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:\\d+/run/${RUN}\\?t=[0-9a-f]{48}$`));
      expect(text(await (await fetch(url)).text())).toContain(lastMessage);
    } finally {
      child.kill('SIGTERM');
    }
  });

  it('refuses a folder that is not a run folder with one clear line', async () => {
    const child = spawnCli(['view', tmp, '--no-open'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let err = '';
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(1);
    expect(err.trim().split('\n')).toEqual([`error: ${tmp}: no journal.jsonl here; is it a run folder (sop runs lists them)?`]);
  });
});

const noChromium = !existsSync(CHROMIUM);
if (noChromium) console.warn(`sop view browser test skipped: ${CHROMIUM} is missing (apt-get install chromium)`);

describe('sop view in a browser (playwright-core, Debian chromium)', () => {
  let context: import('playwright-core').BrowserContext;
  const profile = join(tmp, 'chromium-profile');

  beforeAll(async () => {
    if (noChromium) return;
    const { chromium } = await import('playwright-core');
    context = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1280, height: 800 },
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });
  afterAll(async () => {
    await context?.close();
  });

  it.skipIf(noChromium)(
    'shows a finished debate: transcript, the graph as SVG, an inspector; a 1280x800 screenshot (docs/viewer.png with SOP_UPDATE_SCREENSHOT=1)',
    async () => {
      const page = await context.newPage();
      await page.goto(server.runUrl(RUN));
      await page.locator('#graph svg').first().waitFor();
      expect(await page.locator('#graph svg g.node, #graph svg .node').count()).toBeGreaterThanOrEqual(6);
      // the state graph fits its column: no scrolling to see it whole
      const fits = await page.evaluate(() => {
        const box = document.getElementById('graph')!;
        const svg = box.querySelector('svg')!.getBoundingClientRect();
        return {
          svg: svg.width,
          box: box.clientWidth,
          height: svg.height,
          screen: window.innerHeight,
          scrolls: box.scrollWidth > box.clientWidth || box.scrollHeight > box.clientHeight,
        };
      });
      expect(fits.svg).toBeLessThanOrEqual(fits.box);
      expect(fits.height).toBeLessThanOrEqual(fits.screen); // seen whole on one screen
      expect(fits.scrolls).toBe(false);
      expect(await page.locator('#transcript').innerText()).toContain(lastMessage.slice(-60));
      const inspector = page.locator('#m1 details.inspector');
      await inspector.locator('summary').click();
      const shown = await inspector.innerText();
      expect(shown).toContain('speaker for turn 2: Ben as Researcher (order)');
      expect(shown).toContain('Bring evidence and examples for the affirmative arguments.');
      expect(shown).toMatch(/agent\s+Ben\s+gpt-4o-mini\s+180\s+61/);
      // The README's screenshot is rewritten only when asked (SOP_UPDATE_SCREENSHOT=1), so a test run leaves the tree as it was.
      const shot = process.env.SOP_UPDATE_SCREENSHOT === '1' ? 'docs/viewer.png' : join(tmp, 'viewer.png');
      await page.screenshot({ path: shot });
      const png = readFileSync(shot);
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1280, 800]); // IHDR width, height
      await page.close();
    },
  );

  it.skipIf(noChromium)(
    'chromium --dump-dom of the URL `sop view RUN_DIR --port 0 --no-open` prints holds the last message; a killed run does not hang it',
    async () => {
      const dump = (url: string, profileDir: string) =>
        new Promise<string>((resolve, reject) => {
          execFile(
            CHROMIUM,
            [
              '--headless',
              '--no-sandbox',
              '--disable-gpu',
              `--user-data-dir=${profileDir}`,
              '--dump-dom',
              '--virtual-time-budget=8000',
              url,
            ],
            { timeout: scaled(60_000), maxBuffer: 64 * 1024 * 1024 }, // a page that never ends loading is killed: the test fails
            (err, stdout) => (err ? reject(new Error(err.message, { cause: err })) : resolve(stdout)),
          );
        });
      const child = spawnCli(['view', join(out, RUN), '--port', '0', '--no-open'], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      try {
        const url = await new Promise<string>((resolve) => {
          let buf = '';
          child.stdout.on('data', (c: Buffer) => {
            buf += c.toString();
            if (buf.includes('\n')) resolve(buf.split('\n')[0]!);
          });
        });
        const dom = await dump(url, join(tmp, 'dump-1'));
        expect(text(dom)).toContain(lastMessage);
        expect(dom).toMatch(/<svg id="mermaid-/); // the graph was drawn in the page
      } finally {
        child.kill('SIGTERM');
      }
      const killed = await dump(server.runUrl(KILLED), join(tmp, 'dump-2')); // a stream held open would hang it
      expect(killed).toContain('id="status">killed<');
    },
    180_000,
  );

  it.skipIf(noChromium)('follows a live run against an OpenAI-compatible server: messages appear while it runs', async () => {
    const liveOut = join(tmp, 'live');
    let firstRequest!: () => void;
    const started = new Promise<void>((r) => (firstRequest = r));
    const llm: TestServer = await startOpenAiServer({ latencyMs: 400, onRequest: () => firstRequest() });
    const viewer = await startViewServer({ runs: () => findRuns(liveOut, false) });
    let child: ChildProcess | undefined;
    try {
      child = spawnCli(['run', DEBATE, '--llm', 'openai', '--base-url', llm.url, '--out', liveOut, '--quiet', '--max-turns', '12'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, OPENAI_API_KEY: 'test-key' },
      });
      const exited = new Promise<number | null>((r) => child!.once('exit', r));
      await started;
      const [id] = readdirSync(liveOut);
      const page = await context.newPage();
      await page.goto(viewer.runUrl(id!));
      const first = await page.locator('.msg').count();
      expect(first).toBeLessThan(12);
      await page.waitForFunction((n) => document.querySelectorAll('.msg').length > n, first, { timeout: scaled(30_000) });
      expect(await exited).toBe(0);
      await page.waitForFunction(() => document.getElementById('status')?.textContent !== 'running', undefined, {
        timeout: scaled(10_000),
      });
      await page.waitForFunction(() => document.querySelectorAll('.msg').length === 12, undefined, { timeout: scaled(10_000) });
      expect(await page.locator('#status').innerText()).toBe('max_turns');
      await page.close();
    } finally {
      child?.kill('SIGTERM');
      await viewer.close();
      await llm.close();
    }
  });
});
