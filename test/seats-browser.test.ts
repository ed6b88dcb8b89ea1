// Seat pages in Debian's chromium driven by playwright-core (docs/seats.md): three seats at once
// in a population, each sees only its own feed and the allowed actions, and plays through the
// page's form; 16 XSS payloads in persona names, messages and action text are rendered inert.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli } from './helpers/cli.js';
import { journal, runFolder, seatAnswers, startSeatRun, type SeatRun } from './helpers/seat-run.js';

const CHROMIUM = '/usr/bin/chromium';
const noChromium = !existsSync(CHROMIUM);
if (noChromium) console.warn(`seat page browser test skipped: ${CHROMIUM} is missing (apt-get install chromium)`);
const tmp = mkdtempSync(join(tmpdir(), 'sop-seats-browser-'));
const running: SeatRun[] = [];
let context: import('playwright-core').BrowserContext;

beforeAll(async () => {
  requireBuiltCli();
  if (noChromium) return;
  const { chromium } = await import('playwright-core');
  context = await chromium.launchPersistentContext(join(tmp, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 900 },
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
}, 120_000);
afterAll(async () => {
  for (const r of running) if (!r.done()) r.kill('SIGKILL');
  await context?.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** Followers and the one account each follows: each seat's feed is its followee's post alone. */
const SEATS = { a1: 'a10', a2: 'a11', a3: 'a12' } as const;
const postOf = (followee: string) => `news from ${followee}: the river path reopens`;

describe.skipIf(noChromium)('seat pages in chromium', () => {
  it('three seats at once in a population: each sees only its own feed and the allowed actions, and plays through its form', async () => {
    const sop = JSON.parse(readFileSync('examples/seats/feed/feed.sop.json', 'utf8')) as Record<string, any>;
    const feed = sop.states.feed;
    feed.population.seats = Object.keys(SEATS);
    feed.world.graph = { edges: Object.entries(SEATS) };
    feed.world.params.seed_posts = Object.values(SEATS).map((f) => ({ id: `p_${f}`, author: f, text: postOf(f) }));
    feed.max_steps = 1;
    const file = join(tmp, 'three.sop.json');
    writeFileSync(file, JSON.stringify(sop));
    const out = join(tmp, 'three');
    const run = await startSeatRun(['run', file, '--web', '--out', out, '--quiet'], 3);
    running.push(run);
    const pages = await Promise.all(
      Object.keys(SEATS).map(async (member) => {
        const page = await context.newPage();
        await page.goto(run.links.get(`feed/${member}`)!);
        return { member, page };
      }),
    );
    for (const { member, page } of pages) {
      await page.locator('#status[data-status="your_turn"]').waitFor({ timeout: 60_000 });
      const seen = await page.locator('#observation').innerText();
      const own = SEATS[member as keyof typeof SEATS];
      expect(seen).toContain(postOf(own));
      for (const other of Object.values(SEATS)) if (other !== own) expect(seen).not.toContain(postOf(other));
      expect(await page.locator('.persona').innerText()).toContain(`You are member ${member},`);
      expect(await page.locator('#action option').evaluateAll((os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual([
        'post',
        'like',
        'repost',
        'follow',
        'idle',
      ]);
    }
    // each likes the post in its feed, through the form built from the action's JSON Schema
    for (const { member, page } of pages) {
      await page.locator('#action').selectOption('like');
      await page.locator('#args input[name="post_id"]').fill(`p_${SEATS[member as keyof typeof SEATS]}`);
      await page.locator('#send').click();
    }
    for (const { page } of pages) await page.locator('#status[data-status="finished"]').waitFor({ timeout: 60_000 });
    expect(await run.exited).toEqual({ code: 0, signal: null });
    const dir = runFolder(out);
    const step = journal(dir).find((e) => e.type === 'population_step') as {
      actions: Array<{ agent: string; name: string; args: Record<string, unknown>; ok: boolean; tier: string }>;
    };
    const bySeat = step.actions.filter((a) => a.tier === 'seat').sort((a, b) => (a.agent < b.agent ? -1 : 1));
    expect(bySeat.map((a) => [a.agent, a.name, a.args, a.ok])).toEqual(
      Object.entries(SEATS).map(([m, f]) => [m, 'like', { post_id: `p_${f}` }, true]),
    );
    expect(
      seatAnswers(dir)
        .map((a) => a.result.seat)
        .sort(),
    ).toEqual(['feed/a1', 'feed/a2', 'feed/a3']);
    for (const { page } of pages) await page.close();
  }, 240_000);

  it('16 XSS payloads in persona names, messages and action text are rendered inert on the seat page', async () => {
    const P = [
      '<script>window.__xss=1</script>',
      '<img src=x onerror="window.__xss=2">',
      '<svg onload="window.__xss=3"></svg>',
      '"><script>window.__xss=4</script>',
      "'><img src=x onerror=window.__xss=5>",
      '<iframe src="javascript:window.top.__xss=6"></iframe>',
      '<a href="javascript:window.__xss=7">click me</a>',
      '<body onload="window.__xss=8">',
      '<details open ontoggle="window.__xss=9">',
      '<input autofocus onfocus="window.__xss=10">',
      "{{constructor.constructor('window.__xss=11')()}}",
      '<math><mtext><table><mglyph><style><img src=x onerror="window.__xss=12">',
      'javascript:window.__xss=13',
      '</textarea><script>window.__xss=14</script>',
      '<style>body{display:none}</style><b id="injected">bold</b>',
      '&lt;script&gt;window.__xss=16&lt;/script&gt;',
    ];
    // persona names: the seat's agent, the other speakers and the roles; messages: the other
    // agents' replies; action text: the seat's default answer and its role's task and rule
    const seat = `Ana ${P[0]}`;
    const [x, y] = [`Xavi ${P[1]}`, `Yuna ${P[2]}`];
    const [rx, ry, ra] = [`Speaker ${P[3]}`, `Replier ${P[4]}`, `Player ${P[5]}`];
    const sop = {
      name: 'xss',
      environment: { type: 'cooperative', max_chat_history: 12 },
      agents: {
        [seat]: { style: `calm ${P[6]}`, seat: true, seat_default: `I pass ${P[14]}`, roles: { ask: ra } },
        [x]: { style: 'x', roles: { talk: rx } },
        [y]: { style: 'y', roles: { talk: ry } },
      },
      root: 'talk',
      states: {
        talk: { roles: [rx, ry], controller: { type: 'order', max_turns: 6 }, next_states: { '0': 'talk', '1': 'ask' } },
        ask: {
          environment_prompt: `Say something ${P[7]!}`,
          roles: [ra],
          components: { [ra]: { task: `Answer ${P[8]}`, rule: `Be brief ${P[9]}` } },
          controller: { type: 'order', max_turns: 1 },
          next_states: { '0': 'ask', '1': 'end' },
        },
        end: { final: true },
      },
    };
    const replies = [P[10], P[11], P[12], P[13], P[15], 'plain words'];
    const interactions = replies.flatMap((r, n) => [
      ...(n > 0 ? [{ purpose: 'judge', state: 'talk', response: '<end>0</end>' }] : []),
      { purpose: 'agent', state: 'talk', agent: n % 2 === 0 ? x : y, response: r },
    ]);
    const file = join(tmp, 'xss.sop.json');
    const cassette = join(tmp, 'xss.cassette.json');
    writeFileSync(file, JSON.stringify(sop));
    writeFileSync(cassette, JSON.stringify({ version: 1, source: 'hand-written', note: 'XSS payloads', sop: 'xss', interactions }));
    const out = join(tmp, 'xss');
    const run = await startSeatRun(['run', file, '--llm', `replay:${cassette}`, '--web', '--out', out, '--quiet'], 1);
    running.push(run);
    const link = run.links.get(seat)!;
    // the server's HTML is a shell: no payload in it
    const html = await (await fetch(link)).text();
    for (const p of P) expect(html).not.toContain(p);
    const page = await context.newPage();
    let dialogs = 0;
    page.on('dialog', (d) => {
      dialogs++;
      void d.dismiss();
    });
    await page.goto(link);
    await page.locator('#status[data-status="your_turn"]').waitFor({ timeout: 60_000 });
    await page.locator('.default').waitFor();
    const found = await page.evaluate(() => ({
      xss: (window as unknown as { __xss?: unknown }).__xss ?? null,
      scripts: document.scripts.length,
      injected: document.querySelectorAll(
        'img, iframe, svg, math, details, b#injected, a, body style, [onerror], [onload], [onfocus], [ontoggle], input[autofocus]',
      ).length,
      hidden: getComputedStyle(document.body).display === 'none',
      text: document.body.innerText,
    }));
    expect(found).toMatchObject({ xss: null, scripts: 1, injected: 0, hidden: false });
    expect(dialogs).toBe(0);
    // every payload is shown as the text it is
    for (const p of [P[0], P[1], P[2], P[3], P[5], P[6], P[8], P[9], P[10], P[11], P[12], P[13], P[14], P[15]])
      expect(found.text).toContain(p);
    // the runner page escapes a joined name
    await page.locator('#name').fill(P[1]!);
    await page.locator('#join-button').click();
    const runner = await (await fetch(run.runner)).text();
    expect(runner).not.toContain(P[1]);
    expect(runner).toContain('&lt;img src=x onerror=&quot;window.__xss=2&quot;&gt;');
    await page.locator('#answer').fill(P[4]!);
    await page.locator('#send').click();
    await page.locator('#status[data-status="finished"]').waitFor({ timeout: 60_000 });
    expect(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss ?? null)).toBeNull();
    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(seatAnswers(runFolder(out)).map((a) => a.result.answer)).toEqual([P[4]]);
    await page.close();
  }, 240_000);
});
