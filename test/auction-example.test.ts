// The sealed-bid auction example (docs/memory.md#audiences) runs from its hand-written cassette
// with --record: sealed bids reach only the auctioneer, the reserve price only the seller and the
// auctioneer, a bidder still sees its own round-1 bid in round 2 (not the others'), and no
// agent's recorded request holds a message whose audience in transcript.jsonl leaves it out.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findLeaks, type LeakReport } from './helpers/audience-leaks.js';
import { spawnCliAsync } from './helpers/cli.js';
import type { ExecResult } from './helpers/exec.js';
const tmp = mkdtempSync(join(tmpdir(), 'sop-auction-'));
let report: LeakReport | undefined;

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  console.log(
    `auction leaks: ${report?.requests ?? 0} agent requests, ${report?.restricted ?? 0} restricted messages, ${report?.checks ?? 0} checks, ${report?.leaks.length ?? 'no check'} leaks`,
  );
});

interface Line {
  id: number;
  sender: string;
  role: string;
  state: string;
  content: string;
  audience?: string[];
  to?: string;
  data?: Record<string, string>;
}

describe('auction example', () => {
  const out = join(tmp, 'auction');
  const rec = join(tmp, 'auction.rec.json');
  let r: ExecResult;
  beforeAll(async () => {
    r = await spawnCliAsync(
      ['run', 'examples/auction/auction.sop.json', '--llm', 'replay:examples/auction/auction.cassette.json', '--record', rec, '--out', out],
      { encoding: 'utf8', input: '', timeout: 120_000 },
    );
  });
  const dir = () => join(out, readdirSync(out)[0]!);
  const lines = (): Line[] =>
    readFileSync(join(dir(), 'transcript.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Line);
  const asked = (agent: string, state: string) => {
    const calls = (
      JSON.parse(readFileSync(rec, 'utf8')) as {
        interactions: Array<{ purpose: string; agent?: string; state?: string; request: Array<{ content: string }> }>;
      }
    ).interactions.filter((c) => c.purpose === 'agent' && c.agent === agent && c.state === state);
    expect(calls.length, `${agent} is asked in ${state}`).toBeGreaterThan(0);
    return calls.map((c) => c.request.map((m) => m.content).join('\n')).join('\n');
  };
  const said = (sender: string, state: string) => lines().find((m) => m.sender === sender && m.state === state && m.data)!;

  it('runs to its end from the hand-written cassette: the painting is sold', () => {
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('Finished in state "sold" after 12 turns');
    const c = JSON.parse(readFileSync('examples/auction/auction.cassette.json', 'utf8')) as { source: string; note: string };
    expect(c.source).toBe('hand-written');
    expect(c.note).toMatch(/not model output/);
  });

  it("no agent's recorded request holds a message whose audience leaves it out", () => {
    report = findLeaks(dir(), rec);
    expect(report.leaks).toEqual([]);
    expect(report.requests).toBe(9);
    expect(report.restricted).toBe(8); // the reserve request and price, six sealed bids
    expect(report.checks).toBeGreaterThan(30);
  });

  it('records sealed bids and the reserve as data, for their audience only', () => {
    const everyone = ['Ada', 'Sam', 'Ben', 'Cal', 'Dot'];
    expect(said('Sam', 'reserve')).toMatchObject({ audience: ['Ada', 'Sam'], to: 'house', data: { reserve: '500' } });
    const bids = lines().filter((m) => m.data?.bid);
    expect(bids.map((m) => `${m.state}:${m.sender}:${m.data!.bid}`)).toEqual([
      'round1:Ben:380',
      'round1:Cal:420',
      'round1:Dot:300',
      'round2:Ben:450',
      'round2:Cal:560',
      'round2:Dot:340',
    ]);
    for (const b of bids) expect(b).toMatchObject({ audience: ['Ada', b.sender], to: 'Ada' });
    expect(said('Ada', 'round1')).toMatchObject({ audience: everyone, data: { high: '420' } });
    expect(said('Ada', 'round2')).toMatchObject({ audience: everyone, data: { winner: 'Cal', price: '560' } });
    const md = readFileSync(join(dir(), 'transcript.md'), 'utf8');
    expect(md).toContain('**Sam** (Seller), turn 2 [to house]:');
    expect(md).toContain('**Ben** (Bidder A), turn 4 [to Ada]:');
  });

  it("a bidder's round-2 request holds its own round-1 bid, not the others' nor the reserve", () => {
    const round1 = (who: string) => said(who, 'round1').content;
    const reserve = said('Sam', 'reserve').content;
    for (const [me, others] of [
      ['Ben', ['Cal', 'Dot']],
      ['Cal', ['Ben', 'Dot']],
      ['Dot', ['Ben', 'Cal']],
    ] as const) {
      const request = asked(me, 'round2');
      expect(request).toContain(round1(me));
      for (const o of others) expect(request).not.toContain(round1(o));
      expect(request).not.toContain(reserve);
      expect(request).toContain('The highest sealed bid is <high>420</high>'); // what the rules reveal
    }
  });

  it('the auctioneer sees every sealed bid and the reserve', () => {
    const request = asked('Ada', 'round1');
    expect(request).toContain(said('Sam', 'reserve').content);
    for (const b of ['Ben', 'Cal', 'Dot']) expect(request).toContain(said(b, 'round1').content);
  });
});
