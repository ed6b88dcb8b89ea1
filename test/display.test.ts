// What a person reads in the terminal: commands briefly instead of their JSON, command results on
// one line, streamed speech as it comes, and `--quiet` as one closing line.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeCommand, parseCommandMessage, summariseResult } from '../src/apps/cli/command-summary.js';
import { terminalDisplay } from '../src/apps/cli/display.js';
import { AudienceRules } from '../src/core/environment/audience.js';
import { loadSop } from '../src/index.js';
import type { Message } from '../src/core/environment/message.js';
import type { RunEvent } from '../src/core/runtime/events.js';
import { spawnCliAsync } from './helpers/cli.js';

function fakeStream(isTTY: boolean) {
  const chunks: string[] = [];
  return {
    stream: {
      isTTY,
      write: (s: string) => {
        chunks.push(s);
        return true;
      },
    } as unknown as NodeJS.WriteStream,
    text: () => chunks.join(''),
  };
}

function display(tty: boolean) {
  const out = fakeStream(tty);
  const err = fakeStream(false);
  const show = terminalDisplay({ out: out.stream, err: err.stream, quiet: false, redact: (s) => s });
  return { show, out, err };
}

const msg = (m: Partial<Message>): RunEvent => ({
  type: 'message',
  message: { id: 0, turn: 1, state: 'execute', sender: 'Coder', role: 'Controller', content: '', kind: 'speech', timestamp: '', ...m },
});

const CODE = 'import csv\n' + Array.from({ length: 11 }, (_, i) => `x${i} = ${i}`).join('\n');
const RUN_CODE = JSON.stringify({ command: 'run_code', command_args: { language: 'python', code: CODE } });

describe('commands in the terminal', () => {
  it('describes a command by name and brief arguments', () => {
    expect(describeCommand(parseCommandMessage(RUN_CODE)!)).toBe('▸ run_code python, 12 lines');
    expect(describeCommand(parseCommandMessage('{"command":"write_memory","command_args":{"name":"plan"}}')!)).toBe('▸ write_memory plan');
    expect(describeCommand(parseCommandMessage('{"command":"finish","command_args":{}}')!)).toBe('▸ finish');
    expect(
      describeCommand(
        parseCommandMessage(
          JSON.stringify({ command: 'ask_user', command_args: { question: 'Which of the three columns should the report show first?' } }),
        )!,
      ),
    ).toBe('▸ ask_user "Which of the three columns should the r…"');
    expect(parseCommandMessage('I think {"command"} is a word')).toBeUndefined();
    expect(parseCommandMessage('{"command": 3}')).toBeUndefined();
  });

  it('summarises a result on one line, saying how many lines follow', () => {
    expect(summariseResult('The python code ran: exit code 0.\nstdout:\n1\n2\n')).toBe('The python code ran: exit code 0. (+3 lines)');
    expect(summariseResult('Coder finished. Its result:\nreport.md is written.')).toBe('Coder finished. Its result: report.md is written.');
    expect(summariseResult('')).toBe('(no output)');
    expect(summariseResult('x'.repeat(300))).toHaveLength(100);
  });

  it('shows a command and its result readably, never the JSON', () => {
    const { show, out } = display(false);
    show(msg({ content: RUN_CODE }));
    show(msg({ sender: 'run_code', role: 'code', kind: 'action', content: 'The python code ran: exit code 0.\nstdout:\nmean 4.5\nmax 9' }));
    show({
      type: 'subflow',
      flow: 'Coder-1',
      event: msg({ content: '{"command":"write_memory","command_args":{"name":"plan","content":"1. a\\n2. b"}}' }),
    });
    const text = out.text();
    expect(text).toContain('Coder (Controller): ▸ run_code python, 12 lines\n');
    expect(text).toContain('run_code (code): The python code ran: exit code 0. (+3 lines)\n');
    expect(text).toContain('[Coder-1] Coder (Controller): ▸ write_memory plan, 2 lines\n');
    expect(text).not.toContain('command_args');
    expect(text).not.toContain('x3 = 3');
  });

  it('on a terminal, holds back a streamed command and shows it readably; streams speech as it comes', () => {
    const { show, out } = display(true);
    show({ type: 'speaker_chosen', state: 'execute', agent: 'Coder', role: 'Controller', turn: 1, how: 'order' });
    for (const piece of ['  ', RUN_CODE.slice(0, 10), RUN_CODE.slice(10)]) show({ type: 'delta', agent: 'Coder', text: piece });
    expect(out.text()).not.toContain('"command"');
    show(msg({ content: RUN_CODE }));
    expect(out.text()).toContain('▸ run_code python, 12 lines');

    show({ type: 'speaker_chosen', state: 'execute', agent: 'Ann', role: 'Pro', turn: 2, how: 'order' });
    show({ type: 'delta', agent: 'Ann', text: 'Remote work ' });
    expect(out.text()).toContain('Remote work'); // streamed as it comes, word by word
    show({ type: 'delta', agent: 'Ann', text: 'wins.' });
    show(msg({ sender: 'Ann', role: 'Pro', content: 'Remote work wins.' }));
    expect(out.text().match(/Remote work/g)).toHaveLength(1); // streamed once, not printed again
  });
});

describe('a streamed reply on a terminal', () => {
  const sop = loadSop('examples/werewolf/werewolf.sop.json');
  const audiences = new AudienceRules(sop);
  function streamed(agent: string, role: string, state: string, pieces: string[], recorded: Partial<Message>): string {
    const out = fakeStream(true);
    const show = terminalDisplay({
      out: out.stream,
      err: fakeStream(false).stream,
      quiet: false,
      redact: (s) => s,
      env: { NO_COLOR: '1' },
      audiences,
    });
    show({ type: 'speaker_chosen', state, agent, role, turn: 1, how: 'order' });
    for (const text of pieces) show({ type: 'delta', agent, text });
    show(msg({ sender: agent, role, state, ...recorded }));
    return out.text();
  }

  it("starts with the role's audience mark", () => {
    const text = streamed('Ann', 'Wolf A', 'night1', ['Dee ', 'it is. <ki', 'll>Dee</kill>'], {
      content: 'Dee it is. <kill>Dee</kill>',
      to: 'wolves',
      audience: ['Ann', 'Bo', 'Mo'],
    });
    expect(text).toBe('\nAnn (Wolf A) [to wolves]: Dee it is. kill: Dee\n');
  });

  it('reads a leading <to> tag before it starts, and drops the "Name:" the message drops', () => {
    const text = streamed('Mo', 'Narrator', 'vision1', ['Mo', ': <t', 'o>Cy</to> Ann is ', 'a werewolf.'], {
      content: 'Ann is a werewolf.',
      to: 'Cy',
      audience: ['Cy', 'Mo'],
    });
    expect(text).toBe('\nMo (Narrator) [to Cy]: Ann is a werewolf.\n');
  });

  it('holds a reply back whole when a <to> tag may come later, and shows the message as recorded', () => {
    const text = streamed('Mo', 'Narrator', 'vision1', ['Ann is a werewolf. ', '<to>Cy</to>'], {
      content: 'Ann is a werewolf.',
      to: 'Cy',
      audience: ['Cy', 'Mo'],
    });
    expect(text).toBe('\nMo (Narrator) [to Cy]: Ann is a werewolf.\n');
  });

  it("keeps a name that only starts like the speaker's", () => {
    const text = streamed('Mo', 'Narrator', 'day1', ['Mo', 're votes tomorrow.'], { content: 'More votes tomorrow.' });
    expect(text).toBe('\nMo (Narrator): More votes tomorrow.\n');
  });
});

describe('sop run --quiet', () => {
  it('prints one line: the outcome, usage and run folder', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sop-quiet-'));
    const r = await spawnCliAsync(['run', 'examples/debate/debate.sop.json', '--llm', 'mock', '--quiet', '--out', out], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    expect(r.stderr).toMatch(
      /^Finished in state "end" after \d+ turns; \d+ LLM calls, \d+ prompt \+ \d+ completion tokens\. Run folder: .*debate-\w+\n$/,
    );
  });

  it('without --quiet, labels the prompt-size figures it closes with', async () => {
    const out = mkdtempSync(join(tmpdir(), 'sop-quiet-'));
    const r = await spawnCliAsync(['run', 'examples/debate/debate.sop.json', '--llm', 'mock', '--out', out], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /\nPrompt size of the speaking agent in tokens, sampled at turn 10: \d+ \(usage\.json: agent_prompt_tokens_at_turn\)\.\n/,
    );
    expect(r.stderr).not.toMatch(/Agent prompt tokens at turn/);
  });
});

describe('the adaptive limit in the terminal', () => {
  it('shows a change of the calls at once to a server as one line on stderr, none with --quiet', () => {
    const e: RunEvent = {
      type: 'concurrency',
      endpoint: 'http://127.0.0.1:9/v1',
      limit: 256,
      previous: 512,
      reason: '429',
      in_flight: 300,
    };
    const { show, out, err } = display(false);
    show(e);
    expect(out.text()).toBe('');
    expect(err.text()).toBe('(256 LLM calls at once to http://127.0.0.1:9/v1, was 512: 429)\n');
    const quietErr = fakeStream(false);
    terminalDisplay({ out: fakeStream(false).stream, err: quietErr.stream, quiet: true, redact: (s) => s })(e);
    expect(quietErr.text()).toBe('');
  });
});
