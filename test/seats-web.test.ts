// Seats (docs/seats.md): `sop run --web` serves the seats of a SOP, a script reads the printed
// links and plays through the JSON API; the journal holds each seat's answer with who, seat and
// when; a repeated idempotency key changes nothing, a wrong token gets 403, a closed turn 409; a
// silent seat takes its default at its deadline; a run killed after one seat answered and resumed
// with --web does not ask that seat again.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBuiltCli, spawnCliAsync } from './helpers/cli.js';
import { freePort } from './helpers/free-port.js';
import { until } from './helpers/until.js';
import { journal, nextTurn, postAnswer, runFolder, seatAnswers, seatState, startSeatRun, type SeatRun } from './helpers/seat-run.js';

const PG = 'examples/seats/public-goods/public-goods.sop.json';
const PG_CASSETTE = 'examples/seats/public-goods/public-goods.cassette.json';
const FEED = 'examples/seats/feed/feed.sop.json';
const tmp = mkdtempSync(join(tmpdir(), 'sop-seats-'));
const running: SeatRun[] = [];
/** The run folder of the public-goods run played through the API. */
let played = '';

beforeAll(() => requireBuiltCli());
afterAll(() => {
  for (const r of running) if (!r.done()) r.kill('SIGKILL');
  rmSync(tmp, { recursive: true, force: true });
});

async function start(args: string[], seats: number): Promise<SeatRun> {
  const run = await startSeatRun(args, seats);
  running.push(run);
  return run;
}

/** Messages of the run's transcript (transcript.jsonl). */
function transcript(dir: string): Array<{ sender: string; content: string; kind: string; state: string }> {
  return readFileSync(join(dir, 'transcript.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as { sender: string; content: string; kind: string; state: string });
}

describe('sop run --web: a turn-based seat (examples/seats/public-goods)', () => {
  it('a script reads the link, plays through the JSON API to the final state; the journal holds its answers', async () => {
    const out = join(tmp, 'pg');
    const port = await freePort();
    const run = await start(['run', PG, '--llm', `replay:${PG_CASSETTE}`, '--web', '--port', String(port), '--out', out, '--quiet'], 1);
    const link = run.links.get('Ana')!;
    expect(link).toMatch(new RegExp(`^http://127\\.0\\.0\\.1:${port}/seat/[0-9a-f]{48}$`));
    const token = link.split('/').pop()!;

    // a wrong token: 403, for the state, an answer and the page
    const wrong = link.replace(
      token,
      token.replace(/^./, (c) => (c === 'a' ? 'b' : 'a')),
    );
    expect((await fetch(`${wrong}/state`)).status).toBe(403);
    expect((await postAnswer(wrong, { key: 'x', answer: 'hi' })).status).toBe(403);
    expect((await fetch(wrong)).status).toBe(403);
    expect((await fetch(`${run.runner.replace(/t=.*/, 't=nope')}`)).status).toBe(403);

    // the runner page lists the seat, and who joined
    const joined = await fetch(`${link}/join`, { method: 'POST', body: JSON.stringify({ name: 'Participant 7' }) });
    expect(joined.status).toBe(200);
    const runnerHtml = await (await fetch(run.runner)).text();
    expect(runnerHtml).toContain('Participant 7');
    expect(runnerHtml).toContain('1 of 1 seats joined');

    const answers = ['I put in half: <contribute>5</contribute>', 'Everyone gave, so I give all: <contribute>10</contribute>'];
    const first = await nextTurn(run, link);
    expect(first).toBeDefined();
    expect(first!.state).toBe('round1');
    expect(first!.default).toBe('I keep my tokens this round: <contribute>0</contribute>');
    expect((first!.sees as { persona: string }).persona).toContain('Player A');
    expect((first!.sees as { messages: unknown[] }).messages).toEqual([]); // Ana speaks first
    const ok = await postAnswer(link, { key: 'round1-answer', answer: answers[0] });
    expect(ok.status).toBe(200);
    // the same key again: accepted once, the same reply, nothing more taken
    const again = await postAnswer(link, { key: 'round1-answer', answer: 'something else entirely' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ accepted: true, question: ok.body.question, at: ok.body.at, repeated: true });
    // an answer to the closed turn under a new key: 409 with the reason
    const closed = await postAnswer(link, { key: 'late', question: ok.body.question, answer: 'too late' });
    expect(closed.status).toBe(409);
    expect(String(closed.body.error)).toMatch(/closed|answered|no turn/);

    const second = await nextTurn(run, link);
    expect(second!.state).toBe('round2');
    // round 2: the seat sees what its agent would: the round-1 messages of every player
    const seen = (second!.sees as { messages: Array<{ sender: string; content: string }> }).messages;
    expect(seen.map((m) => m.sender)).toEqual(['Ana', 'Ben', 'Cleo', 'Dev']);
    expect(seen[0]!.content).toBe(answers[0]);
    // a malformed answer is refused (400) and leaves the turn open
    expect((await postAnswer(link, { key: 'bad', answer: { name: 'x' } })).status).toBe(400);
    expect((await postAnswer(link, { key: 'round2-answer', answer: answers[1] })).status).toBe(200);

    expect(await run.exited).toEqual({ code: 0, signal: null });
    expect(run.stderr()).toMatch(/Finished in state "end" after 8 turns/);
    const dir = runFolder(out);
    const taken = seatAnswers(dir);
    expect(taken.map((t) => t.result.answer)).toEqual(answers);
    for (const t of taken) {
      expect(t.result).toMatchObject({ who: 'Participant 7', seat: 'Ana', defaulted: false });
      expect(Number.isNaN(Date.parse(String(t.result.at)))).toBe(false);
    }
    expect(
      transcript(dir)
        .filter((m) => m.sender === 'Ana')
        .map((m) => [m.kind, m.content]),
    ).toEqual(answers.map((a) => ['human', a]));
    // no token reaches the journal
    expect(readFileSync(join(dir, 'journal.jsonl'), 'utf8')).not.toContain(token);
    played = dir;
  }, 120_000);

  it('the run replayed from its journal (--replay-seats) and its cassette, with no person present, is the same run', async () => {
    expect(played).not.toBe('');
    const out = join(tmp, 'pg-replay');
    const r = await spawnCliAsync(['run', PG, '--llm', `replay:${PG_CASSETTE}`, '--replay-seats', played, '--out', out, '--quiet'], {
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const dir = runFolder(out);
    const said = (d: string) => transcript(d).map((m) => [m.state, m.sender, m.kind, m.content]);
    expect(said(dir)).toEqual(said(played));
    expect(seatAnswers(dir).map((a) => a.result)).toEqual(seatAnswers(played).map((a) => a.result)); // who, seat and when as given
    // a replay that runs out of a seat's answers stops with one clear line
    const short = join(tmp, 'short');
    const lines = readFileSync(join(played, 'journal.jsonl'), 'utf8').split('\n');
    const cut = lines.findIndex((l) => l.includes('"effect_finished"') && l.includes('"kind":"seat"') && l.includes('round2'));
    mkdirSync(short, { recursive: true });
    writeFileSync(join(short, 'journal.jsonl'), lines.slice(0, cut).join('\n') + '\n');
    const stopped = await spawnCliAsync(
      ['run', PG, '--llm', `replay:${PG_CASSETTE}`, '--replay-seats', short, '--out', join(tmp, 'short-out'), '--quiet'],
      {
        timeout: 60_000,
      },
    );
    expect(stopped.status).not.toBe(0);
    expect(stopped.stderr).toMatch(/--replay-seats .*: seat Ana gave 1 answers in that run; the replay asks it for answer 2/);
    expect(stopped.stderr).not.toMatch(/\n\s+at /); // no stack trace
  }, 120_000);

  it('a seat that does not answer takes its default at its deadline', async () => {
    const dir = join(tmp, 'silent');
    const sop = JSON.parse(readFileSync(PG, 'utf8')) as { agents: { Ana: { seat_timeout_s: number } } };
    sop.agents.Ana.seat_timeout_s = 1;
    const file = join(tmp, 'silent.sop.json');
    writeFileSync(file, JSON.stringify(sop));
    const out = join(dir, 'runs');
    const run = await start(['run', file, '--llm', `replay:${join(process.cwd(), PG_CASSETTE)}`, '--web', '--out', out, '--quiet'], 1);
    const turn = await nextTurn(run, run.links.get('Ana')!);
    expect(turn).toBeDefined();
    expect(await run.exited).toEqual({ code: 0, signal: null });
    const folder = runFolder(out);
    const taken = seatAnswers(folder);
    expect(taken).toHaveLength(2);
    for (const t of taken)
      expect(t.result).toMatchObject({
        answer: 'I keep my tokens this round: <contribute>0</contribute>',
        who: 'deadline',
        defaulted: true,
      });
    expect(transcript(folder).filter((m) => m.sender === 'Ana')).toHaveLength(2);
  }, 120_000);
});

describe('sop run --web --wait-seats --links FILE', () => {
  it('writes the links to a file only its owner reads, and starts the run once every seat has joined', async () => {
    const out = join(tmp, 'wait');
    const links = join(tmp, 'links.txt');
    const run = await start(
      ['run', PG, '--llm', `replay:${PG_CASSETTE}`, '--web', '--wait-seats', '--links', links, '--out', out, '--quiet'],
      1,
    );
    const link = run.links.get('Ana')!;
    expect(readFileSync(links, 'utf8')).toBe(`Ana ${link}\n`);
    expect(statSync(links).mode & 0o777).toBe(0o600);
    expect(await until(() => run.stderr().includes('Waiting for every seat to join'), { timeoutMs: 30_000 })).toBe(true);
    expect(existsSync(out)).toBe(false); // no run folder before every seat has joined
    expect((await seatState(link)).status).toBe('waiting'); // the seat's page (or a script) asking for its state joins it
    const turn = await nextTurn(run, link);
    expect(turn!.state).toBe('round1');
    expect(run.stderr()).toContain('Every seat has joined.');
    run.kill('SIGKILL');
    await run.exited;
  }, 120_000);
});

describe('sop run --web: seats in a population (examples/seats/feed)', () => {
  it('SIGKILL after one seat answered, then sop resume --web: the answered seat is not asked again', async () => {
    const out = join(tmp, 'feed');
    const run = await start(['run', FEED, '--web', '--out', out, '--quiet'], 2);
    const one = run.links.get('feed/1')!;
    const two = run.links.get('feed/2')!;
    const turn = await nextTurn(run, one);
    expect(turn!.step).toBe(1);
    expect(turn!.actions.map((a) => a.name)).toEqual(['post', 'like', 'repost', 'follow', 'idle']);
    expect(turn!.default).toEqual({ name: 'idle', args: {} });
    // a bad action's arguments are refused with the world's reason
    const bad = await postAnswer(one, { key: 'bad', answer: { name: 'post', args: {} } });
    expect(bad.status).toBe(400);
    expect(String(bad.body.error)).toMatch(/text/);
    expect((await postAnswer(one, { key: 'k1', answer: { name: 'post', args: { text: 'first from seat one' } } })).status).toBe(200);
    const dir = runFolder(out);
    expect(await until(() => seatAnswers(dir).length === 1, { timeoutMs: 30_000 })).toBe(true);
    // seat 2 has not answered: the step is still open; the run is killed
    expect((await seatState(two)).status).toBe('your_turn');
    run.kill('SIGKILL');
    await run.exited;

    const resumed = await start(['resume', dir, '--web', '--quiet'], 2);
    const one2 = resumed.links.get('feed/1')!;
    const two2 = resumed.links.get('feed/2')!;
    const open = await nextTurn(resumed, two2);
    expect(open!.step).toBe(1); // the step the kill interrupted, asked again of seat 2 only
    expect((await seatState(one2)).status).toBe('waiting');
    expect((await postAnswer(two2, { key: 'k2', answer: { name: 'idle', args: {} } })).status).toBe(200);
    // the rest of the run: both seats play each step
    const play = async (link: string, text: string) => {
      for (;;) {
        const t = await nextTurn(resumed, link);
        if (!t) return;
        if (t.step === 1) throw new Error(`${link} was asked step 1 again`);
        const r = await postAnswer(link, { key: `${t.question}`, answer: { name: 'post', args: { text: `${text} ${t.step}` } } });
        if (r.status !== 200 && r.status !== 409) throw new Error(`answer refused: ${JSON.stringify(r.body)}`);
      }
    };
    await Promise.all([play(one2, 'one at step'), play(two2, 'two at step')]);
    expect(await resumed.exited).toEqual({ code: 0, signal: null });

    const events = journal(dir);
    const steps = events.filter((e) => e.type === 'population_step') as Array<{
      step: number;
      actions: Array<{ agent: string; name: string; args: Record<string, unknown>; tier: string }>;
    }>;
    expect(steps.map((s) => s.step)).toEqual([1, 2, 3, 4]);
    const seatActs = (s: (typeof steps)[number]) => s.actions.filter((a) => a.tier === 'seat').sort((a, b) => (a.agent < b.agent ? -1 : 1));
    // step 1 holds seat one's answer given before the kill, and seat two's given after the resume
    expect(seatActs(steps[0]!).map((a) => [a.agent, a.name, a.args])).toEqual([
      ['a0', 'post', { text: 'first from seat one' }],
      ['a1', 'idle', {}],
    ]);
    for (const s of steps.slice(1))
      expect(seatActs(s).map((a) => [a.agent, a.args.text])).toEqual([
        ['a0', `one at step ${s.step}`],
        ['a1', `two at step ${s.step}`],
      ]);
    // seat one's step-1 answer was given once, and reused by the resumed run (journaled again as reused)
    const firstAnswers = seatAnswers(dir).filter((a) => a.label === 'a0@feed' && a.key.endsWith('1:seat:a0'));
    expect(firstAnswers.map((a) => a.reused)).toEqual([false, true]);
    expect(firstAnswers[1]!.result).toEqual(firstAnswers[0]!.result);
    expect(firstAnswers[0]!.result).toMatchObject({ answer: { name: 'post', args: { text: 'first from seat one' } }, seat: 'feed/1' });
  }, 180_000);
});
