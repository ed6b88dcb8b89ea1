// Prompts kept in the journal: each LLM call's messages, written as deltas with system prompts
// once (src/features/journal/prompts.ts), read back whole through resumes, shown by `sop show --prompts`,
// printed by `--json --json-prompts`, redacted, and read with a report when a base line is gone.
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../src/core/llm/types.js';
import { PromptEncoder } from '../src/features/journal/prompts.js';
import { formatPrompts, promptsOf, type RecordedPrompt } from '../src/features/journal/recorded-prompts.js';
import { parseJournal } from '../src/features/journal/reader.js';
import { loadRunRecord } from '../src/features/journal/record.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { runSop } from '../src/index.js';
import { spawnCli, requireBuiltCli } from './helpers/cli.js';

const SOP = resolve('examples/debate/debate.sop.json');
const CASSETTE = resolve('examples/debate/debate.cassette.json');
const JUDGE_TASK = "Weigh both teams' arguments and declare the winner, with two reasons.";
const CANARY = 'sk-canary-prompts-9e4d2a71';

function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawnCli([...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', fail);
    child.on('close', (code) => done({ code, stdout, stderr }));
  });
}

function onlyFolder(out: string): string {
  const dirs = readdirSync(out).filter((d) => !d.endsWith('.tmp'));
  expect(dirs).toHaveLength(1);
  return join(out, dirs[0]!);
}

type Prompt = Extract<RunEvent, { type: 'prompt' }>;
const prompt = (p: Omit<Prompt, 'type'>): Prompt => ({ type: 'prompt', ...p });

/** Lines the journal writer would write for these events (as JournalWriter does, without redaction). */
function encodeAll(enc: PromptEncoder, events: RunEvent[]): string {
  return events.map((e) => (enc.encode(e) ?? [e]).map((l) => JSON.stringify(l) + '\n').join('')).join('');
}

const readBack = (text: string): RecordedPrompt[] => promptsOf({ effective: parseJournal(text).events });

describe('the prompt encoding', () => {
  // A small seeded generator: conversations that grow, agents taking turns, shared system prompts.
  let seed = 12345;
  const rnd = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  const words = (n: number) => Array.from({ length: n }, () => ['alpha', 'beta', 'gamma', 'delta', 'é', '😀'][rnd(6)]).join(' ');

  function conversation(calls: number): Prompt[] {
    const agents = ['Ada', 'Ben', 'Chloe'];
    const systems = agents.map((a) => `You are ${a}. ${words(40)}`);
    const judges = new Map<string, string>();
    const history: ChatMessage[] = [];
    const out: Prompt[] = [];
    for (let i = 0; i < calls; i++) {
      const a = rnd(3);
      history.push({ role: 'user', content: `${agents[rnd(3)]}: ${words(5 + rnd(20))}` });
      if (history.length > 6) history.shift();
      const state = `s${Math.floor(i / 7)}`;
      if (!judges.has(state)) judges.set(state, `Judge of ${state}. ${words(30)}`);
      out.push(
        prompt({
          purpose: 'agent',
          state,
          agent: agents[a],
          turn: i,
          messages: [{ role: 'system', content: systems[a]! }, ...history, { role: 'user', content: `Now speak as ${agents[a]}.` }],
        }),
      );
      // A judge whose one user message grows with the conversation.
      out.push(
        prompt({
          purpose: 'judge',
          state,
          turn: i,
          messages: [
            { role: 'system', content: judges.get(state)! },
            { role: 'user', content: `Conversation:\n${history.map((m) => m.content).join('\n')}\nLatest: ${history.at(-1)!.content}` },
          ],
        }),
      );
    }
    return out;
  }

  it('reads back every prompt exactly, across a new writer (a resume) and inside sub-flows', () => {
    const events: RunEvent[] = conversation(40);
    const first = new PromptEncoder();
    const second = new PromptEncoder(); // a resumed run's writer knows no earlier prompt
    const wrapped: RunEvent = { type: 'subflow', flow: 'Coder-1/lib-1', event: events[5]! };
    const text =
      encodeAll(first, events.slice(0, 50)) +
      JSON.stringify({ type: 'resumed', mode: 'resume', from_turn: 0, time: 'x' }) +
      '\n' +
      encodeAll(second, [...events.slice(50), wrapped]);
    // The effective history after the resume keeps only the resumed attempt; read every line instead.
    const all = parseJournal(text).events;
    const got = promptsOf({ effective: all });
    expect(got).toHaveLength(events.length + 1);
    got.slice(0, -1).forEach((p, i) => {
      const want = events[i] as Prompt;
      expect(p.problem).toBeUndefined();
      expect(p.messages).toEqual(want.messages);
      expect([p.purpose, p.state, p.agent, p.turn]).toEqual([want.purpose, want.state, want.agent, want.turn]);
    });
    expect(got.at(-1)).toMatchObject({ flow: 'Coder-1/lib-1', messages: (events[5] as Prompt).messages });
    // The resumed writer's first prompt is whole (no base), and system prompts are written once per writer.
    const lines = text.split('\n').filter(Boolean);
    const afterResume = lines.slice(lines.findIndex((l) => l.includes('"resumed"')) + 1);
    expect(JSON.parse(afterResume.find((l) => l.startsWith('{"type":"prompt"'))!)).not.toHaveProperty('base');
    const parts = lines.filter((l) => l.startsWith('{"type":"prompt_part"')).map((l) => (JSON.parse(l) as { hash: string }).hash);
    const beforeParts = lines.slice(0, lines.length - afterResume.length).filter((l) => l.startsWith('{"type":"prompt_part"'));
    expect(new Set(beforeParts).size).toBe(beforeParts.length);
    expect(parts.length).toBeLessThanOrEqual(2 * (3 + 6)); // 3 agents' and 6 states' judges' system prompts, per writer
    // Compact: far smaller than the prompts written whole.
    const whole = events.map((e) => JSON.stringify(e).length).reduce((a, b) => a + b, 0);
    expect(text.length).toBeLessThan(whole * 0.75);
  });

  it('writes a long reply shown again in a prompt by reference to its llm_call, and reads it back', () => {
    const reply = `Point 7: ${words(3000)}`;
    const call: RunEvent = {
      type: 'llm_call',
      purpose: 'agent',
      state: 's',
      agent: 'Ada',
      turn: 1,
      model: 'm',
      usage: { promptTokens: 1, completionTokens: 1 },
      ms: 1,
      prompt_chars: 1,
      reply,
      effect: '1.1',
    };
    const shown = prompt({
      purpose: 'judge',
      state: 's',
      turn: 2,
      messages: [
        { role: 'system', content: 'Judge.' },
        { role: 'user', content: `Conversation:\nAda: ${reply.slice(9)}\n\nThe latest message:\nAda: ${reply}` },
      ],
    });
    const text = encodeAll(new PromptEncoder(), [call, shown]);
    expect(text.length).toBeLessThan(reply.length * 1.1); // the reply once, in its llm_call line
    expect(readBack(text)[0]).toEqual({ turn: 2, purpose: 'judge', state: 's', messages: shown.messages }); // no llm_call after it
    // Without the llm_call line the prompt is read with a problem, not thrown.
    const lost = readBack(text.split('\n').slice(1).join('\n'));
    expect(lost[0]!.problem).toContain('the reply of LLM call 1.1');
  });

  it('reports a prompt whose base or system prompt is not in the journal, and reads the rest', () => {
    const events = conversation(6);
    const text = encodeAll(new PromptEncoder(), events);
    const lines = text.split('\n').filter(Boolean);
    // Drop the first prompt_part line and the first prompt line: later ones refer to them.
    const partAt = lines.findIndex((l) => l.startsWith('{"type":"prompt_part"'));
    const missingPart = (JSON.parse(lines[partAt]!) as { hash: string }).hash;
    const firstPrompt = lines.findIndex((l) => l.startsWith('{"type":"prompt"'));
    const kept = lines.filter((_, i) => i !== partAt && i !== firstPrompt).join('\n') + '\n';
    const got = readBack(kept);
    expect(got).toHaveLength(events.length - 1);
    const broken = got.filter((p) => p.problem);
    expect(broken.length).toBeGreaterThan(0);
    expect(broken.some((p) => p.problem!.includes(missingPart) || p.problem!.includes('no earlier line holds'))).toBe(true);
    // Every prompt that does not depend on the lost lines is whole.
    got.forEach((p, i) => {
      if (!p.problem) expect(p.messages).toEqual((events[i + 1] as Prompt).messages);
    });
    expect(formatPrompts(broken)).toContain('(incomplete: ');
  });
});

describe('prompts of the debate example', () => {
  let root: string;
  let dir: string;
  let jsonOut: string;

  beforeAll(async () => {
    requireBuiltCli();
    root = mkdtempSync(join(tmpdir(), 'sop-prompts-'));
    const r = await cli(['run', SOP, '--llm', `replay:${CASSETTE}`, '--out', join(root, 'a'), '--json', '--json-prompts']);
    expect(r.code, r.stderr).toBe(0);
    jsonOut = r.stdout;
    dir = onlyFolder(join(root, 'a'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('keeps every prompt within 2x of the journal without them', () => {
    const journal = readFileSync(join(dir, 'journal.jsonl'), 'utf8');
    const lines = journal.split('\n').filter(Boolean);
    const isPromptLine = (l: string) => l.startsWith('{"type":"prompt"') || l.startsWith('{"type":"prompt_part"');
    const without = lines.filter((l) => !isPromptLine(l)).reduce((n, l) => n + Buffer.byteLength(l) + 1, 0);
    const size = Buffer.byteLength(journal);
    const prompts = promptsOf(loadRunRecord(dir));
    const whole = prompts.reduce((n, p) => n + Buffer.byteLength(JSON.stringify(p.messages)), 0);
    console.log(
      `journal prompts: debate journal ${size} bytes with prompts, ${without} without (${(size / without).toFixed(2)}x); ` +
        `${prompts.length} prompts take ${size - without} bytes, ${whole} written whole`,
    );
    expect(prompts).toHaveLength(28); // the example's 28 LLM calls
    expect(size / without).toBeLessThan(2);
  });

  it('reads back the same messages --json-prompts printed, and --json alone prints none', async () => {
    const printed = jsonOut
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RunEvent)
      .filter((e): e is Prompt => e.type === 'prompt');
    const read = promptsOf(loadRunRecord(dir));
    expect(read.map((p) => p.messages)).toEqual(printed.map((p) => p.messages));
    // Each comes with its llm_call (usage, latency, reply) for inspectors.
    expect(read.every((p) => p.call?.type === 'llm_call' && p.call.purpose === p.purpose && p.call.turn === p.turn)).toBe(true);
    // Each prompt comes just before its llm_call, whose prompt_chars it adds up to.
    const events = jsonOut
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as RunEvent);
    events.forEach((e, i) => {
      if (e.type !== 'prompt') return;
      const next = events[i + 1]!;
      expect(next.type).toBe('llm_call');
      if (next.type === 'llm_call') expect(next.prompt_chars).toBe(e.messages.reduce((n, m) => n + m.content.length, 0));
    });
    const plain = await cli(['run', SOP, '--llm', `replay:${CASSETTE}`, '--out', join(root, 'b'), '--json']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('"type":"llm_call"');
    expect(plain.stdout).not.toContain('"type":"prompt"');
  });

  it('sop show --prompts prints each call with its messages, and filters by turn and agent', async () => {
    const all = await cli(['show', dir, '--prompts']);
    expect(all.code).toBe(0);
    expect(all.stdout).toContain(JUDGE_TASK);
    expect(all.stdout).toMatch(/=== turn \d+: agent call in state "verdict", agent Judge Ruth, \d+ messages/);
    expect(all.stdout).toContain('--- system ---');
    expect(all.stdout.match(/^=== turn /gm)).toHaveLength(28);

    const ada = await cli(['show', dir, '--prompts', '--agent', 'Ada']);
    const heads = ada.stdout.match(/^=== .*$/gm)!;
    expect(heads.length).toBeGreaterThan(1);
    for (const h of heads) expect(h).toContain('agent Ada');

    const turn = await cli(['show', dir, '--prompts', '--turn', '16']);
    const turnHeads = turn.stdout.match(/^=== .*$/gm)!;
    expect(turnHeads.length).toBeGreaterThan(0);
    for (const h of turnHeads) expect(h).toMatch(/^=== turn 16: /);

    const bad = await cli(['show', dir, '--prompts', '--turn', 'soon']);
    expect([bad.code, bad.stderr]).toEqual([1, 'error: --turn must be a turn number, 0 or more (got NaN)\n']);

    const none = await cli(['show', dir, '--prompts', '--agent', 'Nobody']);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('');
    expect(none.stderr).toContain('no LLM call matches --agent Nobody');
  });

  it('a run resumed from a checkpoint reads back the same prompts as the run never stopped', async () => {
    const copy = join(root, 'resumed', 'r');
    cpSync(dir, copy, { recursive: true });
    const file = join(copy, 'journal.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    const cut = lines.findIndex((l) => l.startsWith('{"type":"checkpoint","turn":8,'));
    expect(cut).toBeGreaterThan(0);
    writeFileSync(file, lines.slice(0, cut + 1).join('\n') + '\n'); // killed after turn 8
    const r = await cli(['resume', copy, '--quiet']);
    expect(r.code, r.stderr).toBe(0);
    const resumed = loadRunRecord(copy);
    expect(resumed.all.some((e) => e.type === 'resumed')).toBe(true);
    expect(formatPrompts(promptsOf(resumed))).toBe(formatPrompts(promptsOf(loadRunRecord(dir))));
  });

  it('a prompt line whose base was removed is reported, not fatal; a damaged line is a warning', async () => {
    const copy = join(root, 'damaged', 'r');
    cpSync(dir, copy, { recursive: true });
    const file = join(copy, 'journal.jsonl');
    const lines = readFileSync(file, 'utf8').split('\n');
    // Remove every system prompt part: each prompt that names one is incomplete.
    writeFileSync(file, lines.filter((l) => !l.startsWith('{"type":"prompt_part"')).join('\n'));
    const r = await cli(['show', copy, '--prompts']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('(incomplete: system prompt part ');
    expect(r.stderr).toMatch(/warning: \d+ prompts are incomplete/);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    // A torn-in-the-middle prompt line: the journal reader's damage handling, with a warning.
    const at = lines.findIndex((l) => l.startsWith('{"type":"prompt"') && l.includes('"state":"open_floor"'));
    const damaged = [...lines];
    damaged[at] = damaged[at]!.slice(0, 40);
    writeFileSync(file, damaged.join('\n'));
    const d = await cli(['show', copy, '--prompts']);
    expect(d.code).toBe(0);
    expect(d.stderr).toContain(`journal.jsonl:${at + 1}: damaged line`);
    expect(d.stdout).toContain('=== turn ');
  });
});

describe('secrets in prompts', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'sop-prompts-secret-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('a canary secret in an input is redacted in the journal, show --prompts and --json-prompts', async () => {
    const env = { SOP_PROMPT_CANARY_API_KEY: CANARY };
    const topic = `Should cities hand out the key ${CANARY} to every driver?`;
    const r = await cli(
      ['run', SOP, '--llm', 'mock', '--max-turns', '4', '--input', `topic=${topic}`, '--out', root, '--json', '--json-prompts'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('"type":"prompt"');
    expect(r.stdout).toContain('[REDACTED]');
    expect(r.stdout).not.toContain(CANARY);
    const dir = onlyFolder(root);
    expect(readFileSync(join(dir, 'journal.jsonl'), 'utf8')).not.toContain(CANARY);
    const show = await cli(['show', dir, '--prompts'], env);
    expect(show.stdout).toContain('hand out the key [REDACTED] to every driver');
    expect(show.stdout + show.stderr).not.toContain(CANARY);
  });
});

describe('the API event stream', () => {
  let root: string;
  beforeAll(() => {
    root = mkdtempSync(join(tmpdir(), 'sop-prompts-api-'));
  });
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('tells prompt events only with prompts: true; the journal keeps them either way', async () => {
    const seen = async (prompts: boolean | undefined, out: string) => {
      const types: string[] = [];
      for await (const e of runSop(SOP, { llm: `replay:${CASSETTE}`, out, ...(prompts === undefined ? {} : { prompts }) }))
        types.push(e.type);
      return types;
    };
    const plain = await seen(undefined, join(root, 'plain'));
    expect(plain).toContain('llm_call');
    expect(plain).not.toContain('prompt');
    const asked = await seen(true, join(root, 'asked'));
    expect(asked.filter((t) => t === 'prompt')).toHaveLength(28);
    for (const out of ['plain', 'asked']) expect(promptsOf(loadRunRecord(onlyFolder(join(root, out))))).toHaveLength(28);
  });
});
