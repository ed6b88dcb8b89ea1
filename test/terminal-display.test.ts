// The live terminal display, checked as a person sees it: the exact bytes the CLI writes to a
// pseudo-terminal are replayed through a terminal emulator (@xterm/headless), and every message
// of the run's transcript must be fully visible there: the status line (drawn on stderr, which is
// the same terminal) never overwrites message text nor stays glued to it. Also an 80x24 tmux
// session, read back with `tmux capture-pane -J`, and the display alone with a fake terminal.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import xtermHeadless from '@xterm/headless';
import { afterAll, describe, expect, it } from 'vitest';
import { agentColour } from '../src/apps/cli/agent-colour.js';
import { terminalDisplay } from '../src/apps/cli/display.js';
import { labelTags, TagLabeller } from '../src/apps/cli/tag-labels.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { startOpenAiServer } from './helpers/openai-server.js';
import { CLI } from './helpers/cli.js';
import { execAsync } from './helpers/exec.js';

const { Terminal } = xtermHeadless;
const RUN = `${CLI} run examples/debate/debate.sop.json --llm replay:examples/debate/debate.cassette.json`;

const has = (tool: string) => spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
const hasScript = has('script') && /util-linux/.test(spawnSync('script', ['--version'], { encoding: 'utf8' }).stdout ?? '');
const hasTmux = has('tmux');
if (!hasScript) console.warn('terminal replay tests skipped: util-linux `script` is not installed');
if (!hasTmux) console.warn('tmux acceptance test skipped: tmux is not installed');

const counts = { checked: 0, sizes: [] as string[] };
afterAll(() => {
  if (counts.sizes.length) console.log(`terminal display: ${counts.checked} messages fully visible at ${counts.sizes.join(', ')}`);
});

interface Message {
  sender: string;
  content: string;
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

function transcript(out: string): Message[] {
  const [run] = readdirSync(out);
  return readFileSync(join(out, run!, 'transcript.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Message);
}

/** The debate run under a pseudo-terminal of the given size: the exact bytes written, and its transcript. */
async function runInPty(cols: number, rows: number, env: Record<string, string> = {}): Promise<{ bytes: Buffer; messages: Message[] }> {
  const out = mkdtempSync(join(tmpdir(), 'sop-term-'));
  const r = await execAsync('script', ['-qfec', `stty cols ${cols} rows ${rows}; ${process.execPath} ${RUN} --out ${out}`, '/dev/null'], {
    env: { ...process.env, NO_COLOR: '', ...env },
    stdin: 'ignore',
    encoding: 'buffer',
    timeout: 60_000,
  });
  expect(r.status, r.stderr.toString()).toBe(0);
  return { bytes: r.stdout, messages: transcript(out) };
}

/** What the emulator shows after the bytes, scrollback included, wrapped rows joined back into their lines. */
async function screenText(bytes: Buffer | string, cols: number, rows: number): Promise<string[]> {
  const term = new Terminal({ cols, rows, scrollback: 100_000, allowProposedApi: true });
  await new Promise<void>((resolve) => term.write(bytes, resolve));
  const buf = term.buffer.active;
  const lines: string[] = [];
  for (let y = 0; y < buf.length; y++) {
    const line = buf.getLine(y)!;
    const next = buf.getLine(y + 1);
    const text = line.translateToString(!next?.isWrapped); // keep a space that ends a wrapped row
    if (line.isWrapped && lines.length) lines[lines.length - 1] += text;
    else lines.push(text);
  }
  term.dispose();
  return lines;
}

/** Rows the terminal wrapped itself (text reaching the last column), as the row and the start of the next. */
async function wraps(bytes: Buffer | string, cols: number): Promise<string[]> {
  const term = new Terminal({ cols, rows: 24, scrollback: 100_000, allowProposedApi: true });
  await new Promise<void>((resolve) => term.write(bytes, resolve));
  const buf = term.buffer.active;
  const out: string[] = [];
  for (let y = 1; y < buf.length; y++)
    if (buf.getLine(y)!.isWrapped) out.push(`${buf.getLine(y - 1)!.translateToString()}|${buf.getLine(y)!.translateToString(true)}`);
  term.dispose();
  return out;
}

const STATUS = /\[\w+\] turn \d+ · /;

describe.skipIf(!hasScript)(`the debate run replayed through a terminal emulator${hasScript ? '' : ' (skipped: no `script`)'}`, () => {
  for (const [cols, rows] of [
    [80, 24],
    [120, 24],
    [200, 50],
  ] as const) {
    it(`shows every message whole at ${cols}x${rows}, with no status line left over`, async () => {
      const { bytes, messages } = await runInPty(cols, rows);
      expect(messages.length).toBeGreaterThan(10);
      const lines = await screenText(bytes, cols, rows);
      const shown = squash(lines.join('\n'));
      for (const m of messages) expect(shown, `${m.sender}'s message`).toContain(squash(m.content));
      // Each message is a paragraph of its own, starting with its speaker, nothing glued after it.
      const paragraphs = lines.join('\n').split(/\n\s*\n/);
      for (const m of messages) {
        const paragraph = paragraphs.find((l) => squash(l).includes(squash(m.content)))!;
        expect(squash(paragraph).endsWith(squash(m.content)), paragraph).toBe(true);
        expect(paragraph.startsWith(`${m.sender} (`), paragraph).toBe(true);
      }
      // Lines are wrapped at word boundaries by the display, never by the terminal in a word.
      expect(await wraps(bytes, cols), 'rows the terminal wrapped').toEqual([]);
      expect(lines.filter((l) => STATUS.test(l))).toEqual([]);
      // Colours: each agent's label in its own colour.
      const text = bytes.toString('utf8');
      expect(text).toContain(`\x1b[${agentColour('Ada')}mAda (`);
      expect(text).toContain(`\x1b[${agentColour('Judge Ruth')}mJudge Ruth (`);
      counts.checked += messages.length;
      counts.sizes.push(`${cols}x${rows}`);
    });
  }

  it('writes no escape sequence at all with NO_COLOR set, and still shows every message', async () => {
    const { bytes, messages } = await runInPty(80, 24, { NO_COLOR: '1' });
    expect(bytes.includes(0x1b)).toBe(false);
    const shown = squash((await screenText(bytes, 80, 24)).join('\n'));
    for (const m of messages) expect(shown).toContain(squash(m.content));
  });
});

describe.skipIf(!hasScript)(`replies streamed in small pieces${hasScript ? '' : ' (skipped: no `script`)'}`, () => {
  it('are shown whole at 80x24 while the status line updates between them', async () => {
    const long = (i: number) =>
      `Reply ${i}: ` +
      'the centre needs space for people, buses and deliveries, and the evidence is mixed but telling. '.repeat(2 + (i % 3));
    const server = await startOpenAiServer({ reply: (b, i) => (b.stream ? long(i) : '<end>0</end>') });
    try {
      const out = mkdtempSync(join(tmpdir(), 'sop-term-'));
      const cmd = `stty cols 80 rows 24; ${process.execPath} ${CLI} run examples/debate/debate.sop.json --llm openai --base-url ${server.url} --max-turns 6 --input topic=cars --out ${out}`;
      const child = spawn('script', ['-qfec', cmd, '/dev/null'], {
        env: { ...process.env, NO_COLOR: '', OPENAI_API_KEY: 'test-key' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const chunks: Buffer[] = [];
      child.stdout.on('data', (c: Buffer) => chunks.push(c));
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
      const bytes = Buffer.concat(chunks);
      expect(code, bytes.toString()).toBe(0);
      const messages = transcript(out);
      expect(messages.filter((m) => m.content.startsWith('Reply ')).length).toBeGreaterThanOrEqual(4);
      const lines = await screenText(bytes, 80, 24);
      const shown = squash(lines.join('\n'));
      for (const m of messages) expect(shown, `${m.sender}'s message`).toContain(squash(m.content));
      expect(lines.filter((l) => STATUS.test(l))).toEqual([]);
      expect(await wraps(bytes, 80), 'rows the terminal wrapped').toEqual([]);
      counts.checked += messages.length;
      counts.sizes.push('80x24 (streamed in 7-character pieces)');
    } finally {
      await server.close();
    }
  });
});

describe('the debate run on a pipe', () => {
  it('is plain text: no escape sequence, no status line', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sop-term-'));
    const r = await execAsync(process.execPath, [...RUN.split(' '), '--out', out], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toContain('\x1b');
    expect(r.stderr).not.toMatch(STATUS);
    for (const m of transcript(out)) expect(r.stdout).toContain(`${m.sender} (`);
  });
});

describe.skipIf(!hasTmux)(`a tmux session${hasTmux ? '' : ' (skipped: tmux is not installed)'}`, () => {
  it.each([80, 120, 200])('of %ix24 keeps the last 40 characters of every message in its joined scrollback', async (cols) => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-tmux-'));
    const out = join(dir, 'runs');
    const conf = join(dir, 'tmux.conf');
    writeFileSync(conf, 'set -g history-limit 100000\nset -g remain-on-exit on\n');
    const socket = `sop-test-${process.pid}-${cols}`;
    const tmux = (...args: string[]) => execAsync('tmux', ['-L', socket, '-f', conf, ...args], { encoding: 'utf8', timeout: 60_000 });
    try {
      const cmd = `${process.execPath} ${RUN} --out ${out}; tmux -L ${socket} wait-for -S sop-done`;
      const started = await tmux('new-session', '-d', '-s', 'sop', '-x', String(cols), '-y', '24', cmd);
      expect(started.status, started.stderr).toBe(0);
      expect((await tmux('wait-for', 'sop-done')).status).toBe(0); // the run has ended
      const captured = await tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'sop');
      expect(captured.status, captured.stderr).toBe(0);
      const shown = squash(captured.stdout);
      const messages = transcript(out);
      expect(messages.length).toBeGreaterThan(10);
      for (const m of messages) expect(shown, `${m.sender}'s message`).toContain(squash(m.content.slice(-40)));
      expect(captured.stdout).not.toMatch(STATUS);
      counts.checked += messages.length;
      counts.sizes.push(`tmux ${cols}x24`);
    } finally {
      await tmux('kill-server');
    }
  });
});

describe.skipIf(!hasTmux)(`the werewolf replay in tmux at 80 columns${hasTmux ? '' : ' (skipped: tmux is not installed)'}`, () => {
  it('marks private messages as transcript.md does, streamed or not, says for whom each summary is, and wraps between words', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sop-tmux-'));
    const out = join(dir, 'runs');
    const conf = join(dir, 'tmux.conf');
    writeFileSync(conf, 'set -g history-limit 100000\nset -g remain-on-exit on\n');
    const socket = `sop-test-${process.pid}-werewolf`;
    const tmux = (...args: string[]) => execAsync('tmux', ['-L', socket, '-f', conf, ...args], { encoding: 'utf8', timeout: 60_000 });
    try {
      const run = `${CLI} run examples/werewolf/werewolf.sop.json --llm replay:examples/werewolf/werewolf.cassette.json`;
      const cmd = `NO_COLOR= ${process.execPath} ${run} --out ${out}; tmux -L ${socket} wait-for -S sop-done`;
      expect((await tmux('new-session', '-d', '-s', 'sop', '-x', '80', '-y', '24', cmd)).status).toBe(0);
      expect((await tmux('wait-for', 'sop-done')).status).toBe(0);
      const rows = (await tmux('capture-pane', '-p', '-S', '-', '-t', 'sop')).stdout;
      const joined = (await tmux('capture-pane', '-p', '-J', '-S', '-', '-t', 'sop')).stdout;
      // No row was wrapped by the terminal: every line break is the display's, between words.
      // (tmux's own "Pane is dead" line, once the shell has ended, may come between the two captures)
      const nonBlank = (text: string) => text.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('Pane is dead'));
      expect(nonBlank(joined)).toEqual(nonBlank(rows));
      const paragraphs = rows.split(/\n\s*\n/).map(squash);
      // Every message as transcript.md heads it: `**Ann** (Wolf A), turn 2 [to wolves]:`.
      const [run1] = readdirSync(out);
      const md = readFileSync(join(out, run1!, 'transcript.md'), 'utf8');
      const heads = [...md.matchAll(/^\*\*(.+?)\*\* \((.+?)\), turn \d+( \[to [^\]]+\])?:\n\n(.+)$/gm)];
      expect(heads.length).toBe(25);
      for (const [, sender, role, mark, content] of heads) {
        const head = `${sender} (${role})${mark ?? ''}:`;
        const shown = paragraphs.find((p) => p.includes(squash(content!).replace(/<(\w+)>(.*?)<\/\1>/g, '$1: $2')));
        expect(shown, head).toBeDefined();
        expect(shown!.startsWith(head), `${shown} should start with ${head}`).toBe(true);
      }
      expect(paragraphs).toContain("Ann (Wolf A) [to wolves]: Dee watches everyone too closely. Let's take her tonight. kill: Dee");
      expect(paragraphs).toContain('Mo (Narrator) [to Cy]: Ann is a werewolf.'); // a streamed reply addressed with <to>Cy</to>
      // One summary line per viewer group, each saying for whom.
      for (const group of ['Dee, Eli, Fay', 'Mo', 'Ann, Bo', 'Cy'])
        expect(paragraphs.filter((p) => p === `(summary for ${group} after 10 messages)`)).toHaveLength(1);
      counts.checked += heads.length;
      counts.sizes.push('tmux 80x24 (werewolf)');
    } finally {
      await tmux('kill-server');
    }
  });
});

/** A stream that says it is a terminal of the given width, collecting the bytes written. */
function fakeTerminal(columns: number) {
  const chunks: string[] = [];
  const stream = {
    isTTY: true,
    columns,
    write: (s: string) => {
      chunks.push(s);
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, chunks };
}

describe('the display on a fake terminal', () => {
  it('never draws the status line beside a streaming reply, and erases it before message text', async () => {
    // stdout and stderr are the same terminal: their bytes interleave in one list.
    const chunks: string[] = [];
    const out = fakeTerminal(60);
    const err = fakeTerminal(60);
    out.chunks.push = err.chunks.push = (...s: string[]) => chunks.push(...s);
    const show = terminalDisplay({ out: out.stream, err: err.stream, quiet: false, redact: (s) => s, env: {} });
    const usage = { promptTokens: 100, completionTokens: 20 };
    const reply = '<verdict>The affirmative wins, narrowly, on evidence that went unchallenged.</verdict>';
    show({ type: 'state_entered', state: 'verdict', turn: 1, reason: 'root' });
    show({ type: 'speaker_chosen', state: 'verdict', agent: 'Judge', role: 'Judge', turn: 1, how: 'order' });
    const statusAt = chunks.length;
    expect(chunks.join('')).toMatch(/\[verdict\] turn 1 · Judge \(Judge\) · 0 tokens/);
    for (let i = 0; i < reply.length; i += 3) {
      show({ type: 'delta', agent: 'Judge', text: reply.slice(i, i + 3) });
      show({ type: 'llm_call', usage } as unknown as RunEvent); // status updates arrive mid-stream
    }
    // Nothing drawn on the status row while the reply is unterminated.
    const during = chunks.slice(statusAt).join('');
    expect(during).not.toMatch(/tokens/);
    show({
      type: 'message',
      message: { id: 0, turn: 1, state: 'verdict', sender: 'Judge', role: 'Judge', content: 'x', kind: 'speech', timestamp: '' },
    });
    show({ type: 'llm_call', usage } as unknown as RunEvent);
    show({ type: 'run_finished' } as unknown as RunEvent);

    const shown = squash((await screenText(chunks.join('').replace(/\n/g, '\r\n'), 60, 6)).join('\n'));
    expect(shown).toContain('Judge (Judge): verdict: The affirmative wins, narrowly, on evidence that went unchallenged.');
    expect(shown).not.toContain('<');
    expect(shown).not.toMatch(/tokens/); // the last status line was erased at the end
    // The status line came back only after the message's line ended.
    const after = chunks.join('').split('unchallenged.')[1]!;
    expect(after.indexOf('\n')).toBeLessThan(after.indexOf('tokens'));
  });

  it('erases the status line before an effect (code, a question to a person) can write to the terminal', () => {
    const out = fakeTerminal(80);
    const err = fakeTerminal(80);
    const show = terminalDisplay({ out: out.stream, err: err.stream, quiet: false, redact: (s) => s, env: {} });
    show({ type: 'speaker_chosen', state: 's', agent: 'Ann', role: 'Human', turn: 3, how: 'order' });
    expect(err.chunks.join('')).toContain('turn 3');
    const before = err.chunks.length;
    show({ type: 'effect_started', key: 'k', kind: 'human', label: 'Ann@s', turn: 3 });
    expect(err.chunks.slice(before).join('')).toBe('\r\x1b[2K');
    const inner = err.chunks.length;
    show({
      type: 'subflow',
      flow: 'Coder-1',
      event: { type: 'llm_call', usage: { promptTokens: 1, completionTokens: 1 } } as unknown as RunEvent,
    });
    show({ type: 'subflow', flow: 'Coder-1', event: { type: 'effect_started', key: 'k2', kind: 'code', label: 'run_code@s', turn: 1 } });
    const drawn = err.chunks.slice(inner).join('');
    expect(drawn).toContain('tokens');
    expect(drawn.endsWith('\r\x1b[2K')).toBe(true);
  });

  it('cuts the status line to one row, so erasing it erases all of it', () => {
    const out = fakeTerminal(20);
    const err = fakeTerminal(20);
    const show = terminalDisplay({ out: out.stream, err: err.stream, quiet: false, redact: (s) => s, env: {} });
    show({ type: 'speaker_chosen', state: 'a_long_state_name', agent: 'Somebody', role: 'Role', turn: 7, how: 'order' });
    // eslint-disable-next-line no-control-regex -- strips the status line's dim colour
    const drawn = err.chunks.join('').replace(/\x1b\[\d+m/g, '');
    expect(drawn.length).toBeLessThanOrEqual(19);
  });

  it('is plain with NO_COLOR set to anything, and colours each agent the same way every time', () => {
    const out = fakeTerminal(80);
    const err = fakeTerminal(80);
    const show = terminalDisplay({ out: out.stream, err: err.stream, quiet: false, redact: (s) => s, env: { NO_COLOR: 'yes' } });
    show({ type: 'state_entered', state: 's', turn: 1, reason: 'root' });
    show({ type: 'speaker_chosen', state: 's', agent: 'Ann', role: 'R', turn: 1, how: 'order' });
    show({ type: 'delta', agent: 'Ann', text: '<answer>42</answer>' });
    show({
      type: 'message',
      message: { id: 0, turn: 1, state: 's', sender: 'Ann', role: 'R', content: '42', kind: 'speech', timestamp: '' },
    });
    expect(out.chunks.join('') + err.chunks.join('')).not.toContain('\x1b');
    expect(out.chunks.join('')).toContain('Ann (R): answer: 42\n');
    show({
      type: 'message',
      message: { id: 1, turn: 1, state: 's', sender: 'run_code', role: 'code', content: 'stdout:\n<html>', kind: 'action', timestamp: '' },
    });
    expect(out.chunks.join('')).toContain('run_code (code): stdout: <html>'); // code output is not an agent's tags
    expect(agentColour('Ann')).toBe(agentColour('Ann'));
    expect(new Set(['Ada', 'Ben', 'Chloe', 'Dev', 'Judge Ruth'].map(agentColour)).size).toBeGreaterThan(3);
  });
});

describe('output tags', () => {
  it('are shown as a label and their content, also when split across streamed pieces', () => {
    expect(labelTags('<verdict>Yes.</verdict>')).toBe('verdict: Yes.');
    expect(labelTags('a < b and c > d')).toBe('a < b and c > d');
    const t = new TagLabeller();
    const pieces = ['<ver', 'dict', '>The ', 'affirmative wins.</', 'verdict', '>', ' 3 < 4'];
    expect(pieces.map((p) => t.push(p)).join('') + t.flush()).toBe('verdict: The affirmative wins. 3 < 4');
  });
});
