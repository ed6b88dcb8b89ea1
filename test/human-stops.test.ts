// A person who stops answering (the --answers run out, Ctrl-D, the end of piped input) stops the
// run as interrupted, not failed: nothing went wrong, and `sop resume` goes on with more answers.
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { AnswerInterruptedError, NoMoreAnswersError, TerminalInput } from '../src/core/io/human.js';
import { runCli } from './helpers/cli.js';

const SOP = join(process.cwd(), 'examples/assistant/assistant.sop.json');
const root = mkdtempSync(join(tmpdir(), 'sop-human-stops-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('a person who stops answering', () => {
  it('at the terminal: a line is an answer, the end of the input is NoMoreAnswersError (resumable)', async () => {
    const input = new PassThrough();
    const human = new TerminalInput({ input, output: new PassThrough() });
    const q = { kind: 'turn' as const, agent: 'You', role: 'Traveller', state: 'chat', prompt: '' };
    const first = human.ask(q);
    input.write('museums, please\n');
    await expect(first).resolves.toBe('museums, please');
    const second = human.ask(q);
    input.end();
    const err = await second.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoMoreAnswersError);
    expect((err as NoMoreAnswersError).resumable).toBe(true);
    expect((err as Error).message).toBe('You (Traveller) stopped answering (Ctrl-D, or the end of the input)');
  });

  it('at the terminal: an answer of several lines starts with <<< and ends with a line EOF, pasted whole or typed', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (c: Buffer) => (shown += c.toString()));
    const human = new TerminalInput({ input, output });
    const q = { kind: 'question' as const, agent: 'You', role: 'User', state: 'plan', prompt: 'Any feedback?' };
    const pasted = human.ask(q);
    input.write('<<< Three changes:\n1. plot in blue\n\n2. label the axes\nEOF\n'); // one paste, an empty line in it
    await expect(pasted).resolves.toBe('Three changes:\n1. plot in blue\n\n2. label the axes');
    expect(shown).toContain('(an answer of several lines: start it with <<<, end it with a line EOF)');
    const typed = human.ask(q);
    for (const line of ['<<<', 'first', 'second', 'EOF']) input.write(`${line}\n`);
    await expect(typed).resolves.toBe('first\nsecond');
    const one = human.ask(q);
    input.write('just one line\n');
    await expect(one).resolves.toBe('just one line');
    expect(human.consumed).toBe(3);
    const unfinished = human.ask(q);
    input.write('<<<\nstarted\n');
    input.end(); // the input ends before EOF: the person stopped answering
    await expect(unfinished).rejects.toBeInstanceOf(NoMoreAnswersError);
  });

  it('at the terminal: two lines pasted without <<< are one answer, not a first line and a lost second', async () => {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (c: Buffer) => (shown += c.toString()));
    const human = new TerminalInput({ input, output });
    const q = { kind: 'question' as const, agent: 'You', role: 'User', state: 'plan', prompt: 'Any feedback?' };
    const pasted = human.ask(q);
    input.write('plot in blue\nand label the axes\n'); // one paste
    await expect(pasted).resolves.toBe('plot in blue\nand label the axes');
    expect(shown).toContain('(2 lines pasted: taken as one answer)');
    const next = human.ask(q);
    input.write('thanks\n');
    await expect(next).resolves.toBe('thanks'); // nothing of the paste is left over for the next question
  });

  it('at a terminal: Ctrl-C at a question goes back to the caller the first time, and stops the run the second', async () => {
    const input = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => undefined });
    const human = new TerminalInput({ input, output: new PassThrough() });
    const q = { kind: 'question' as const, agent: 'Coder Planner', role: 'Planner', state: 'plan', prompt: 'ok?' };
    const first = human.ask(q).catch((e: unknown) => e);
    input.write('\x03');
    const e1 = (await first) as AnswerInterruptedError;
    expect(e1).toBeInstanceOf(AnswerInterruptedError);
    expect(e1.toCaller).toBe(true);
    expect(e1.resumable).toBe(true);
    expect(e1.message).toBe("the user interrupted Coder Planner (Planner)'s question with Ctrl-C");
    const second = human.ask(q).catch((e: unknown) => e);
    input.write('\x03');
    expect(((await second) as AnswerInterruptedError).toCaller).toBe(false);
  });

  it('with --answers: the run stops as interrupted when they run out, and resumes with the answers to come', async () => {
    const none = join(root, 'none.json');
    const more = join(root, 'more.json');
    writeFileSync(none, '[]');
    writeFileSync(more, '["Food and walking, please."]');
    const out = join(root, 'runs');
    const first = await runCli(['run', SOP, '--llm', 'mock', '--answers', none, '--out', out]);
    expect(first.status, first.stderr).toBe(3); // stopped for a person (130 is Ctrl-C)
    expect(first.stderr).toMatch(/Interrupted after \d+ turns? \(answers file .*none\.json: no answer left for You \(Traveller\)/);
    expect(first.stderr).toMatch(/Resume with: sop resume /);
    const dir = join(out, readdirSync(out)[0]!);
    const finished = readFileSync(join(dir, 'journal.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; status?: string })
      .filter((e) => e.type === 'run_finished');
    expect(finished.map((e) => e.status)).toEqual(['interrupted']);

    const resumed = await runCli(['resume', dir, '--answers', more]);
    expect(resumed.status, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/Finished in state "done"/);
  }, 60_000);
});
